#!/usr/bin/env bash
# toolselect's own environment for `runner: host` (action.yml runs this; so can anyone):
#
#   host-env.sh key        write dir= and key= to $GITHUB_OUTPUT (or print them): where the
#                          environment lives and the actions/cache key that names its contents
#   host-env.sh install    make $TOOLSELECT_HOST_ENV a working environment, unless it already is
#                          (restored from the cache: a warm install takes well under a second)
#
# The environment is a virtualenv of the runner's python3 (3.11 or newer; tested on 3.11, and 3.12 is
# what ubuntu-24.04 runners have) holding exactly the packages of requirements.lock (hashes checked,
# wheels only, nothing resolved), with this action's src/ on its path. Nothing is added to the job's
# PATH or to its Python: later steps see no change. Linux and macOS runners.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${TOOLSELECT_HOST_PYTHON:-python3}"

case "${1:-}" in
key)
    if [ "${RUNNER_OS:-}" = Windows ]; then
        echo "::error title=toolselect::runner: host runs on Linux and macOS runners (servers are started with /bin/sh and stopped by process group); use a Linux runner" >&2
        exit 2
    fi
    if ! found="$("$python" -c 'import sys; assert sys.version_info >= (3, 11); print("%d.%d %s" % (*sys.version_info[:2], sys.base_prefix))' 2>/dev/null)"; then
        echo "::error title=toolselect::runner: host needs python3 3.11 or newer on the runner (found: $("$python" --version 2>&1 || echo none)); add actions/setup-python with python-version: '3.12' before this step" >&2
        exit 2
    fi
    version="${found%% *}"
    # the lock file, the project and the interpreter the environment is built from name its contents
    digest="$("$python" -c 'import hashlib, sys; print(hashlib.sha256(b"".join(open(p, "rb").read() for p in sys.argv[1:3]) + sys.argv[3].encode()).hexdigest()[:16])' "$here/requirements.lock" "$here/pyproject.toml" "$found")"
    # the job's own temporary folder: emptied before every job, so PR code of an earlier job on a
    # self-hosted runner can't leave a changed environment behind (actions/cache restores it)
    root="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
    dir="$root/toolselect-host/py$version-$digest"
    key="toolselect-host-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-py$version-$digest"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        printf 'dir=%s\nkey=%s\n' "$dir" "$key" >>"$GITHUB_OUTPUT"
    else
        printf 'dir=%s\nkey=%s\n' "$dir" "$key"
    fi
    ;;
install)
    dir="${TOOLSELECT_HOST_ENV:?set TOOLSELECT_HOST_ENV to the environment folder (host-env.sh key prints it)}"
    point_at_src() { # the environment runs this checkout of the action: its src/, not an installed copy
        local site
        site="$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || return 1
        [ -d "$site" ] || return 1
        printf '%s\n' "$here/src" >"$site/toolselect-action.pth"
    }
    if [ -x "$dir/bin/python" ] && point_at_src 2>/dev/null &&
        "$dir/bin/python" -c "import toolselect.cli, mcp, anthropic, openai, github, rich, jsonschema, yaml" 2>/dev/null; then
        echo "toolselect's environment is ready ($dir)"
        exit 0
    fi
    started=$SECONDS
    rm -rf "$dir"
    "$python" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --require-hashes --no-deps --only-binary=:all: -r "$here/requirements.lock"
    point_at_src
    "$dir/bin/python" -m toolselect --version
    echo "toolselect's environment installed in $((SECONDS - started)) s ($dir)"
    ;;
*)
    echo "usage: host-env.sh key | install" >&2
    exit 2
    ;;
esac
