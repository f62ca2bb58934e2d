"""Programs from the pull request: who they run as, what they inherit, and when they may start.

A config names programs — a server's `setup`, `start` and the server itself, the `command` picker,
the stress test's retriever and embeddings commands, a neighbour server — and every one of them is
code from the pull request (or from its base). Each is started with `command()` and
`child_environment()` from here:

- **as whom**: when toolselect is root (the Action's container), as the checkout's owner (the
  runner's user), never as root: `nobody` when the checkout is root's own; everywhere with no new
  privileges, so a setuid program (sudo, su) can't raise them (Linux, through util-linux's setpriv);
- **with what**: a small inherited environment plus what the config passes — never a key, a token,
  an `INPUT_*`, a `GITHUB_*` or a URL that carries a secret;
- **when**: in the Action, only within the one stretch that contains them (containment.py), which
  ends by stopping every one of them (sweep.py) before anything is given back.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .errors import InfraError, Refused
from .urls import holds_secret_url

Owner = tuple[int, int]  # uid, gid
NOBODY: Owner = (65534, 65534)
ENV = "/usr/bin/env"
IN_IMAGE = "TOOLSELECT_IMAGE"  # set in the Action's image
ACTION = "TOOLSELECT_ACTION"  # set by `toolselect action` for itself: the Action's boundary applies

# What the PR's programs inherit from toolselect's environment: the machine, the locale, the
# network, and the toolchains a server is built or started with (setup-node, setup-python, uv, …).
# fmt: off
INHERITED = frozenset((
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "CI",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "RUNNER_OS", "RUNNER_ARCH", "RUNNER_TOOL_CACHE", "AGENT_TOOLSDIRECTORY",
    "JAVA_HOME", "RUSTFLAGS", "DOCKER_HOST", "DOCKER_CONFIG", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
    "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS", "GOPRIVATE", "GONOSUMDB", "GOTOOLCHAIN",
    "NVM_DIR", "VOLTA_HOME", "PYENV_ROOT", "pythonLocation",
))
INHERITED_PREFIXES = (
    "LC_", "XDG_", "NODE_", "NPM_CONFIG_", "npm_config_", "YARN_", "PNPM_", "BUN_", "DENO_", "COREPACK_",
    "UV_", "PIP_", "PYTHON", "Python", "CARGO_", "RUSTUP_", "DOTNET_", "GRADLE_", "MAVEN_",
)
# fmt: on
# Never inherited, whatever the name or prefix above says: the keys and tokens of the run, and any
# value with a URL that shows more than `public_url` would (user info, a query, a key-like segment).
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|KEY|PRIVATE|CREDENTIAL|AUTH|SESSION|COOKIE", re.IGNORECASE)
DENIED_PREFIXES = ("GITHUB_", "ACTIONS_", "INPUT_", "ANTHROPIC_", "OPENAI_", "TOOLSELECT_", "TOOLPROOF_")


def secret(name: str, value: str) -> bool:
    """A variable no program from the pull request may see: by its name, or by a URL in its value."""
    return bool(SECRET_NAME.search(name)) or holds_secret_url(value)


PR_HOME = "TOOLSELECT_PR_HOME"  # a HOME of their own, where the job's HOME is held from them


def child_environment(extra: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a program from the pull request: the inherited few, then what the config
    passes (`extra`), which is theirs to give."""
    env = {
        name: value
        for name, value in environ.items()
        if (name in INHERITED or name.startswith(INHERITED_PREFIXES))
        and not name.startswith(DENIED_PREFIXES)
        and not secret(name, value)
    }
    if environ.get(PR_HOME):
        env["HOME"] = environ[PR_HOME]
    return env | dict(extra)


# ----------------------------------------------------------------------------------- as whom


