"""Every command-line tool explains itself: `--help` exits 0, has no side effects (no file
in the working directory, $TMPDIR or $HOME, no process left behind, so no server started)
and describes every flag its argparse parser defines. The console scripts are run through
the entry points pyproject.toml declares, so a renamed `main` or a new script is caught."""
import argparse
import importlib
import os
import subprocess
import sys
import time
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

with open(os.path.join(ROOT, "pyproject.toml"), "rb") as _f:
    SCRIPTS = tomllib.load(_f)["project"]["scripts"]

# command -> (argv prefix that runs it, "module:function" building its argparse parser)
MODULE_CLIS = {
    "python -m tensorlite.lite": (["-m", "tensorlite.lite"],
                                  "tensorlite.lite.convert.cli:build_parser"),
    "python -m tensorlite.onnx": (["-m", "tensorlite.onnx"],
                                  "tensorlite.onnx.__main__:build_parser"),
    "python -m tensorlite.saved_model": (["-m", "tensorlite.saved_model"],
                                         "tensorlite.saved_model.show:build_parser"),
    "python -m tensorlite.profiler": (["-m", "tensorlite.profiler"],
                                      "tensorlite.profiler.__main__:build_parser"),
    "python -m tensorlite.serving": (["-m", "tensorlite.serving"],
                                     "tensorlite.serving.__main__:build_parser"),
    "python -m tensorlite.js": (["-m", "tensorlite.js"], "tensorlite.js.cli:build_parser"),
    "python -m tensorlite.data.service": (["-m", "tensorlite.data.service"],
                                          "tensorlite.data.service.__main__:build_parser"),
}


def _script_argv(entry):
    module, function = entry.split(":")
    return ["-c", f"import sys; from {module} import {function}; sys.exit({function}())"]


CLIS = dict(MODULE_CLIS)
CLIS.update({name: (_script_argv(entry), entry.split(":")[0] + ":build_parser")
             for name, entry in SCRIPTS.items()})


def _load(ref):
    module, function = ref.split(":")
    return getattr(importlib.import_module(module), function)()


