# The image behind the Action's eval step (action.yml runs it as docker://ghcr.io/…).
# GitHub runs it as root with HOME=/github/home and the workspace mounted at /github/workspace, so:
# no USER, no WORKDIR, git configured --system (a --global config in /root is never read), and an
# absolute exec-form ENTRYPOINT.
# BASE: the official image, pinned by digest. The container tests build a local stand-in where
# Docker Hub can't be reached (tests/container/); nothing else ever changes it.
ARG BASE=python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d
FROM ${BASE}

# PYTHONDONTWRITEBYTECODE: nothing run here writes __pycache__ into the checkout (toolselect's own
# bytecode is compiled at build time, below).
ENV PYTHONUNBUFFERED=1 \
    TOOLSELECT_IMAGE=1 \
    PYTHONDONTWRITEBYTECODE=1
# Build-only: set while the image is built, absent from the running container (and so from every
# server's environment); pip keeps no cache in a layer (--no-cache-dir).
ARG PIP_DISABLE_PIP_VERSION_CHECK=1

# git: the base commit is fetched and checked out in a worktree; the workspace belongs to another uid.
# tini: toolselect is not PID 1, so what a stopped server leaves behind is reaped, not a zombie.
# Not pinned to a Debian revision on purpose: the archive drops old revisions, and security updates
# are wanted.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git tini \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

# What servers need to start in the image (runner: container): Node.js with npm and npx (`npx -y
# @scope/server`, `node build/index.js`) from the npm registry, integrity checked; uv and uvx (`uvx
# some-mcp-server`, `uv run server.py`) from PyPI, hashes checked. The README says what they cost.
ARG TARGETARCH=amd64
COPY scripts/fetch-node.py /opt/toolselect/scripts/fetch-node.py
RUN python /opt/toolselect/scripts/fetch-node.py /usr/local "${TARGETARCH}" \
    && node --version && npx --version
COPY image-tools.lock /opt/toolselect/image-tools.lock
RUN pip install --no-cache-dir --require-hashes -r /opt/toolselect/image-tools.lock && uvx --version

# toolselect in a virtualenv of its own: the image's `python` stays a clean interpreter for the
# servers (`python server.py`, `pip install -r requirements.txt` in setup) and can't disturb it.
# Dependencies from the lock file (hashes checked), then the package itself without resolving again.
COPY requirements.lock /opt/toolselect/requirements.lock
RUN python -m venv /opt/toolselect/venv \
    && /opt/toolselect/venv/bin/pip install --no-cache-dir --require-hashes -r /opt/toolselect/requirements.lock

# The package itself is not built (a build would fetch its build backend, unpinned): the venv gets
# the source folder on its path, as runner: host does.
COPY pyproject.toml README.md LICENSE /opt/toolselect/
COPY src /opt/toolselect/src
COPY entrypoint.py /opt/toolselect/entrypoint.py
RUN /opt/toolselect/venv/bin/python -c 'import pathlib, sysconfig; \
pathlib.Path(sysconfig.get_paths()["purelib"], "toolselect.pth").write_text("/opt/toolselect/src\n")' \
    && /opt/toolselect/venv/bin/python -m compileall -q /opt/toolselect/src \
    && /opt/toolselect/venv/bin/python -m toolselect --version \
    && ! python -c "import mcp" 2>/dev/null

ENTRYPOINT ["/usr/bin/tini", "--", "/opt/toolselect/venv/bin/python", "/opt/toolselect/entrypoint.py"]
