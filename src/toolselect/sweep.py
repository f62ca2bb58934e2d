"""That no program of the pull request outlives its turn: `sweep()` stops every process they
started, however it detached (a new session, a double fork, a process that keeps forking), when
their turn ends — after a setup command, once the tools are listed, after the picks, and at the end
of the stretch that contains them (containment.py), where it is also checked that none is left.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass

from .contain import IN_IMAGE, Owner, owner_of_checkout
from .errors import InfraError


async def stop_group(proc: asyncio.subprocess.Process) -> None:
    """A program started with `start_new_session` has answered (or timed out): SIGKILL to its process
    group, which holds whatever it started and left there."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        await proc.wait()
    reap_group(proc.pid)


def reap_group(pgid: int) -> None:
    """The group's members that died and came to this process (its subreaper) when their parent
    died: reaped, or they would keep the group "alive" as zombies. Call it once the group's leader
    has been waited for (its exit code is its owner's to read)."""
    with suppress(ChildProcessError):
        while os.waitpid(-pgid, os.WNOHANG)[0]:
            pass


# Linux's numbers for prctl(), unshare() and mount()
PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG = 36, 1
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 1 << 18
_subreaper = False


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def become_subreaper() -> bool:
    """Every orphan below this process becomes its child instead of init's, so `sweep` finds what
    a program detached (setsid, a double fork). Linux only; called once by the command's entry."""
    global _subreaper
    if not sys.platform.startswith("linux"):
        return False
    try:
        _subreaper = _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


# How `sweep` stops every program of the pull request at once, so that none can outrun it (a process
# that keeps forking, each child in a new session, is never at a pid a sweep read when its kill
# lands): `kill(-1, SIGKILL)`, which the kernel delivers to every process it reaches in one pass
# that no fork can slip past —
# - in the Action's image, as the checkout's owner: every process of that uid, which in the image's
#   PID namespace is only the pull request's (`uid`);
# - elsewhere, from the init of a PID namespace of toolselect's own, which every program it starts
#   is in (`namespace`, entered by `own_namespace()` where the kernel lets a process make one);
# - where neither can be had, the processes below this one, found and killed pass after pass: a
#   process that keeps forking can outrun that (`tree`; `unguaranteed()` says why).
_namespace = False  # this process is the init of a PID namespace of its own
_no_namespace: str | None = None  # why it could not make one (when it tried)


def own_namespace() -> str | None:
    """Make this process the init of a new PID namespace with a /proc of its own (in a mount
    namespace; with a user namespace that maps only itself when not root, where the kernel allows
    unprivileged ones): it forks, the child — PID 1 there — goes on as toolselect and returns None;
    the parent stays outside, passes SIGINT, SIGTERM and SIGHUP on, and exits with the child's status
    (the child dies with it). A throwaway child tries it all first: when it can't be done, this
    returns why and nothing changed. Call it once, before any thread or program is started."""
    global _namespace, _no_namespace
    if not sys.platform.startswith("linux"):
        _no_namespace = "not Linux"
        return _no_namespace
    if why := _try_namespace():
        unprivileged = " (unprivileged user namespaces are off or restricted here)" if os.getuid() != 0 else ""
        _no_namespace = f"no PID namespace could be made: {why}{unprivileged}"
        return _no_namespace
    _enter_namespace()
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:  # PID 1 of the new namespace: toolselect goes on here
        try:
            _proc_of_its_own()
        except OSError as exc:
            print(f"error: toolselect could not mount its namespace's /proc: {exc}", file=sys.stderr)
            os._exit(3)
        _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the parent killed: so is this, and all below
        _namespace = True
        return None
    _wait_for(child)
    raise AssertionError("unreachable")  # pragma: no cover


