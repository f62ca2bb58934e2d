"""What the Action's image costs: its build, its size on disk and gzipped (what a registry stores
and a runner pulls) layer by layer, and a container step's start to exit.

    python bench/image.py            # build without Docker's cache, then measure (about 3 minutes)
    python bench/image.py --no-build # measure the image the container suite last built
    python bench/image.py --write    # also record the layer sizes in bench/image-budget.json,
                                     # the budget tests/container checks (within 10%)

Needs a running Docker daemon and the stand-in base (the container suite builds both:
`TOOLSELECT_CONTAINER_TESTS=required python -m pytest -n 0 tests/container`, or run
tests/container/stand-in-base.sh). The image is built on that stand-in, not on the official
python:3.11-slim-bookworm (Docker Hub can't be reached here): the Dockerfile's own layers are
what this measures; the base's are reported apart.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.container.step import (  # noqa: E402
    BASE,
    BUDGET,
    IMAGE,
    container_step,
    example_checkout,
    give,
    layers_added,
    step_of,
)


def gzipped(stream) -> int:
    """How many bytes gzip (level 6, what `docker push` uses) makes of a layer's tar."""

    class Count:
        n = 0

        def write(self, data: bytes) -> int:
            Count.n += len(data)
            return len(data)

    with gzip.GzipFile(fileobj=Count(), mode="wb", compresslevel=6, mtime=0) as out:  # type: ignore[call-overload]
        while chunk := stream.read(1 << 20):
            out.write(chunk)
    return Count.n


def saved_layers(image: str) -> list[tuple[str, int, int]]:
    """Every layer of the image, bottom first: (step, bytes in the tar, gzipped bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "image.tar"
        subprocess.run(["docker", "save", "-o", str(archive), image], check=True)
        with tarfile.open(archive) as tar:
            [manifest] = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
            config = json.load(tar.extractfile(manifest["Config"]))  # type: ignore[arg-type]
            steps = [h.get("created_by", "") for h in config["history"] if not h.get("empty_layer")]
            rows = []
            for step, name in zip(steps, manifest["Layers"], strict=True):
                member = tar.getmember(name)
                rows.append((step_of(step), member.size, gzipped(tar.extractfile(member))))
    return rows


def step_seconds(job: Path, sha: str) -> float:
    started = time.monotonic()
    step = container_step(IMAGE, job, "push", {"ref": "refs/heads/main", "after": sha}, {"working-directory": "."})
    assert step.code == 0, step.log[-3000:]
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-build", action="store_true", help="measure the image already built")
    parser.add_argument("--write", action="store_true", help=f"record the layer sizes in {BUDGET.name}")
    args = parser.parse_args()
    build_s = None
    if not args.no_build:
        started = time.monotonic()
        subprocess.run(["docker", "build", "--no-cache", "--network", "host", "--build-arg", f"BASE={BASE}",
                        "--tag", IMAGE, str(ROOT)], check=True, capture_output=True)  # fmt: skip
        build_s = time.monotonic() - started
    ours = layers_added(IMAGE, BASE)
    base_count = len(saved_layers(BASE))
    rows = saved_layers(IMAGE)
    base_rows, our_rows = rows[:base_count], rows[base_count:]

    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp)
        job.chmod(0o755)
        (job / "workspace").mkdir()
        sha = example_checkout(job / "workspace")
        give(job / "workspace")
        first = step_seconds(job, sha)  # the example's setup installs the MCP SDK beside its server
        again = [step_seconds(job, sha) for _ in range(3)]  # the SDK is there: what a cached push costs
    started = time.monotonic()
    subprocess.run(["docker", "run", "--rm", "--entrypoint", "/opt/toolselect/venv/bin/python", IMAGE, "-m",
                    "toolselect", "--version"], check=True, capture_output=True)  # fmt: skip
    version_s = time.monotonic() - started

    mb = 1e6
    print(f"Machine: {platform.machine()}, Docker {docker_version()}, {datetime.date.today()}")
    if build_s is not None:
        print(f"build without cache: {build_s:.0f} s")
    print("\n| layer (Dockerfile step) | on disk | gzipped |\n|---|---:|---:|")
    for step, size, packed in our_rows:
        print(f"| `{step[:60]}` | {size / mb:.1f} MB | {packed / mb:.1f} MB |")
    disk, packed = sum(r[1] for r in our_rows), sum(r[2] for r in our_rows)
    print(f"| **the Dockerfile's layers** | **{disk / mb:.0f} MB** | **{packed / mb:.0f} MB** |")
    base_disk, base_packed = sum(r[1] for r in base_rows), sum(r[2] for r in base_rows)
    print(f"| the stand-in base ({BASE}) | {base_disk / mb:.0f} MB | {base_packed / mb:.0f} MB |")
    print(f"\nstep start → exit, push on the example: first {first:.1f} s (installs the MCP SDK), then "
          f"{min(again):.1f}–{max(again):.1f} s; `toolselect --version` in a container {version_s:.2f} s")  # fmt: skip
    if args.write:
        BUDGET.write_text(json.dumps({
            "recorded": str(datetime.date.today()), "machine": platform.machine(), "base": BASE,
            "layers": [{"step": x.step, "bytes": x.bytes} for x in ours],
            "gzipped_bytes": [r[2] for r in our_rows],
        }, indent=1) + "\n")  # fmt: skip
        print(f"\nrecorded in {BUDGET.relative_to(ROOT)}")


def docker_version() -> str:
    done = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True)
    return done.stdout.strip()


if __name__ == "__main__":
    main()
