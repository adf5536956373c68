"""KerasTuner on tensorlite: the search space API, the four tuners on the digits data, a
search killed after 3 of 6 trials (SIGKILL, subprocess) resumed with overwrite=False to
exactly 6 trials whose best model reloads, parallel worker processes, Hyperband's
brackets, and seed 001's snippet as written."""
import glob
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.keras_tuner as kt

pytest.importorskip("sklearn")

BUILD = '''
import os, json, signal, sys
import numpy as np
import tensorlite as tf
import tensorlite.keras_tuner as kt

data = np.load(os.environ["DIGITS_NPZ"])  # the digits, saved by the test (no sklearn here)
x, y, xv, yv = data["x"], data["y"], data["xv"], data["yv"]
LOG = os.environ.get("BUILD_LOG")

def build_model(hp):
    if LOG and hp.values:
        with open(LOG, "a") as f:
            f.write(json.dumps(hp.values) + "\\n")
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(hp.Int("units", 8, 64, step=8), activation="relu",
                              input_shape=(64,)),
        tf.keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(
                      hp.Float("learning_rate", 1e-3, 1e-1, sampling="log")),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model
'''


def _write(tmp_path, body):
    script = tmp_path / "search.py"
    script.write_text(BUILD + textwrap.dedent(body))
    (x, y), (xv, yv) = tf.keras.datasets.digits.load_data()
    np.savez(tmp_path / "digits.npz", x=x.reshape(-1, 64)[:400] / 255.0, y=y[:400],
             xv=xv.reshape(-1, 64)[:200] / 255.0, yv=yv[:200])
    return script