def _enter_namespace() -> None:
    """unshare() the PID (for the children to come), mount and (not root) user namespaces; raises
    OSError when the kernel refuses. In a user namespace the same uid and gid map to themselves: the
    programs run as the job's user, as before."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWPID | CLONE_NEWNS | (CLONE_NEWUSER if uid != 0 else 0)
    if _libc().unshare(flags) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))
    if flags & CLONE_NEWUSER:
        for name, line in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(line)


def _proc_of_its_own() -> None:
    """In the namespace's init: its mounts private (nothing reaches the machine's), and /proc the
    namespace's own, so a program's pids and the /proc it reads agree."""
    libc = _libc()
    for source, target, kind, flags in ((b"none", b"/", None, MS_REC | MS_PRIVATE),
                                        (b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)):  # fmt: skip
        if libc.mount(source, target, kind, flags, None) != 0:
            number = ctypes.get_errno()
            raise OSError(number, f"mount {target.decode()}: {os.strerror(number)}")


def _try_namespace() -> str | None:
    """Everything `own_namespace` does, in a throwaway child (and its child): why it fails, or None."""
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    probe = os.fork()
    if probe == 0:
        os.close(read)
        why = ""
        try:
            _enter_namespace()
            init = os.fork()
            if init == 0:
                try:
                    _proc_of_its_own()
                    os._exit(0)
                except OSError as exc:
                    os.write(write, str(exc.strerror or exc).encode())
                    os._exit(1)
            os.waitpid(init, 0)
        except OSError as exc:
            why = str(exc.strerror or exc)
        os.write(write, why.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        said = f.read().decode(errors="replace")
    os.waitpid(probe, 0)
    return said or None


def _wait_for(child: int) -> None:
    """The parent outside the namespace: signals go on to the child (as PID 1 it takes only those it
    handles, so a SIGTERM it does not take is followed by SIGKILL 10 s later); its status is ours."""

    def forward(number: int, _frame: object) -> None:
        with suppress(ProcessLookupError):
            os.kill(child, number)
        if number != signal.SIGINT:
            signal.signal(signal.SIGALRM, lambda *_: os.kill(child, signal.SIGKILL))
            signal.alarm(10)

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, forward)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


class Survived(InfraError):
    """A program of the pull request still runs after every process of it was killed: nothing it
    could use is given back."""


def unguaranteed(environ: Mapping[str, str]) -> str | None:
    """Why a process of the pull request that keeps forking could outrun `sweep` here (None: it
    can't: the sweep is atomic and checked)."""
    if _reach(environ) != "tree":
        return None
    return _no_namespace or "no PID namespace of its own"


def _reach(environ: Mapping[str, str]) -> str:
    if environ.get(IN_IMAGE) and owner_of_checkout(environ) is not None:
        return "uid"
    return "namespace" if _namespace else "tree" if _subreaper else "none"


@dataclass(frozen=True)
class _Process:
    pid: int
    ppid: int
    uids: frozenset[int]
    dead: bool  # a zombie: exited, not yet reaped
    name: str


def _processes() -> list[_Process]:
    out = []
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return []
    for name in entries:
        try:
            with open(f"/proc/{name}/status", encoding="utf-8", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            ppid = int(fields["PPid"].strip())
            uids = frozenset(int(u) for u in fields["Uid"].split())
            dead = fields.get("State", "").strip()[:1] in ("Z", "X")
        except (OSError, KeyError, ValueError):
            continue  # gone meanwhile, or not ours to read
        out.append(_Process(int(name), ppid, uids, dead, fields.get("Name", "?").strip()))
    return out


def _me() -> int:
    """This process's pid as the /proc it reads shows it."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()


def _below(procs: Sequence[_Process], me: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p.pid)
    found: set[int] = set()
    todo = list(children.get(me, ()))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def strays(owner: Owner | None) -> list[int]:
    """The processes a sweep of the `tree` kind stops: every living process below this one (when it
    is the subreaper), and every process of `owner`'s uid (given only in the image)."""
    me = _me()
    procs = _processes()
    found = _below(procs, me) if _subreaper or _namespace else set()
    if owner is not None:
        found |= {p.pid for p in procs if owner[0] in p.uids}
    living = {p.pid for p in procs if not p.dead}
    return sorted((found & living) - {me})


def sweep(environ: Mapping[str, str]) -> int:
    """Stop (SIGKILL) every process of the PR's programs that is still running: how many there were.
    Call it when none of them should be running: after a setup command, after the tools are listed,
    after the picks, and at the end. Where it is atomic (`uid`, `namespace`), it is then checked that
    none is left: `Survived` if one still runs 10 s later. Elsewhere (`tree`) it is best effort, and
    `unguaranteed` says why."""
    kind = _reach(environ)
    if kind == "uid":
        owner = owner_of_checkout(environ)
        assert owner is not None
        return _stop_all(lambda: _kill_as(owner), lambda procs: {p.pid for p in procs if owner[0] in p.uids})
    if kind == "namespace":
        me = _me()
        return _stop_all(_kill_from_init, lambda procs: _below(procs, me))
    if kind == "tree":
        return _stop_tree(owner_of_checkout(environ) if environ.get(IN_IMAGE) else None)
    return 0  # a library call: the process groups it started were stopped, there is nothing to find


KILL_EVERY_PROCESS = "kill -s KILL -- -1 2>/dev/null"  # the shell's kill(-1): every process it may signal but itself


def _kill_as(owner: Owner) -> None:
    """kill(-1, SIGKILL) from a process of `owner`'s uid: every process of that uid, in one pass."""
    setpriv = shutil.which("setpriv") or "setpriv"
    user = [f"--reuid={owner[0]}", f"--regid={owner[1]}", "--clear-groups"]
    subprocess.run(
        [setpriv, *user, "--", "/bin/sh", "-c", KILL_EVERY_PROCESS],
        env={"PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd="/", timeout=30, check=False,
    )  # fmt: skip


def _kill_from_init() -> None:
    """As the namespace's init: kill(-1, SIGKILL) reaches every other process in it, and in the
    namespaces below it."""
    with suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)


SURVIVAL_S = 10.0  # how long a process killed with SIGKILL may take to go before it is said to survive


def _stop_all(kill: Callable[[], None], theirs: Callable[[Sequence[_Process]], set[int]]) -> int:
    """Kill them all at once, reap what died below this process, and check that none lives on: how
    many were running (seen before the kill, or reaped as killed by it)."""
    me = _me()
    procs = _processes()
    before = {p.pid for p in procs if not p.dead and p.pid != me} & theirs(procs)
    killed = 0
    deadline = time.monotonic() + SURVIVAL_S
    pause = 0.002
    while True:
        kill()
        killed += _reap_dead(me, theirs)
        procs = _processes()
        mine = theirs(procs)
        left = [p for p in procs if p.pid in mine and not p.dead and p.pid != me]
        if not left:  # what died meanwhile, too
            return max(len(before), killed + _reap_dead(me, theirs))
        if time.monotonic() > deadline:
            shown = ", ".join(f"{p.pid} ({p.name})" for p in left[:5])
            raise Survived(
                f"{len(left)} process{'es' if len(left) > 1 else ''} of the pull request's programs still "
                f"run{'s' if len(left) == 1 else ''} after SIGKILL ({shown}): nothing they could use is given back",
                hint="a process stuck in the kernel (a hung mount, a device) can't be stopped; the run fails",
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _reap_dead(me: int, theirs: Callable[[Sequence[_Process]], set[int]]) -> int:
    """The dead children of theirs this process inherited (as their subreaper, or their namespace's
    init), reaped: how many of them SIGKILL had stopped."""
    statuses = []
    if _namespace:  # every process in the namespace is dead or below one that is: reap all that are
        with suppress(ChildProcessError):
            while (done := os.waitpid(-1, os.WNOHANG))[0]:
                statuses.append(done[1])
    else:
        procs = _processes()
        mine = theirs(procs)
        for p in procs:
            if p.dead and p.ppid == me and p.pid in mine:
                with suppress(ChildProcessError):
                    statuses.append(os.waitpid(p.pid, os.WNOHANG)[1])
    return sum(1 for s in statuses if os.WIFSIGNALED(s) and os.WTERMSIG(s) == signal.SIGKILL)


def _stop_tree(owner: Owner | None, passes: int = 200) -> int:
    """Best effort: what is found below this process is killed, pass after pass."""
    stopped: set[int] = set()
    for _ in range(passes):  # what forks while it is being stopped is found on the next pass
        found = strays(owner)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                stopped.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.005)
    return len(stopped)
