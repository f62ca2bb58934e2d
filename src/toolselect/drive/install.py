"""Where the clients toolselect drives are installed, which version is there, and installing one from npm.

Each version has a folder of its own, `<clients dir>/<client>/<version>/node_modules`, so a run pinned
to one version (`--client claude-code@2.1.300`) and a run at the tested one share a clients folder (and
the Action's cache of it). A version is installed into a fresh folder beside its place and moved there
only when its program runs: a failed or half install is never found."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, InfraError, did_you_mean

VERSION = re.compile(r"^\d{1,4}\.\d{1,4}\.\d{1,6}(?:-[0-9A-Za-z.-]{1,40})?$")
DEFAULT_DIR = Path("~/.cache/toolselect/clients")


@dataclass(frozen=True)
class Kind:
    """A client toolselect can drive: its npm package, its program, the API it speaks, the version
    toolselect was tested with (the one installed unless another is pinned)."""

    name: str
    title: str
    package: str
    program: str  # node_modules/.bin/<program>
    api: str  # the provider that speaks its API (the first of `apis`)
    tested: str
    also: tuple[str, ...] = ()  # other providers it may be pointed at (Copilot CLI: Anthropic's or OpenAI's)
    unpacks: str | None = None  # the variable naming where it unpacks itself on its first start (done at install)

    @property
    def apis(self) -> tuple[str, ...]:
        return (self.api, *self.also)


KINDS = {
    "claude-code": Kind("claude-code", "Claude Code", "@anthropic-ai/claude-code", "claude", "anthropic", "2.1.332"),
    "codex": Kind("codex", "Codex", "@openai/codex", "codex", "openai-responses", "0.171.0"),
    "gemini-cli": Kind("gemini-cli", "Gemini CLI", "@google/gemini-cli", "gemini", "gemini", "0.61.0"),
    "opencode": Kind("opencode", "opencode", "opencode-ai", "opencode", "anthropic", "1.18.33", ("openai-responses",)),
    "copilot-cli": Kind(
        "copilot-cli",
        "Copilot CLI",
        "@github/copilot",
        "copilot",
        "anthropic",
        "1.0.102",
        ("openai-responses",),
        unpacks="COPILOT_PKG_CACHE_HOME",
    ),
}


def kind_of(name: str) -> Kind:
    if name not in KINDS:
        raise ConfigError(f"toolselect does not drive {name!r}{did_you_mean(name, tuple(KINDS))}")
    return KINDS[name]


def pinned(entry: str) -> tuple[str, str | None]:
    """`claude-code@2.1.300` → (claude-code, 2.1.300); a name without a version → (name, None)."""
    name, at, version = entry.partition("@")
    if not at:
        return name, None
    if not VERSION.match(version):
        raise ConfigError(
            f"{entry}: the version after @ is an npm version such as 2.1.332 (digits and dots)",
            hint=f"{name}@{KINDS[name].tested}" if name in KINDS else None,
        )
    return name, version


def folder_of(clients_dir: str | Path | None) -> Path:
    return (Path(clients_dir) if clients_dir else DEFAULT_DIR).expanduser().absolute()


def installed(kind: Kind, clients_dir: Path, version: str | None = None) -> tuple[Path, str] | None:
    """The installed program and its version: the pinned one, else the tested one, else the newest
    installed. None when there is none (or not that version)."""
    home = clients_dir / kind.name
    if version is not None:
        return _found(kind, home / version)
    here = _found(kind, home / kind.tested)
    if here is not None:
        return here
    versions = sorted((p for p in _listed(home) if VERSION.match(p.name)), key=lambda p: _order(p.name), reverse=True)
    return next((f for f in (_found(kind, p) for p in versions) if f is not None), None)


def install(kind: Kind, version: str | None, clients_dir: Path) -> tuple[Path, str]:
    """npm installs the package at `version` (the tested one by default) into its folder: the program
    and its version. A failure is one line and exit 3."""
    wanted = version or kind.tested
    npm = shutil.which("npm")
    if npm is None:
        raise InfraError(f"npm is not installed: toolselect installs {kind.name} with it", hint="install Node.js")
    home = clients_dir / kind.name
    home.mkdir(parents=True, exist_ok=True)
    target = home / wanted
    work = Path(tempfile.mkdtemp(prefix=f".{wanted}-", dir=home))
    try:
        (work / "package.json").write_text(json.dumps({"name": "toolselect-client", "private": True}), "utf-8")
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(work),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                f"{kind.package}@{wanted}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        found = _found(kind, work)
        if done.returncode or found is None or found[1] != wanted:
            said = (done.stderr or done.stdout).strip().splitlines()[-3:]
            why = " | ".join(said) or ("no program after install" if found is None else f"found {found[1]}")
            raise InfraError(f"npm could not install {kind.package}@{wanted}: {why}"[:600])
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
        if kind.unpacks:  # its first start unpacks it: done now, so whoever runs it later needs no write
            subprocess.run(
                [str(target / "node_modules" / ".bin" / kind.program), "--version"],
                env={
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": str(target),
                    kind.unpacks: str(unpacked(target)),
                },
                capture_output=True,
                check=False,
                timeout=300,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    found = _found(kind, target)
    if found is None:
        raise InfraError(f"{kind.name} {wanted} was installed into {target} but its program is not there")
    return found


def ensure(kind: Kind, version: str | None, clients_dir: Path) -> tuple[Path, str, bool]:
    """The pinned (or the tested) version installed, installing it when it is not: its program, its
    version, and whether it was installed now."""
    found = installed(kind, clients_dir, version or kind.tested)
    if found is not None:
        return (*found, False)
    return (*install(kind, version, clients_dir), True)


def unpacked(version_folder: Path) -> Path:
    """Where a client that unpacks itself keeps what it unpacked: beside its node_modules."""
    return version_folder / "unpacked"


def _found(kind: Kind, folder: Path) -> tuple[Path, str] | None:
    program = folder / "node_modules" / ".bin" / kind.program
    manifest = folder / "node_modules" / Path(*kind.package.split("/")) / "package.json"
    if not program.exists() or not manifest.is_file():
        return None
    try:
        version = str(json.loads(manifest.read_text(encoding="utf-8")).get("version", "?"))
    except (OSError, ValueError):
        return None
    return program, version


def _listed(home: Path) -> list[Path]:
    try:
        return [p for p in home.iterdir() if p.is_dir()]
    except OSError:
        return []


def _order(version: str) -> tuple[int, ...]:
    core = version.split("-", 1)[0]
    return tuple(int(n) for n in core.split("."))
