#!/usr/bin/env bash
# The real third-party MCP servers and toolchains the end-to-end tests run, pinned:
#   tests/node/          @modelcontextprotocol/sdk, @modelcontextprotocol/server-filesystem and
#                        typescript from npm (package-lock.json), for the TypeScript and npx tests;
#                        @octokit/graphql-schema, GitHub's GraphQL schema the fake GitHub runs on;
#                        mermaid (with jsdom), whose own parser checks the charts in PR comments;
#   tests/.wheels/       mcp-server-time from PyPI and its dependencies, for the tests whose server
#                        setup installs it into the server's own environment (uv, offline);
#   tests/.excel/       excel-mcp-server from PyPI in its own virtualenv: a real 46-tool server, the
#                        scale a real surface has (lint, the comment and the console at 40+ tools);
#   tests/.clients/      Claude Code, Codex, Gemini CLI and Copilot CLI from npm (@anthropic-ai/claude-code,
#                        @openai/codex, @google/gemini-cli, @github/copilot, pinned),
#                        in <client>/<version>/: the real clients toolselect drives against the fake
#                        model API (--clients-dir);
#   /usr/bin/chromium    Debian's chromium package (apt-get, with sudo when not root), the browser
#                        the HTML report's tests drive through Python's playwright (playwright's
#                        own browser download is not used);
#   dockerd, debootstrap Debian's docker.io and debootstrap: the container tests (tests/container/)
#                        build the Action's image on a stand-in base and run it as GitHub does.
# Idempotent: a second run checks and returns.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ ! -x "$here/node/node_modules/.bin/mcp-server-filesystem" ] \
    || [ ! -f "$here/node/node_modules/@octokit/graphql-schema/schema.json" ] \
    || [ ! -f "$here/node/node_modules/mermaid/package.json" ]; then
    npm ci --prefix "$here/node" --no-audit --no-fund --loglevel=error
fi
# the TypeScript test server's own lock: its `npm ci` in the tests then finds every package cached
if [ ! -f "$here/.npm-warm" ]; then
    warm="$(mktemp -d)"
    cp "$here/data/servers/ts/package.json" "$here/data/servers/ts/package-lock.json" "$warm/"
    npm ci --prefix "$warm" --no-audit --no-fund --loglevel=error --ignore-scripts
    rm -rf "$warm"
    touch "$here/.npm-warm"
fi
if ! ls "$here/.wheels"/mcp_server_time-*.whl >/dev/null 2>&1; then
    python -m pip download --quiet --dest "$here/.wheels" -r "$here/servers-requirements.txt"
fi
if [ ! -x "$here/.excel/bin/excel-mcp-server" ]; then
    python3 -m venv "$here/.excel"
    "$here/.excel/bin/python" -m pip install --quiet --disable-pip-version-check excel-mcp-server==2.2.2
fi
# each version in a folder of its own, as `toolselect clients install` lays them out
client() { # name, npm package, version, program
    local dir="$here/.clients/$1/$3"
    if [ ! -x "$dir/node_modules/.bin/$4" ]; then
        mkdir -p "$dir"
        echo '{"name": "toolselect-client", "private": true}' > "$dir/package.json"
        npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$2@$3"
    fi
}
client claude-code @anthropic-ai/claude-code 2.1.332 claude
client codex @openai/codex 0.171.0 codex
client gemini-cli @google/gemini-cli 0.61.0 gemini
client copilot-cli @github/copilot 1.0.102 copilot
client opencode opencode-ai 1.18.33 opencode
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v dockerd >/dev/null || [ -x /usr/sbin/dockerd ] || missing+=(docker.io)  # a runner's docker-ce counts
[ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
