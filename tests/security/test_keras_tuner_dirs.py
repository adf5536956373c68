"""KerasTuner's state stays in its project directory (issue 29): trial files with traversal,
non-numeric or mismatched ids, corrupt JSON, crafted checkpoint names or links out of the
project are reported (a RuntimeWarning naming the file) and skipped; the search goes on,
nothing outside the project is written or deleted, the canary is never created, and a
clean rerun works. Links planted for files the tuner writes are refused with
PermissionDeniedError."""
import json
import os
import socket
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlite as tf
import tensorlite.keras_tuner as kt
from tests.security.conftest import tree_state

X = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
Y = X.sum(axis=1, keepdims=True)


MAX_BUILDS = 40
MAX_EPOCHS = 100
_builds, _epochs = [0], [0]  # models built and epochs trained in this test


@pytest.fixture(autouse=True)
def _count_builds():
    _builds[0] = _epochs[0] = 0


class SearchLoops(BaseException):
    """Not an Exception, so the tuner cannot record it as a failed trial and go on."""


def build_model(hp):
    """A tiny model; refuses after MAX_BUILDS builds in a test, so an oracle that keeps
    re-running a crafted trial fails the test instead of looping forever."""
    _builds[0] += 1
    if _builds[0] > MAX_BUILDS:
        raise SearchLoops("build_model called too often: the search loops")
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(hp.Int("units", 2, 16, step=2), input_shape=(4,)),
        tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    return model


def _tuner(directory, max_trials, overwrite=False):
    return kt.RandomSearch(build_model, objective="val_loss", max_trials=max_trials,
                           seed=3, directory=str(directory), project_name="proj",
                           overwrite=overwrite)


class _EpochBudget(tf.keras.callbacks.Callback):
    """Stops a search that trains far longer than any real trial here would (a crafted
    epoch count obeyed), failing the test instead of running for hours."""

    def on_epoch_end(self, epoch, logs=None):
        _epochs[0] += 1
        if _epochs[0] > MAX_EPOCHS:
            raise SearchLoops("far more epochs than the search has trials: a crafted "
                              "epoch count was obeyed")


def _search(tuner):
    tuner.search(X, Y, epochs=1, validation_data=(X, Y), verbose=0,
                 callbacks=[_EpochBudget()])


def _dead_pid():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _trial(trial_id, status="COMPLETED", **extra):
    d = {"trial_id": trial_id, "values": {"units": 4}, "status": status, "score": 0.0,
         "best_step": 0, "metrics": {}, "owner": None, "message": None, "weights": None}
    d.update(extra)
    return json.dumps(d)


def _running_dead(trial_id, **extra):
    """A RUNNING trial whose process died on this host: the oracle runs it again."""
    return _trial(trial_id, "RUNNING", score=None, owner={
        "tuner_id": "tuner0", "host": socket.gethostname(), "pid": _dead_pid()}, **extra)


CRAFTED = {
    "traversal_id": lambda: _running_dead("../../../../../canary"),
    "absolute_id": lambda: _running_dead("/tmp/tl_tuner_canary"),
    "non_numeric_id": lambda: _running_dead("abc"),
    "mismatched_id": lambda: _running_dead("07"),
    "int_id": lambda: _running_dead(0),
    "corrupt_json": lambda: '{"trial_id": "00", "status": ',
    "deep_json": lambda: "[" * 100000 + "]" * 100000,
    "not_a_dict": lambda: "[1, 2, 3]",
    "bad_utf8": lambda: b"\xff\xfe{}",
    "traversal_weights": lambda: _trial("00", weights="../../../../canary"),
    "weights_with_slash": lambda: _trial("00", weights="sub/ckpt"),
    "traversal_parent": lambda: _trial("00", values={"units": 4,
                                                     "tuner/trial_id": "../../canary"}),
    "bad_owner": lambda: _trial("00", "RUNNING", owner={"host": socket.gethostname(),
                                                       "pid": "not a pid"}),
    "huge_owner_pid": lambda: _trial("00", "RUNNING", owner={"host": socket.gethostname(),
                                                              "pid": 10 ** 15}),
    "group_owner_pid": lambda: _trial("00", "RUNNING", owner={"host": socket.gethostname(),
                                                               "pid": -1}),
    "bad_status": lambda: _trial("00", status="PWNED"),
    "nan_score": lambda: _trial("00", score=float("nan")),
    "huge_units": lambda: _running_dead("00", values={"units": 10 ** 12}),
    "units_as_text": lambda: _running_dead("00", values={"units": "8"}),
    "units_off_domain": lambda: _running_dead("00", values={"units": 3.5}),
    "nested_value": lambda: _running_dead("00", values={"units": 4, "other": [[1]]}),
}


