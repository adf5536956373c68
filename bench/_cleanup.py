"""What the benches share to leave nothing behind, even when interrupted (Ctrl-C, SIGTERM):

- `exit_on_signals()`: SIGTERM and SIGHUP raise SystemExit in the main thread, as SIGINT
  raises KeyboardInterrupt, so `with` blocks and `finally` clauses run (temporary
  directories removed, servers stopped, child processes ended);
- `run_mpi(cmd)`: runs an `mpiexec` command line like subprocess.run(check=True), and if it
  fails or is interrupted ends the ranks it launched and removes the MPICH shared-memory
  segments (/dev/shm/mpich_shm_*) that those ranks, and only those, had mapped. MPICH names
  a segment by a random key, not by a PID, so the ranks' own memory maps are what tie a
  segment to this run: they are read while the ranks live (every 0.1 s until found, and
  once more on interruption), never guessed from names.
"""
import os
import signal
import subprocess
import sys
import threading

SHM_PREFIX = "/dev/shm/mpich_shm_"


def exit_on_signals():
    """SIGTERM/SIGHUP -> SystemExit(128 + signal) in the main thread (cleanup runs)."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


def descendants(pid):
    """PIDs of the living descendants of `pid` (from /proc: Linux only)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def mapped_segments(pids):
    """The MPICH shared-memory files the processes `pids` have mapped."""
    segments = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    path = line.rstrip("\n").split(None, 5)[-1]
                    if path.startswith(SHM_PREFIX):
                        segments.add(path.removesuffix(" (deleted)"))
        except OSError:
            continue
    return segments


class _Watch(threading.Thread):
    """Records the processes under `pid` and the segments they map, until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.pids, self.segments = pid, set(), set()
        self.done = threading.Event()

    def scan(self):
        pids = descendants(self.pid)
        self.pids.update(pids)
        self.segments |= mapped_segments(pids)

    def run(self):
        # every 0.1 s until the ranks have mapped their segments (MPI_Init), then every 2 s:
        # the segments do not change after, and the bench's timings are not to be disturbed
        while not self.done.wait(2.0 if self.segments else 0.1):
            self.scan()


def _end(proc, watch):
    """Ends mpiexec (SIGTERM: hydra ends its ranks), then any rank left; removes the
    segments the ranks had mapped."""
    watch.scan()
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pid in watch.pids:   # a rank hydra did not reach
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for path in watch.segments:
        try:
            os.unlink(path)
            print(f"removed {path}, left by an interrupted or failed MPI rank",
                  file=sys.stderr)
        except FileNotFoundError:
            pass


def run_mpi(cmd, **kwargs):
    """subprocess.run(cmd, check=True, **kwargs) for an mpiexec command line; returns its
    stdout (None unless captured). Interrupted or failed, it ends the ranks and removes
    their shared memory before the exception propagates."""
    proc = subprocess.Popen(cmd, **kwargs)
    watch = _Watch(proc.pid)
    watch.start()
    try:
        out, _ = proc.communicate()
    except BaseException:
        _end(proc, watch)
        raise
    finally:
        watch.done.set()
    if proc.returncode != 0:
        _end(proc, watch)
        raise subprocess.CalledProcessError(proc.returncode, cmd, out)
    return out
