"""A driven client's network: toolselect's endpoint and nothing else, where the machine allows it.

The client is started through this module's relay (`python -m toolselect.drive.netns SOCKET PORT --
PROGRAM…`): the relay enters a network namespace of its own (as root; otherwise with a user namespace
that maps only its own user, where the kernel allows unprivileged ones), where loopback is the only
interface, listens there on 127.0.0.1:PORT — the port of the client's endpoint URL, which so stays as
it is — and passes each connection to the endpoint's Unix socket (a file: it reaches across network
namespaces). Then it starts the client and exits with its status. The client, its MCP server and
whatever they start can reach nothing else: no host, no other local port, no DNS.

Where no namespace can be made (a container without the capability, user namespaces off) the client
runs with the machine's network and its own traffic settings off (update checks, telemetry); the run
says so (`unavailable()`).
"""

from __future__ import annotations

import asyncio
import ctypes
import fcntl
import functools
import os
import socket
import struct
import subprocess
import sys
from collections.abc import Sequence

CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
PROBE = "--probe"


def relayed(argv: Sequence[str], socket_path: str, port: int) -> list[str]:
    """`argv` started inside a network namespace of its own, where 127.0.0.1:`port` is the endpoint."""
    return [sys.executable, "-m", __name__, socket_path, str(port), "--", *argv]


@functools.cache
def unavailable() -> str | None:
    """Why this machine can't give a client a network of its own (None: it can). Tried once per run,
    in a throwaway process."""
    if not sys.platform.startswith("linux"):
        return "not Linux"
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, PROBE], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"


def enter() -> None:
    """This process into a new network namespace with loopback up; raises OSError when the kernel refuses."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNET | (CLONE_NEWUSER if os.geteuid() != 0 else 0)
    if libc.unshare(flags) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"unshare: {os.strerror(number)}")
    if flags & CLONE_NEWUSER:  # the same user inside: the client runs as who started it
        for name, line in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(line)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sh22x", b"lo", 0)
        up = struct.unpack("16sh22x", fcntl.ioctl(s, SIOCGIFFLAGS, request))[1] | IFF_UP
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", up))


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass
    finally:
        writer.close()


async def _serve(listener: socket.socket, socket_path: str, argv: Sequence[str]) -> int:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))

    server = await asyncio.start_server(connection, sock=listener)
    proc = await asyncio.create_subprocess_exec(*argv)  # its stdin, stdout and stderr are the relay's
    code = await proc.wait()
    server.close()
    return code if code >= 0 else 128 - code


def main(args: Sequence[str]) -> int:
    if list(args) == [PROBE]:
        try:
            enter()
        except OSError as exc:
            print(f"no network namespace could be made: {exc.strerror or exc}", file=sys.stderr)
            return 1
        return 0
    socket_path, port, dashes, *argv = args
    if dashes != "--" or not argv:
        print("usage: python -m toolselect.drive.netns SOCKET PORT -- PROGRAM [ARG…]", file=sys.stderr)
        return 2
    try:
        enter()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(64)
    except OSError as exc:
        print(f"toolselect: the client's network could not be made: {exc}", file=sys.stderr)
        return 3
    return asyncio.run(_serve(listener, socket_path, argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