@pytest.fixture
def layout(tmp_path):
    """tmp_path/root/{tuning/proj, sibling.txt}: the project and a file next to it."""
    root = tmp_path / "root"
    project = root / "tuning" / "proj"
    project.mkdir(parents=True)
    (root / "sibling.txt").write_text("not the tuner's")
    return root, project


def _outside(tmp_path, project):
    state = tree_state(tmp_path)
    rel = os.path.relpath(project, tmp_path)
    return {k: v for k, v in state.items() if not k.startswith(rel)}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_trial_file_is_skipped_and_search_goes_on(tmp_path, layout, canary, case):
    root, project = layout
    crafted = project / "trial_00" / "trial.json"
    crafted.parent.mkdir()
    data = CRAFTED[case]()
    crafted.write_bytes(data if isinstance(data, bytes) else data.encode())
    before_outside, before_crafted = _outside(tmp_path, project), tree_state(crafted.parent)
    tuner = _tuner(root / "tuning", max_trials=2)
    with pytest.warns(RuntimeWarning, match=r"skipping .*trial_00.trial\.json"):
        _search(tuner)
    trials = tuner.oracle.trials
    assert sorted(trials) == ["01", "02"]  # new ids never overwrite the skipped file
    assert all(t.status == "COMPLETED" for t in trials.values())
    assert tree_state(crafted.parent) == before_crafted
    assert _outside(tmp_path, project) == before_outside
    assert not os.path.exists("/tmp/tl_tuner_canary")
    assert len(tuner.get_best_models(2)) == 2  # only the real trials' checkpoints load
    clean = _tuner(root / "tuning", max_trials=1, overwrite=True)
    _search(clean)
    assert sorted(clean.oracle.trials) == ["00"]


def test_trial_dir_linked_out_of_the_project_is_skipped(tmp_path, layout, canary):
    root, project = layout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "trial.json").write_text(_running_dead("00"))
    os.symlink(elsewhere, project / "trial_00")
    before = tree_state(elsewhere)
    tuner = _tuner(root / "tuning", max_trials=2)
    with pytest.warns(RuntimeWarning, match="outside the tuner's project directory"):
        _search(tuner)
    assert sorted(tuner.oracle.trials) == ["01", "02"]
    assert tree_state(elsewhere) == before


def test_corrupt_oracle_json_is_skipped_and_rewritten(tmp_path, layout):
    root, project = layout
    (project / "oracle.json").write_text('{"hyperparameters": {"space": [{"class_name": ')
    before = _outside(tmp_path, project)
    tuner = _tuner(root / "tuning", max_trials=2)
    with pytest.warns(RuntimeWarning, match=r"skipping .*oracle\.json"):
        _search(tuner)
    assert len(tuner.oracle.trials) == 2
    saved = json.loads((project / "oracle.json").read_text())
    assert [h["config"]["name"] for h in saved["hyperparameters"]["space"]] == ["units"]
    assert _outside(tmp_path, project) == before


@pytest.mark.parametrize("config", [
    {"hyperparameters": {"space": [{"class_name": "os.system", "config": {"name": "x"}}]}},
    {"hyperparameters": {"space": [{"class_name": "Int", "config": {}}]}},
    {"hyperparameters": [1]}, [], {"hyperparameters": {"space": 5}}])
def test_crafted_oracle_json_is_skipped(tmp_path, layout, canary, config):
    root, project = layout
    (project / "oracle.json").write_text(json.dumps(config))
    tuner = _tuner(root / "tuning", max_trials=1)
    with pytest.warns(RuntimeWarning, match=r"skipping .*oracle\.json"):
        _search(tuner)
    assert len(tuner.oracle.trials) == 1


