"""`tensorlite-launch`: runs a training script on N MPI ranks with this environment's MPI.

    tensorlite-launch -n 2 train.py --epochs 3
    tensorlite-launch -n 64 -f hostfile train.py      # a cluster: MPICH's hostfile

It finds `mpiexec` beside this Python (the pip-installed MPICH puts it there) or on PATH and
runs `mpiexec -n N [-f hostfile] python train.py ...` with the same interpreter.

Example:
    >>> build_command(["-n", "2", "train.py"], mpiexec="/venv/bin/mpiexec")[:3]
    ['/venv/bin/mpiexec', '-n', '2']
"""
import argparse
import os
import shutil
import subprocess
import sys

from tensorlite.distribute.mpi_comm import INSTALL_HINT


def find_mpiexec():
    """mpiexec beside this interpreter (a venv with pip's MPICH), else on PATH, else None."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec") or shutil.which("mpirun")


def build_parser():
    """The argparse parser of `tensorlite-launch` (every argument described)."""
    p = argparse.ArgumentParser(
        prog="tensorlite-launch",
        description="Run a tensorlite training script on N MPI ranks "
                    "(MultiWorkerMirroredStrategy), with the mpiexec of the distributed "
                    "extra (beside this Python) or on PATH.",
        epilog="Example: tensorlite-launch -n 2 train.py --epochs 3")
    p.add_argument("-n", "--num-workers", type=int, default=2,
                   help="number of ranks to start (default %(default)s)")
    p.add_argument("-f", "--hostfile",
                   help="MPICH hostfile (one host per line) to spread the ranks over a cluster")
    p.add_argument("script", help="the Python training script each rank runs")
    p.add_argument("args", nargs=argparse.REMAINDER,
                   help="arguments passed on to the script")
    return p


def build_command(argv, mpiexec):
    """The mpiexec command line for launcher arguments `argv`."""
    ns = build_parser().parse_args(argv)
    if ns.num_workers < 1:
        raise SystemExit(f"tensorlite-launch: -n must be at least 1, got {ns.num_workers}")
    cmd = [mpiexec, "-n", str(ns.num_workers)]
    if ns.hostfile:
        cmd += ["-f", ns.hostfile]
    return cmd + [sys.executable, ns.script] + ns.args


def main(argv=None):
    """Runs the script on the ranks; returns mpiexec's exit status (2: no mpiexec)."""
    argv = sys.argv[1:] if argv is None else argv
    build_parser().parse_args(argv)  # --help and bad flags before looking for mpiexec
    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.stderr.write(f"tensorlite-launch: no mpiexec found: {INSTALL_HINT}\n")
        return 2
    cmd = build_command(argv, mpiexec)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
