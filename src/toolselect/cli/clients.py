"""`toolselect clients install NAME[@VERSION]`: a client toolselect drives, installed from npm into the
clients folder (`--clients-dir`), at the version toolselect was tested with unless told another.
`toolselect clients capture NAME[@VERSION]`: the installed client run against a recording endpoint,
and what it does to a server's tools written as its observed facts (drive/capture.py)."""

from __future__ import annotations

import argparse
import os
import sys

from ..drive.install import folder_of, install, installed, kind_of, pinned
from ..errors import EXIT_PASSED, InfraError


def cmd_clients(args: argparse.Namespace) -> int:
    name, version = pinned(args.client)
    kind = kind_of(name)
    folder = folder_of(args.clients_dir)
    if args.action == "capture":
        return _capture(kind.name, version, folder, args)
    program, found = install(kind, version, folder)
    print(f"{name} {found} installed: {program}" + ("" if found == kind.tested else f" (tested: {kind.tested})"))
    return EXIT_PASSED


def _capture(name: str, version: str | None, folder: object, args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..drive.capture import capture, write
    from ..drive.sample import DRIVERS, RUNS, Driven

    kind = kind_of(name)
    assert isinstance(folder, Path)
    found = installed(kind, folder, version)
    if found is None:
        at = f"@{version}" if version else ""
        raise InfraError(f"{name}{at} is not installed in {folder}", hint=f"toolselect clients install {name}{at}")
    program, found_version = found
    path = os.environ.get("PATH", "/usr/bin:/bin")
    model = DRIVERS[name].CAPTURE_MODEL
    driven = Driven(name, program, "probe", model, (), found_version, path, runs=folder.resolve() / RUNS)
    try:
        facts = capture(driven)
    except (RuntimeError, ValueError) as exc:
        raise InfraError(f"capturing {name} {found_version}: {exc}") from None
    text = write(facts, args.out)
    if args.out is None:
        sys.stdout.write(text)
    else:
        print(f"{name} {found_version}: facts written to {args.out}")
    return EXIT_PASSED