@pytest.mark.parametrize("name", ["oracle.json", "oracle.lock"])
def test_state_file_linked_out_is_refused(tmp_path, layout, canary, name):
    root, project = layout
    os.symlink(canary, project / name)  # a dangling link to where the canary would be
    before = _outside(tmp_path, project)
    tuner = _tuner(root / "tuning", max_trials=1)
    with pytest.raises(tf.errors.PermissionDeniedError, match="outside the tuner's|lock"):
        _search(tuner)
    assert _outside(tmp_path, project) == before


def test_hyperband_epochs_from_a_trial_file_are_checked(tmp_path, layout, canary):
    root, project = layout
    crafted = project / "trial_00" / "trial.json"
    crafted.parent.mkdir()
    crafted.write_text(_running_dead("00", values={
        "units": 4, "tuner/epochs": 10 ** 9, "tuner/initial_epoch": 0, "tuner/bracket": 0,
        "tuner/round": 0, "tuner/iteration": 0}))
    tuner = kt.Hyperband(build_model, objective="val_loss", max_epochs=2, factor=3, seed=3,
                         directory=str(root / "tuning"), project_name="proj")
    with pytest.warns(RuntimeWarning, match=r"tuner/epochs 1000000000 is not"):
        _search(tuner)
    trials = tuner.oracle.trials
    assert "00" not in trials and trials
    assert all(t.hyperparameters.values["tuner/epochs"] <= 2 for t in trials.values())


def test_overwrite_removes_only_what_the_tuner_wrote(tmp_path, layout, canary):
    root, project = layout
    _search(_tuner(root / "tuning", max_trials=1))
    (project / "notes.txt").write_text("the user's")
    (project / "trial_xyz").mkdir()  # not a trial name the tuner writes
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("the user's too")
    os.symlink(elsewhere, project / "trial_07")
    before = tree_state(elsewhere)
    clean = _tuner(root / "tuning", max_trials=1, overwrite=True)
    assert sorted(os.listdir(project)) == ["notes.txt", "trial_07", "trial_xyz"]
    assert tree_state(elsewhere) == before
    _search(clean)  # trial_07 holds no trial file: not a trial, and its name is not reused
    assert {k: t.status for k, t in clean.oracle.trials.items()} == {"08": "COMPLETED"}
    assert tree_state(elsewhere) == before


def test_overwrite_of_a_linked_project_is_refused(tmp_path, layout):
    root, project = layout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("the user's")
    os.symlink(elsewhere, root / "tuning" / "linked")
    with pytest.raises(tf.errors.PermissionDeniedError, match="is a link"):
        kt.RandomSearch(build_model, objective="val_loss", max_trials=1,
                        directory=str(root / "tuning"), project_name="linked", overwrite=True)
    assert (elsewhere / "keep.txt").read_text() == "the user's"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10 ** 15, 10 ** 15) | st.floats() |
    st.sampled_from(["00", "01", "../x", "/tmp/x", "RUNNING", "COMPLETED", "units",
                     socket.gethostname(), "tuner/trial_id", "ckpt", "a/b"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["trial_id", "status", "values", "score", "owner", "weights",
                         "host", "pid", "units", "tuner/trial_id", "best_step",
                         "metrics", "message"]), inner, max_size=6),
    max_leaves=12)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(d=_JSON)
def test_any_json_in_a_trial_file_is_used_or_skipped(tmp_path_factory, d):
    """Whatever JSON a trial file holds, the oracle lists it as a valid trial or skips it
    with a warning, and creating the next trial works, all inside the project."""
    base = tmp_path_factory.mktemp("oracle")
    project = base / "proj"
    (project / "trial_00").mkdir(parents=True)
    (project / "trial_00" / "trial.json").write_text(json.dumps(d))
    hp = kt.HyperParameters()
    hp.Int("units", 2, 16, step=2)
    oracle = kt.oracles.RandomSearchOracle("val_loss", max_trials=3, hyperparameters=hp,
                                           seed=1)
    oracle._configure(str(project))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        trials = oracle.trials
        new = oracle.create_trial("tuner0")
    assert set(trials) <= {"00"}
    assert new.status == "RUNNING" and new.trial_id in ("00", "01")
    assert sorted(os.listdir(base)) == ["proj"]
    assert all(n.startswith(("trial_", "oracle")) for n in os.listdir(project))
