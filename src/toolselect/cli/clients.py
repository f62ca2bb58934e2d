"""`toolselect clients install NAME[@VERSION]`: a client toolselect drives, installed from npm into the
clients folder (`--clients-dir`), at the version toolselect was tested with unless told another."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from ..drive.sample import DEFAULT_DIR, DRIVABLE
from ..errors import EXIT_PASSED, ConfigError, InfraError, did_you_mean


def cmd_clients(args: argparse.Namespace) -> int:
    name, _, version = args.client.partition("@")
    if name not in DRIVABLE:
        raise ConfigError(f"toolselect drives {', '.join(DRIVABLE)}: not {name!r}{did_you_mean(name, tuple(DRIVABLE))}")
    _, find, package, tested = DRIVABLE[name]
    folder = (Path(args.clients_dir) if args.clients_dir else DEFAULT_DIR).expanduser()
    npm = shutil.which("npm")
    if npm is None:
        raise InfraError("npm is not installed: toolselect installs clients with it", hint="install Node.js (with npm)")
    target = folder / name
    target.mkdir(parents=True, exist_ok=True)
    wanted = f"{package}@{version or tested}"
    done = subprocess.run(
        [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error", "--no-save", wanted],
        capture_output=True,
        text=True,
        check=False,
    )
    found = find(folder)
    if done.returncode or found is None:
        said = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise InfraError(
            f"npm could not install {wanted} into {target}: {' | '.join(said) or 'no program after install'}"
        )
    print(
        f"{name} {found[1]} installed: {found[0]}"
        + ("" if found[1] == tested else f" (toolselect was tested with {tested})")
    )
    return EXIT_PASSED
