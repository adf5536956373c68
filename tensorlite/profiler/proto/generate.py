"""Regenerates xplane_pb2.py from xplane.proto with protoc (from grpcio-tools):

    pip install "grpcio-tools==1.62.3"
    python tensorlite/profiler/proto/generate.py

The generated module is committed, so writing profiles needs only the protobuf runtime.
grpcio-tools 1.62 bundles protoc 25, whose Python code runs on every protobuf runtime from
3.20 on; newer protoc releases stamp a minimum runtime version into the module.
"""
import os
import sys

PROTO = "tensorlite/profiler/proto/xplane.proto"


def main():
    from grpc_tools import protoc  # noqa: PLC0415 - a developer tool, not a dependency
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    rc = protoc.main(["protoc", f"-I{root}", f"--python_out={root}",
                      os.path.join(root, PROTO)])
    if rc:
        raise SystemExit(f"protoc failed with status {rc}")
    print(os.path.join(root, PROTO.replace(".proto", "_pb2.py")))


if __name__ == "__main__":
    sys.exit(main())
