"""The container image: what the project adds above its base, and how fast the referee starts in it.

Needs the image `make image` builds (``SIXNIMMT_IMAGE``, default ``localhost/sixnimmt-arena:dev``)
and buildah and podman; without them it prints why on stderr and yields nothing.

- ``image.added_mb``: the image's size minus its base's (uncompressed, 10^6 bytes): the virtualenv
  and the runtime stage's own layers. The base is ``SIXNIMMT_IMAGE_BASE`` (default the base
  ``make image`` builds here, ``localhost/sixnimmt-py311-bookworm``) and must be a prefix of the
  image's layers.
- ``image.referee_ready_s``: from ``buildah run`` of ``sixnimmt referee serve`` (as the image's
  user, no capabilities, chroot isolation) to the gRPC health check answering SERVING for
  ``sixnimmt.v1.Referee``; the median of 5 starts (1 with --quick), each in the same working
  container, its page cache warm after the first.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

IMAGE = os.environ.get("SIXNIMMT_IMAGE", "localhost/sixnimmt-arena:dev")
BASE = os.environ.get("SIXNIMMT_IMAGE_BASE", "localhost/sixnimmt-py311-bookworm")
SERVICE = "sixnimmt.v1.Referee"
READY_TIMEOUT_S = 60.0


def _inspect(image: str) -> dict[str, Any] | None:
    done = subprocess.run(["podman", "image", "inspect", image], capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout)[0] if done.returncode == 0 else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serving(port: int) -> bool:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=SERVICE), timeout=1
            )
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _referee_ready_s(container: str) -> float:
    port = _free_port()
    command = ["buildah", "run", "--isolation", "chroot", "--network", "host", "--cap-drop", "all"]
    command += ["--mount", "type=tmpfs,destination=/tmp,tmpfs-mode=1777"]
    command += [
        "--env",
        f"SIXNIMMT_REFEREE_LISTEN=127.0.0.1:{port}",
        "--env",
        "SIXNIMMT_REFEREE_METRICS_PORT=0",
    ]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, container, "--", "sixnimmt", "referee", "serve"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        while not _serving(port):
            if process.poll() is not None:
                raise RuntimeError(f"the referee exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            if time.perf_counter() - started > READY_TIMEOUT_S:
                raise RuntimeError(f"the referee was not SERVING after {READY_TIMEOUT_S:.0f} s")
            time.sleep(0.01)
        return time.perf_counter() - started
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run(quick: bool) -> Iterator[dict[str, Any]]:
    missing = [tool for tool in ("buildah", "podman") if shutil.which(tool) is None]
    if missing:
        print(f"bench: image: skipped, {' and '.join(missing)} not installed", file=sys.stderr)
        return
    image, base = _inspect(IMAGE), _inspect(BASE)
    if image is None:
        print(f"bench: image: skipped, no image {IMAGE} (make image builds it)", file=sys.stderr)
        return
    if base is None or image["RootFS"]["Layers"][: len(base["RootFS"]["Layers"])] != base["RootFS"]["Layers"]:
        print(
            f"bench: image: skipped, {IMAGE} is not built on {BASE} (set SIXNIMMT_IMAGE_BASE)",
            file=sys.stderr,
        )
        return
    yield {"name": "image.added_mb", "value": round((image["Size"] - base["Size"]) / 1e6, 1), "unit": "MB"}

    container = subprocess.run(
        ["buildah", "from", "--quiet", "--pull-never", IMAGE], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        times = [_referee_ready_s(container) for _ in range(1 if quick else 5)]
    finally:
        subprocess.run(["buildah", "rm", container], capture_output=True)
    yield {"name": "image.referee_ready_s", "value": round(statistics.median(times), 3), "unit": "s"}