def _run(script, *args, env=None):
    full = dict(os.environ, PYTHONPATH=os.getcwd(),
                DIGITS_NPZ=str(script.parent / "digits.npz"), **(env or {}))
    return subprocess.Popen([sys.executable, str(script), *map(str, args)], env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _trials(project):
    return {os.path.basename(os.path.dirname(p)): json.load(open(p))
            for p in glob.glob(os.path.join(project, "trial_*", "trial.json"))}


SEARCH = '''
class KillAfter(tf.keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        done = [p for p in os.listdir(sys.argv[1]) if p.startswith("trial_")]
        completed = sum(json.load(open(os.path.join(sys.argv[1], p, "trial.json")))["status"]
                        == "COMPLETED" for p in done)
        if int(sys.argv[2]) and completed >= int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

tuner = kt.RandomSearch(build_model, objective="val_accuracy", max_trials=6, seed=7,
                        directory=os.path.dirname(sys.argv[1]),
                        project_name=os.path.basename(sys.argv[1]), overwrite=False)
tuner.search(x, y, epochs=2, validation_data=(xv, yv), verbose=0, callbacks=[KillAfter()])
best = tuner.get_best_models(1)[0]
print("BEST", best.evaluate(xv, yv, verbose=0)[1], tuner.oracle.get_best_trials(1)[0].score)
'''


def test_killed_search_resumes_without_repeating_trials(tmp_path):
    script = _write(tmp_path, SEARCH)
    project = tmp_path / "tuning" / "digits"
    log = tmp_path / "builds.log"
    first = _run(script, project, 3, env={"BUILD_LOG": str(log)})
    out, err = first.communicate(timeout=300)
    assert first.returncode == -9, err.decode()[-2000:]
    before = _trials(project)
    completed = sorted(k for k, t in before.items() if t["status"] == "COMPLETED")
    assert completed == ["trial_00", "trial_01", "trial_02"]
    assert before["trial_03"]["status"] == "RUNNING"  # killed inside trial 4
    builds_before = len(log.read_text().splitlines())
    second = _run(script, project, 0, env={"BUILD_LOG": str(log)})
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err.decode()[-3000:]
    after = _trials(project)
    assert sorted(after) == [f"trial_{i:02d}" for i in range(6)]
    assert all(t["status"] == "COMPLETED" for t in after.values())
    for k in completed:  # finished trials were not run again
        assert after[k] == before[k]
    assert after["trial_03"]["values"] == before["trial_03"]["values"]  # re-run as it was
    # trials 4, 5, 6 only, then the best model's rebuild for get_best_models
    assert len(log.read_text().splitlines()) - builds_before == 4
    values = [tuple(sorted(t["values"].items())) for t in after.values()]
    assert len(set(values)) == 6
    line = [ln for ln in out.decode().splitlines() if ln.startswith("BEST")][0]
    accuracy, score = map(float, line.split()[1:])
    assert accuracy == pytest.approx(score, abs=1e-6)  # the reloaded best model
    assert accuracy > 0.5


def test_parallel_workers_share_the_trials(tmp_path):
    body = '''
    tuner = kt.RandomSearch(build_model, objective="val_accuracy", max_trials=4, seed=3,
                            directory=os.path.dirname(sys.argv[1]),
                            project_name=os.path.basename(sys.argv[1]))
    tuner.search(x, y, epochs=1, validation_data=(xv, yv), verbose=0)
    '''
    script = _write(tmp_path, body)
    project = tmp_path / "par" / "digits"
    os.makedirs(project)
    workers = [_run(script, project, env={"KERASTUNER_TUNER_ID": f"tuner{i}"})
               for i in range(2)]
    for w in workers:
        _, err = w.communicate(timeout=300)
        assert w.returncode == 0, err.decode()[-2000:]
    trials = _trials(project)
    assert sorted(trials) == [f"trial_{i:02d}" for i in range(4)]
    assert all(t["status"] == "COMPLETED" for t in trials.values())
    assert {t["owner"]["pid"] for t in trials.values()} <= {w.pid for w in workers}
    assert len({tuple(sorted(t["values"].items())) for t in trials.values()}) == 4


def _digits():
    (x, y), (xv, yv) = tf.keras.datasets.digits.load_data()
    return (x.reshape(-1, 64)[:300] / 255.0, y[:300]), (xv.reshape(-1, 64)[:100] / 255.0,
                                                        yv[:100])


def _model(hp):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(hp.Choice("units", [8, 16, 32]), activation="relu",
                              input_shape=(64,)),
        tf.keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(hp.Float("lr", 1e-3, 1e-1,
                                                              sampling="log")),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_hyperband_runs_its_brackets(tmp_path, capsys):
    (x, y), val = _digits()
    tuner = kt.Hyperband(_model, objective="val_accuracy", max_epochs=4, factor=2, seed=1,
                         directory=str(tmp_path), project_name="hb")
    tuner.search(x, y, validation_data=val, verbose=0)
    schedule = tuner.oracle.schedule()
    assert [s[1] for s in schedule] == [2, 2, 2, 1, 1, 0]  # brackets, then their rounds
    trials = tuner.oracle.trials.values()
    by_slot = {}
    for t in trials:
        v = t.hyperparameters.values
        by_slot.setdefault((v["tuner/bracket"], v["tuner/round"]), []).append(t)
    assert len(by_slot[(2, 0)]) == tuner.oracle._size(2, 0)
    for (b, r), ts in by_slot.items():
        for t in ts:
            assert t.hyperparameters.values["tuner/epochs"] == tuner.oracle._epochs(b, r)
            assert len(t.metrics["loss"]) == t.hyperparameters.values["tuner/epochs"] - \
                t.hyperparameters.values["tuner/initial_epoch"]
            if r:  # continues one of the previous round's best trials
                parent = tuner.oracle.trials[t.hyperparameters.values["tuner/trial_id"]]
                prev = sorted(by_slot[(b, r - 1)], key=lambda p: -p.score)
                assert parent.trial_id in [p.trial_id for p in prev[:len(ts)]]
    best = tuner.get_best_models()[0]
    assert best.evaluate(*val, verbose=0)[1] == pytest.approx(
        tuner.oracle.get_best_trials()[0].score, abs=1e-6)


def test_grid_and_bayesian_search(tmp_path, capsys):
    (x, y), val = _digits()

    def build(hp):
        hp.Fixed("lr", 0.05)
        return _model(hp)
    grid = kt.GridSearch(build, objective="val_loss", directory=str(tmp_path),
                         project_name="grid")
    grid.search(x, y, epochs=1, validation_data=val, verbose=0)
    assert sorted(t.hyperparameters["units"] for t in grid.oracle.trials.values()) == \
        [8, 16, 32]
    bayes = kt.BayesianOptimization(_model, objective="val_accuracy", max_trials=5,
                                    num_initial_points=2, seed=0, directory=str(tmp_path),
                                    project_name="bo")
    bayes.search(x, y, epochs=1, validation_data=val, verbose=0)
    assert len(bayes.oracle.trials) == 5
    best_hp = bayes.get_best_hyperparameters()[0]
    assert best_hp["units"] in (8, 16, 32) and 1e-3 <= best_hp["lr"] <= 1e-1
    bayes.search_space_summary()
    bayes.results_summary(2)
    out = capsys.readouterr().out
    assert "Default search space size: 2" in out and "units (Choice)" in out
    assert "Objective(name='val_accuracy', direction='max')" in out and "Score:" in out


def test_hyperparameters_api():
    hp = kt.HyperParameters()
    assert hp.Int("units", 32, 512, step=32) == 32
    assert hp.Float("lr", 1e-4, 1e-2, sampling="log") == pytest.approx(1e-4)
    assert hp.Boolean("dropout") is False
    assert hp.Fixed("batch", 64) == 64
    kind = hp.Choice("model", ["mlp", "cnn"])
    with hp.conditional_scope("model", ["cnn"]):
        assert hp.Int("filters", 8, 64) is None  # inactive: model is 'mlp'
    with hp.conditional_scope("model", ["mlp"]):
        assert hp.Int("layers", 1, 3) == 1
    assert kind == "mlp" and set(hp.values) == {"units", "lr", "dropout", "batch", "model",
                                                "layers"}
    lr = hp.space[1]
    assert lr.from_unit(0.5) == pytest.approx(1e-3)
    rng = np.random.default_rng(0)
    samples = [hp.space[0].random(rng) for _ in range(200)]
    assert set(samples) <= set(range(32, 513, 32)) and len(set(samples)) > 8
    again = kt.HyperParameters.from_config(json.loads(json.dumps(hp.get_config())))
    assert again.values == hp.values and [h.name for h in again.space] == \
        [h.name for h in hp.space]
    with pytest.raises(ValueError, match="sampling"):
        hp.Float("bad", 0.0, 1.0, sampling="log")
    with pytest.raises(ValueError, match="not defined"):
        with hp.conditional_scope("nope", [1]):
            pass


def test_seed_001_snippet(tmp_path, monkeypatch):
    """Seed 001's tuner snippet as written (its model and data made small and local)."""
    monkeypatch.chdir(tmp_path)
    words = tf.data.Dataset.from_tensor_slices(
        (np.random.default_rng(0).random((64, 4)).astype("float32"),
         np.eye(3, dtype="float32")[np.random.default_rng(1).integers(0, 3, 64)]))

    class EncoderDecoder(tf.keras.Model):
        def __init__(self, rnn_units):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(rnn_units // 64, activation="relu")
            self.out = tf.keras.layers.Dense(3, activation="softmax")

        def call(self, x):
            return self.out(self.hidden(x))

    def build_model(hp):
        model = EncoderDecoder(
            rnn_units=hp.Int('units', min_value=256, max_value=1100, step=256))
        model.compile(loss=tf.keras.losses.CategoricalCrossentropy(), optimizer='adam',
                      metrics=['accuracy'])
        return model

    data = words
    tuner = kt.tuners.RandomSearch(build_model, objective='accuracy', max_trials=2,
                                   project_name='text_generation')
    tuner.search(data.batch(256), epochs=2,
                 callbacks=[tf.keras.callbacks.ModelCheckpoint('text_gen.weights',
                                                               save_weights_only=True)])
    assert len(tuner.oracle.trials) == 2
    assert os.path.isdir(tmp_path / "text_generation")
    assert tuner.get_best_hyperparameters()[0]["units"] in (256, 512, 768, 1024)


def _unbuilt(hp):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(hp.Int("units", 4, 8, step=4), activation="relu"),
        tf.keras.layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def _toy_data():
    rng = np.random.default_rng(0)
    x = rng.random((64, 5)).astype("float32")
    return x, (x.sum(1) > 2.5).astype("int32")


def test_best_model_of_a_hypermodel_without_input_shape_is_built_from_the_data(tmp_path):
    x, y = _toy_data()
    tuner = kt.RandomSearch(_unbuilt, objective="val_accuracy", max_trials=2,
                            directory=str(tmp_path), project_name="unbuilt")
    tuner.search(x, y, epochs=2, validation_data=(x, y), verbose=0)
    best = tuner.get_best_models(1)[0]
    assert best.built and best.predict(x[:3], verbose=0).shape == (3, 2)
    trial = tuner.oracle.get_best_trials(1)[0]
    assert best.evaluate(x, y, verbose=0, return_dict=True)["accuracy"] == \
        pytest.approx(max(trial.metrics["val_accuracy"]))


def test_failed_trials_report_their_traceback_and_an_all_failed_search_says_so(tmp_path,
                                                                               capsys):
    x, y = _toy_data()

    def failing(hp):
        model = _unbuilt(hp)

        def boom_loss(y_true, y_pred):
            raise ValueError("the loss is broken")
        model.compile("adam", boom_loss)
        return model
    tuner = kt.RandomSearch(failing, objective="val_accuracy", max_trials=2,
                            directory=str(tmp_path), project_name="failing")
    with pytest.raises(RuntimeError, match="(?s)All 2 trials failed.*the loss is broken"):
        tuner.search(x, y, epochs=1, validation_data=(x, y), verbose=0)
    assert "Traceback" in capsys.readouterr().err
    assert all("boom_loss" in t.message for t in tuner.oracle.trials.values())
    with pytest.raises(ValueError, match="No trial .* completed"):
        tuner.get_best_models()
    many = kt.RandomSearch(failing, objective="val_accuracy", max_trials=9,
                           directory=str(tmp_path), project_name="many",
                           max_consecutive_failed_trials=1)
    with pytest.raises(RuntimeError, match="(?s)1 consecutive trials failed.*loss is broken"):
        many.search(x, y, epochs=1, validation_data=(x, y), verbose=0)