def _process_group_alive(pgid):
    """Whether any process of the process group `pgid` is still running."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def run_help(argv, tmp_path):
    """Runs `python ARGV` in empty cwd/TMPDIR/HOME folders; returns (rc, stdout, stderr)
    after checking it left no file and no process behind."""
    dirs = {name: tmp_path / name for name in ("cwd", "tmp", "home")}
    for d in dirs.values():
        d.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": ROOT, "TMPDIR": str(dirs["tmp"]),
           "HOME": str(dirs["home"]), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([sys.executable] + argv, cwd=dirs["cwd"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
    assert not _process_group_alive(proc.pid), f"{argv} left processes running"
    for name, d in dirs.items():
        assert list(d.rglob("*")) == [], f"{argv} created files in {name}: {list(d.rglob('*'))}"
    return proc.returncode, out, err


def _undocumented(parser, text):
    """Flags of `parser` with no help or absent from its --help text."""
    missing = []
    for action in parser._actions:
        names = action.option_strings or [action.metavar or action.dest]
        if not action.help or action.help == "==SUPPRESS==" or not action.help.strip():
            missing.append(f"{names[0]}: no help")
        missing += [f"{n}: not in --help" for n in names if n not in text]
    return missing


def test_every_console_script_is_checked():
    assert set(SCRIPTS) == {"tensorlite-serving", "tensorlite-profiler", "tensorlite-launch",
                            "tensorlite-tfjs-converter"}
    assert set(SCRIPTS) <= set(CLIS)


@pytest.mark.parametrize("name", sorted(CLIS))
def test_help_exits_0_and_documents_every_flag(name, tmp_path):
    argv, builder = CLIS[name]
    rc, out, err = run_help(argv + ["--help"], tmp_path)
    assert rc == 0, err
    assert out.startswith("usage:") and err == ""
    parser = _load(builder)
    assert parser.description, f"{name} has no description"
    assert _undocumented(parser, out) == []
    for action in parser._actions:  # subcommands (saved_model show) explain themselves too
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for sub, subparser in action.choices.items():
            rc, sub_out, err = run_help(argv + [sub, "--help"], tmp_path / sub)
            assert rc == 0, err
            assert _undocumented(subparser, sub_out) == []


@pytest.mark.parametrize("flags", [["--port=8500"], ["--port", "8500"]])
def test_serving_refuses_the_grpc_port(flags, tmp_path):
    argv = _script_argv(SCRIPTS["tensorlite-serving"])
    rc, out, err = run_help(argv + [f"--model_base_path={tmp_path}"] + flags, tmp_path)
    assert rc == 2 and out == ""
    assert "gRPC" in err and "--rest_api_port" in err


def test_serving_refuses_every_flag_it_does_not_implement(capsys):
    from tensorlite.serving.__main__ import NOT_IMPLEMENTED, build_parser, parse_args
    text = build_parser().format_help()
    for name, why in NOT_IMPLEMENTED.items():
        assert f"--{name}" in text  # --help lists them
        with pytest.raises(SystemExit) as e:
            parse_args(["--model_base_path=/models/m", f"--{name}=1"])
        assert e.value.code == 2
        assert f"--{name} is not implemented" in capsys.readouterr().err


def test_launch_help_needs_no_mpiexec(tmp_path):
    """--help is answered before mpiexec is looked for (a machine without MPI can read it)."""
    from tensorlite.distribute import launch
    with pytest.raises(SystemExit) as e:
        launch.main(["--help"])
    assert e.value.code == 0


@pytest.mark.parametrize("ref, argv, message", [
    ("tensorlite.profiler.__main__", ["logs", "--port=6006"], "--tensorboard"),
    ("tensorlite.profiler.__main__", ["logs", "--list", "--tensorboard"], "give one"),
    ("tensorlite.saved_model.show", ["show", "--dir=m", "--signature_def=serving_default"],
     "--tag_set"),
    ("tensorlite.saved_model.show", ["show", "--dir=m", "--all", "--tag_set=serve"],
     "either --all"),
    ("tensorlite.onnx.__main__", ["m.keras", "m.onnx", "--input-dtype=int32"],
     "--input-shape"),
])
def test_flags_that_would_be_ignored_are_usage_errors(ref, argv, message, capsys):
    """A flag that would have no effect in that combination is refused, not ignored."""
    with pytest.raises(SystemExit) as e:
        importlib.import_module(ref).main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.slow
def test_data_service_stopped_leaves_nothing(tmp_path):
    """`python -m tensorlite.data.service` stopped by SIGTERM: its workers end and its
    credentials and Dask's scratch space (lock files Dask keeps) are removed."""
    pytest.importorskip("distributed")
    dirs = {name: tmp_path / name for name in ("cwd", "tmp", "home")}
    for d in dirs.values():
        d.mkdir()
    env = {**os.environ, "PYTHONPATH": ROOT, "TMPDIR": str(dirs["tmp"]),
           "HOME": str(dirs["home"]), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("DASK_TEMPORARY_DIRECTORY", None)
    proc = subprocess.Popen([sys.executable, "-m", "tensorlite.data.service", "--workers", "1"],
                            cwd=dirs["cwd"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert "dispatcher at tls://127.0.0.1:" in proc.stdout.readline()
        assert list(dirs["tmp"].rglob("credentials.pem"))
        os.kill(proc.pid, 15)
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
    assert proc.returncode == 0
    for _ in range(100):   # bounded: the workers end as the cluster closes
        if not _process_group_alive(proc.pid):
            break
        time.sleep(0.1)
    assert not _process_group_alive(proc.pid)
    for name, d in dirs.items():
        assert list(d.rglob("*")) == [], f"left in {name}: {list(d.rglob('*'))}"
