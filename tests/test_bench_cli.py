"""The benches explain themselves and leave nothing behind: every `bench/*.py --help` answers
without running (rc 0, no file in cwd/$TMPDIR/$HOME, no process left); an interrupted
text_pipeline removes its temporary corpus; an interrupted allreduce ends its MPI ranks and
removes the /dev/shm/mpich_shm_* segments they had mapped (and only those); an interrupted
data_service stops its servers and removes Dask's scratch space; lite_inference prints the
rows it skipped and why."""
import glob
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "bench", "*.py"))
                 if not os.path.basename(p).startswith("_"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from _cleanup import descendants, mapped_segments  # noqa: E402


def _dirs(tmp_path):
    dirs = {name: tmp_path / name for name in ("cwd", "tmp", "home")}
    for d in dirs.values():
        d.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": ROOT, "TMPDIR": str(dirs["tmp"]),
           "HOME": str(dirs["home"]), "PYTHONDONTWRITEBYTECODE": "1"}
    return dirs, env


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_every_bench_is_checked():
    assert "allreduce.py" in BENCHES and "text_pipeline.py" in BENCHES and len(BENCHES) >= 18


@pytest.mark.parametrize("bench", BENCHES)
def test_help_answers_without_running(bench, tmp_path):
    dirs, env = _dirs(tmp_path)
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", bench), "--help"],
                            cwd=dirs["cwd"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)  # a bench that ran would take minutes
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert out.startswith("usage:") and "-h, --help" in out
    assert _undescribed(out) == [], f"{bench} --help lists arguments without a description"
    assert not _group_alive(proc.pid), f"{bench} --help left processes running"
    for name, d in dirs.items():
        assert list(d.rglob("*")) == [], f"{bench} --help wrote into {name}"


def _undescribed(text):
    """The argument entries of an argparse --help text that have no description: an entry
    line ("  --flag VALUE") with neither text after a gap nor an indented line below."""
    lines, missing, section = text.splitlines(), [], False
    for i, line in enumerate(lines):
        if line.endswith(":") and not line.startswith(" "):
            section = True   # "options:", "positional arguments:", a group's title
            continue
        if not section or not line.startswith("  ") or line.startswith("   "):
            continue
        below = lines[i + 1] if i + 1 < len(lines) else ""
        if "  " not in line.strip() and not below.startswith("   "):
            missing.append(line.strip())
    return missing


def test_undescribed_finds_an_argument_without_help():
    import argparse
    parser = argparse.ArgumentParser(prog="b")
    parser.add_argument("--said", help="what it does")
    parser.add_argument("--long-flag-name-that-wraps", metavar="A_LONG_VALUE", help="it wraps")
    parser.add_argument("--silent")
    assert _undescribed(parser.format_help()) == ["--silent SILENT"]


def _wait_for(predicate, what, seconds=180):
    """Polls `predicate` (bounded); returns its first truthy value."""
    for _ in range(int(seconds / 0.2)):
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_text_pipeline_removes_its_corpus(sig, tmp_path):
    dirs, env = _dirs(tmp_path)
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "text_pipeline.py"),
                             "--mb", "20", "--repeats", "1"], cwd=dirs["cwd"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        corpus = _wait_for(lambda: glob.glob(str(dirs["tmp"] / "*" / "corpus_*")),
                           "the corpus to be started")
        os.kill(proc.pid, sig)
        for _ in range(40):  # bounded: Python swallows a KeyboardInterrupt that lands in a
            try:             # __del__ or a weakref callback ("Exception ignored in"), so
                proc.wait(timeout=0.5)  # the signal is sent again, as a user presses
                break                   # Ctrl-C again
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, sig)
        proc.communicate(timeout=120)
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0 and corpus
    assert not _group_alive(proc.pid)
    assert list(dirs["tmp"].rglob("*")) == [], "the corpus was left behind"
    assert list(dirs["cwd"].rglob("*")) == []


# (signal, to the bench alone as `kill` sends it, or to its whole process group as a
# terminal's Ctrl-C does: the ranks then get it too)
INTERRUPTS = [(signal.SIGINT, "bench"), (signal.SIGTERM, "bench"), (signal.SIGINT, "group")]


@pytest.mark.slow
@pytest.mark.parametrize("sig, target", INTERRUPTS)
def test_interrupted_allreduce_removes_its_ranks_shared_memory(sig, target, tmp_path):
    pytest.importorskip("mpi4py")
    from tensorlite.distribute.launch import find_mpiexec
    if find_mpiexec() is None:
        pytest.skip("no mpiexec (the distributed extra installs MPICH)")
    dirs, env = _dirs(tmp_path)
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "allreduce.py")],
                            cwd=dirs["cwd"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    pids, segments = set(), set()

    def ranks_mapped_segments():   # what the bench's own ranks map, read as they run
        found = descendants(proc.pid)
        pids.update(found)
        segments.update(mapped_segments(found))
        return segments
    try:
        _wait_for(ranks_mapped_segments, "the ranks' shared memory")
        assert all(os.path.exists(s) for s in segments)
        time.sleep(1)   # the bench's own watcher looks every 0.1 s until it sees them
        if target == "bench":
            os.kill(proc.pid, sig)
        else:
            os.killpg(proc.pid, sig)
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in pids:   # the test never leaves litter itself, whatever happened
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        leftovers = [s for s in segments if os.path.exists(s)]
        for s in leftovers:
            os.unlink(s)
    assert proc.returncode != 0
    assert leftovers == [], f"left behind: {leftovers}"
    assert [p for p in pids if _alive(p)] == []
    assert list(dirs["tmp"].rglob("*")) == [] and list(dirs["cwd"].rglob("*")) == []


@pytest.mark.slow
def test_interrupted_data_service_stops_its_servers(tmp_path):
    pytest.importorskip("distributed")
    dirs, env = _dirs(tmp_path)
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "data_service.py")],
                            cwd=dirs["cwd"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:   # dispatchers in this process, 3 Dask worker processes (and their nanny tree)
        _wait_for(lambda: len(descendants(proc.pid)) >= 3, "the workers")
        os.kill(proc.pid, signal.SIGINT)
        proc.communicate(timeout=120)
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0
    _wait_for(lambda: not _group_alive(proc.pid), "the workers to exit", seconds=30)
    assert list(dirs["tmp"].rglob("*")) == [], "Dask's scratch space was left behind"
    assert list(dirs["cwd"].rglob("*")) == []


def test_lite_inference_says_which_rows_it_skipped(tmp_path):
    """Without LiteRT and onnxruntime their rows are reported as skipped, with the reason."""
    script = ("import runpy, sys\n"
              "for name in ('ai_edge_litert', 'ai_edge_litert.interpreter', 'onnxruntime'):\n"
              "    sys.modules[name] = None  # as if not installed\n"
              f"sys.argv = ['lite_inference.py', '--repeats', '1', '--number', '1', "
              f"'--int8-gemm', 'auto,blas']\n"
              f"runpy.run_path({os.path.join(ROOT, 'bench', 'lite_inference.py')!r}, "
              f"run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for row in ("LiteRT default kernels (float32)", "LiteRT reference kernels (int8)",
                "onnxruntime (float32)"):
        line = next(line for line in lines if row in line)
        assert "skipped:" in line and "not installed" in line
    int8_rows = [line for line in lines
                 if "tensorlite interpreter (int8, " in line and "ms/image" in line]
    assert any("(int8, blas)" in line for line in int8_rows)  # each row names its kernel
    assert 1 <= len(int8_rows) <= 2  # auto's kernel, or blas twice in one row
