"""`toolselect clients install NAME[@VERSION]`: a client toolselect drives, installed from npm into the
clients folder (`--clients-dir`), at the version toolselect was tested with unless told another."""

from __future__ import annotations

import argparse

from ..drive.install import folder_of, install, kind_of, pinned
from ..errors import EXIT_PASSED


def cmd_clients(args: argparse.Namespace) -> int:
    name, version = pinned(args.client)
    kind = kind_of(name)
    program, found = install(kind, version, folder_of(args.clients_dir))
    print(f"{name} {found} installed: {program}" + ("" if found == kind.tested else f" (tested: {kind.tested})"))
    return EXIT_PASSED
