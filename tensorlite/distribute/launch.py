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


def _parser():
    p = argparse.ArgumentParser(prog="tensorlite-launch",
                                description="Run a tensorlite training script on N MPI ranks.")
    p.add_argument("-n", "--num-workers", type=int, default=2, help="number of ranks")
    p.add_argument("-f", "--hostfile", help="MPI hostfile (one host per line) for a cluster")
    p.add_argument("script", help="the Python training script")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p


def build_command(argv, mpiexec):
    """The mpiexec command line for launcher arguments `argv`."""
    ns = _parser().parse_args(argv)
    if ns.num_workers < 1:
        raise SystemExit(f"tensorlite-launch: -n must be at least 1, got {ns.num_workers}")
    cmd = [mpiexec, "-n", str(ns.num_workers)]
    if ns.hostfile:
        cmd += ["-f", ns.hostfile]
    return cmd + [sys.executable, ns.script] + ns.args


def main(argv=None):
    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.stderr.write(f"tensorlite-launch: no mpiexec found: {INSTALL_HINT}\n")
        return 2
    cmd = build_command(sys.argv[1:] if argv is None else argv, mpiexec)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
