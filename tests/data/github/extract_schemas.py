"""Regenerate openapi-schemas.json: the component schemas our fake GitHub server's responses must
match, taken from GitHub's published OpenAPI description (npm @octokit/openapi, MIT).

    npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz
    python extract_schemas.py package/generated/api.github.com.json
"""

import json
import sys

ROOTS = [
    "issue-comment",
    "simple-user",
    "basic-error",
    "pull-request-simple",
    "private-user",
    "public-user",
    "pull-request",
    "diff-entry",
    "pull-request-review",
    "pull-request-review-comment",
]
# The request bodies the fake checks what PyGithub sends against: "METHOD path" → JSON schema.
REQUESTS = [
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("patch", "/repos/{owner}/{repo}/pulls/comments/{comment_id}"),
]
EXAMPLES = ["pull-request"]  # whole responses the fake starts from (too many fields to write by hand)


def refs(node, found):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[-1])
            else:
                refs(value, found)
    elif isinstance(node, list):
        for value in node:
            refs(value, found)


def main(path):
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    schemas = spec["components"]["schemas"]
    keep, todo = set(), list(ROOTS)
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            found = set()
            refs(schemas[name], found)
            todo += sorted(found - keep)
    requests = {
        f"{method.upper()} {path}": spec["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
        for method, path in REQUESTS
    }
    examples = {name: spec["components"]["examples"][name]["value"] for name in EXAMPLES}
    out = {
        "source": f"@octokit/openapi {spec['info']['version']} generated/api.github.com.json (MIT)",
        "schemas": {name: schemas[name] for name in sorted(keep)},
        "requests": requests,
        "examples": examples,
    }
    with open("openapi-schemas.json", "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