@dataclass(frozen=True)
class Confinement:
    """How this process starts the PR's programs: as `owner` (None: as itself), through `setpriv`."""

    owner: Owner | None
    setpriv: str | None  # util-linux's setpriv; None where there is none (macOS)
    refusal: str | None = None  # why no program of the pull request may start at all
    freeze: bool = False  # they run as toolselect's own user, in the Action (runner: host)
    action: bool = False  # in the Action: only within `containment()`

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` as it is started: as the owner, with no new privileges, killed if toolselect dies.
        Refused while a credential the job persisted is where the program could read it, and in the
        Action outside the one stretch that contains them (a phase added outside it fails here, loudly,
        instead of running the pull request's code with nothing held)."""
        if self.refusal:
            raise Refused(self.refusal, hint=PERSISTED_HINT)
        if self.action and _stretch != "within":
            raise InfraError(
                f"toolselect was about to start a program of the pull request ({argv[0]}) "
                f"{'before' if _stretch == 'before' else 'after'} the stretch that contains them: refused",
                hint="this is a bug in toolselect: please report it with the step's log",
            )
        if self.freeze:
            from .frozen import freeze

            freeze()  # their user owns toolselect's files: from now on only unchanged code loads
        global _started
        _started = True
        if self.setpriv is None:
            if self.owner is not None:
                raise InfraError(
                    "toolselect runs as root and starts the pull request's programs as the checkout's owner "
                    f"(uid {self.owner[0]}) with setpriv, which is not installed",
                    hint="install util-linux (it has setpriv), or run toolselect as an unprivileged user",
                )
            return list(argv)
        user = [f"--reuid={self.owner[0]}", f"--regid={self.owner[1]}", "--clear-groups"] if self.owner else []
        # setpriv looks its program up while it still holds root's capabilities (they go at execve):
        # `env` is that program, and finds theirs with nothing but their own rights
        return [self.setpriv, *user, "--no-new-privs", "--pdeathsig=KILL", "--", ENV, "--", *argv]

    def user(self) -> str:
        """Who the PR's programs run as, in words."""
        if self.owner is None:
            return f"uid {os.getuid()} (toolselect's own user)" if hasattr(os, "getuid") else "toolselect's own user"
        if self.owner == NOBODY:
            return "nobody (uid 65534: the checkout is root's, and they never run as root)"
        return f"uid {self.owner[0]} (the checkout's owner)"

    def cannot_write(self, folder: Path) -> Path | None:
        """The folder (this one, or the first that exists above it) the PR's programs could not create
        files in; None when they can."""
        here = folder
        while not here.exists() and here.parent != here:
            here = here.parent
        if self.owner is None:  # as itself, with all its groups
            return None if os.access(here, os.W_OK | os.X_OK) else here
        try:
            st = here.stat()
        except OSError:
            return here
        uid, gid = self.owner  # setpriv clears the supplementary groups
        need = 0o300 if st.st_uid == uid else 0o030 if st.st_gid == gid else 0o003
        return None if st.st_mode & need == need else here


def unstartable(program: str, env: Mapping[str, str], cwd: Path) -> str | None:
    """Why `program` can't be started as a process started in `cwd` with `env` would find it (None:
    it can). Asked first, because setpriv in front of it would only say that it failed to execute."""
    path = str(cwd / program) if "/" in program else shutil.which(program, mode=os.F_OK, path=env.get("PATH"))
    if path is None or not os.path.exists(path):
        return "not found"
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        return "permission denied (not an executable file)"
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as exc:
        return exc.strerror or "cannot be read"
    if not magic.startswith(b"#!") and magic != b"\x7fELF" and magic[:4] not in MACHO:
        return "no #! line (a script needs one, or name its interpreter first)"
    return None


MACHO = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")  # macOS executables


_started = False  # a program of the pull request was started in this process
Stretch = Literal["before", "within", "after"]
_stretch: Stretch = "before"  # in the Action: where it is, against the stretch that contains them


def set_stretch(where: Stretch) -> None:
    """Where the Action is: "within" the stretch that contains the PR's programs (containment.py)
    they may start; "before" or "after" it, none may."""
    global _stretch
    _stretch = where


def programs_started() -> bool:
    """Whether a program of the pull request has been started here: from then on, nothing it could
    have written (a git hook, HOME's config) is trusted."""
    return _started


def confinement(environ: Mapping[str, str]) -> Confinement:
    """As root, the PR's programs run as whoever owns the checkout (the runner's user), or as nobody
    when that is root too and toolselect runs in its image; otherwise as toolselect itself. In the
    Action, none starts while the checkout's git config holds a credential (persist-credentials)."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    workspace = environ.get("GITHUB_WORKSPACE")
    action = bool(environ.get(ACTION))
    refusal = persisted(workspace) if workspace and action else None
    owner = owner_of_checkout(environ)
    return Confinement(owner, setpriv, refusal, freeze=action and owner is None, action=action)


PERSISTED_HINT = (
    "set `persist-credentials: false` on actions/checkout (toolselect fetches the base commit with its own "
    "github-token when it has to)"
)
CREDENTIAL_IN_URL = re.compile(r"://[^/@\s:]*:[^/@\s]+@")


@functools.cache
def persisted(workspace: str) -> str | None:
    """What a program of the pull request would read with `git config --list` in the checkout: the
    job's token, as actions/checkout persists it (an extraheader in .git/config, or since v6 in a file
    under RUNNER_TEMP that an includeIf brings in, for worktrees too), or a URL with a password. The
    config key, never its value; None when there is none (or no git)."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        proc = subprocess.run(
            [git, "-c", "safe.directory=*", "config", "--includes", "--list"],
            cwd=workspace, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    for line in proc.stdout.splitlines():
        key, _, value = line.partition("=")
        header = key.lower().startswith("http.") and key.lower().endswith(".extraheader")
        if (header and "authorization" in value.lower()) or CREDENTIAL_IN_URL.search(line):
            shown = CREDENTIAL_IN_URL.sub("://…@", key)
            return (
                f"the checkout's git config holds the job's token ({shown}, left by actions/checkout's "
                "persist-credentials), and the pull request's programs could read it with `git config --list`: "
                "toolselect starts none of them"
            )
    return None


def owner_of_checkout(environ: Mapping[str, str]) -> Owner | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    workspace = environ.get("GITHUB_WORKSPACE")
    try:
        st = os.stat(workspace) if workspace else None
    except OSError:
        st = None
    if st is not None and st.st_uid != 0:
        return st.st_uid, st.st_gid
    return NOBODY if environ.get(IN_IMAGE) else None
