"""The container suite: the Action's image built from the repository's Dockerfile and run as GitHub
runs a container step (`docker run` as root, the checkout owned by the runner's user and mounted at
/github/workspace, the file commands and HOME mounted beside it, INPUT_* with dashes).

Docker Hub can't be reached here, so the image is built on a local stand-in for its base
(stand-in-base.sh, cached in TOOLSELECT_CONTAINER_CACHE, default /var/cache/toolselect-ci); Docker
keeps the image's layers between runs. A daemon that isn't running is started (as root: dockerd
without a bridge, so builds and runs use the host's network) and stopped again at the end. Where
none can run the suite is skipped with the reason — unless TOOLSELECT_CONTAINER_TESTS=required
(.ci/run sets it), when that is a failure.

TOOLSELECT_IMAGE_UNDER_TEST=<image> runs the scenarios on an image built elsewhere instead (the
release workflow's, on the official base, before it is pushed)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.container.step import BASE, IMAGE

CACHE = Path(os.environ.get("TOOLSELECT_CONTAINER_CACHE", "/var/cache/toolselect-ci"))


def _unavailable(why: str) -> None:
    if os.environ.get("TOOLSELECT_CONTAINER_TESTS") == "required":
        pytest.fail(f"the container tests are required here, but {why}")
    pytest.skip(f"no Docker engine: {why}")


def _docker_answers() -> bool:
    return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[None]:
    """A Docker daemon to talk to: the one running, or one started here (and stopped at the end).
    The test workers (pytest-xdist) share one: whoever comes first starts it under a lock, every
    worker holds a shared lock while it uses it, and the starter stops it only once it gets that lock
    alone — two daemons started at once fight over containerd's socket and neither comes up."""
    if shutil.which("docker") is None:
        _unavailable("docker is not installed (tests/install-servers.sh installs Debian's docker.io)")
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "dockerd.start.lock").open("w") as starting, (CACHE / "dockerd.users.lock").open("w") as users:
        fcntl.flock(starting, fcntl.LOCK_EX)
        daemon = None
        try:
            if not _docker_answers():
                daemon = _start_daemon()
            fcntl.flock(users, fcntl.LOCK_SH)  # before the start lock goes: no starter stops it under us
        finally:
            fcntl.flock(starting, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(users, fcntl.LOCK_UN)
            if daemon is not None:
                fcntl.flock(starting, fcntl.LOCK_EX)  # nobody starts to use it now…
                fcntl.flock(users, fcntl.LOCK_EX)  # …and everybody who did is done
                try:
                    _stop_daemon(daemon)
                finally:
                    fcntl.flock(users, fcntl.LOCK_UN)
                    fcntl.flock(starting, fcntl.LOCK_UN)


def _start_daemon() -> subprocess.Popen[bytes]:
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        _unavailable("no daemon is running, and starting one needs root and dockerd")
    with (CACHE / "dockerd.log").open("ab") as log:
        daemon = subprocess.Popen(
            ["dockerd", "--storage-driver=overlay2", "--iptables=false", "--ip6tables=false", "--bridge=none"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120  # a loaded two-core machine: containerd alone can take a while
    while not _docker_answers():
        if daemon.poll() is not None or time.monotonic() > deadline:
            _stop_daemon(daemon)
            _unavailable(f"dockerd did not start (see {CACHE / 'dockerd.log'})")
        time.sleep(0.5)
    return daemon


def _stop_daemon(daemon: subprocess.Popen[bytes]) -> None:
    daemon.terminate()
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()


@pytest.fixture(scope="session")
def image(docker_engine: None) -> str:
    """The image built from this checkout's Dockerfile, on the stand-in base (or the one given)."""
    if given := os.environ.get("TOOLSELECT_IMAGE_UNDER_TEST"):
        found = subprocess.run(["docker", "image", "inspect", given], capture_output=True, text=True)
        assert found.returncode == 0, (
            f"TOOLSELECT_IMAGE_UNDER_TEST={given}: no such image here ({found.stderr.strip()})"
        )
        return given
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time on this machine
        script = Path(__file__).with_name("stand-in-base.sh")
        made_by = hashlib.sha256(script.read_bytes()).hexdigest()[:16]
        label = '{{index .Config.Labels "org.toolselect.stand-in"}}'
        found = subprocess.run(["docker", "image", "inspect", "--format", label, BASE], capture_output=True, text=True)
        if found.stdout.strip() != made_by:  # none yet, or made by an older stand-in-base.sh
            subprocess.run(["bash", str(script), BASE, str(CACHE)], check=True, timeout=900)
        build = subprocess.run(
            ["docker", "build", "--network", "host", "--build-arg", f"BASE={BASE}", "--tag", IMAGE, str(ROOT)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return IMAGE
