"""Generate the Python wire code (messages, .pyi stubs, the service) from proto/sixnimmt/v1.

``make proto`` runs this into the repository; the tests run it into a temporary directory
and fail when the committed code differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc

PROTO_ROOT = Path(__file__).resolve().parent
REPO = PROTO_ROOT.parent
SERVICES = ("referee.proto",)
"""The files that define services (the others hold messages only)."""


def generate(out: Path) -> list[Path]:
    """Write the generated modules under ``out/sixnimmt/v1``; return their paths."""
    sources = sorted((PROTO_ROOT / "sixnimmt" / "v1").glob("*.proto"))
    include = f"-I{PROTO_ROOT}"
    grpc_include = f"-I{Path(protoc.__file__).parent / '_proto'}"
    messages = [str(p.relative_to(PROTO_ROOT)) for p in sources]
    services = [m for m in messages if Path(m).name in SERVICES]
    for args in (
        ["protoc", include, grpc_include, f"--python_out={out}", f"--pyi_out={out}", *messages],
        ["protoc", include, grpc_include, f"--grpc_python_out={out}", *services],
    ):
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed: {' '.join(args)}")
    return sorted((out / "sixnimmt" / "v1").glob("*_pb2*.py*"))


if __name__ == "__main__":
    for path in generate(REPO):
        print(path.relative_to(REPO))
    sys.exit(0)
