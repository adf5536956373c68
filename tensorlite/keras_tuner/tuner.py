"""Tuners: run trials (build a model from the trial's hyperparameters, fit it, score it by
the objective's best epoch), keep the best epoch's weights, and report.

`search(*fit_args, **fit_kwargs)` takes what `model.fit` takes; each trial gets deep
copies of the callbacks. Results live in `directory/project_name` (see oracles.py): with
overwrite=False a new search continues the previous one; overwrite=True removes the
tuner's own files there (trial_NN/, oracle.json, oracle.lock), never anything else.
Several processes running the same search on the same directory share its trials (set
KERASTUNER_TUNER_ID per process). What is read back from the directory is checked
(project_files.py).

Example:
    >>> def build_model(hp):
    ...     model = tf.keras.Sequential([tf.keras.layers.Dense(
    ...         hp.Int("units", 32, 256, step=32), activation="relu"),
    ...         tf.keras.layers.Dense(10)])
    ...     model.compile(tf.keras.optimizers.Adam(hp.Float("lr", 1e-4, 1e-2,
    ...                   sampling="log")), "sparse_categorical_crossentropy",
    ...                   metrics=["accuracy"])
    ...     return model
    >>> tuner = kt.RandomSearch(build_model, objective="val_accuracy", max_trials=5)
    >>> tuner.search(x, y, epochs=3, validation_split=0.2)  # doctest: +SKIP
"""
import copy
import os
import sys
import time
import traceback

from tensorlite.framework import errors
from tensorlite.keras.callbacks import Callback
from tensorlite.keras_tuner import oracles as oracle_module
from tensorlite.keras_tuner import project_files
from tensorlite.keras_tuner.trial import TrialStatus

__all__ = ["HyperModel", "Tuner", "RandomSearch", "GridSearch", "Hyperband",
           "BayesianOptimization"]


class HyperModel:
    """`kt.HyperModel`: subclass and implement build(hp); override fit(hp, model, ...) to
    tune training too."""

    def __init__(self, name=None, tunable=True):
        self.name, self.tunable = name, tunable

    def build(self, hp):
        raise NotImplementedError(f"{type(self).__name__} must implement build(hp)")

    def fit(self, hp, model, *args, **kwargs):
        return model.fit(*args, **kwargs)


class _FunctionHyperModel(HyperModel):
    def __init__(self, fn):
        super().__init__(getattr(fn, "__name__", None))
        self._fn = fn

    def build(self, hp):
        return self._fn(hp)


def _data_shape(x):
    """(None, ...) of the first input's examples (an array or a dataset's first
    component), or None when it cannot tell."""
    from tensorlite.data.dataset import DatasetV2  # noqa: PLC0415
    if isinstance(x, DatasetV2):
        spec = x.element_spec
        spec = spec[0] if isinstance(spec, tuple) else spec
        shape = getattr(spec, "shape", None)
        return None if shape is None or shape.rank is None else (None,) + tuple(
            shape.as_list()[1:])
    shape = getattr(x, "shape", None)
    if shape is None or isinstance(x, (dict, list, tuple)):
        return None
    return (None,) + tuple(shape)[1:]


class _BestEpoch(Callback):
    """Keeps the weights of the epoch with the best objective value so far."""

    def __init__(self, tuner, trial, execution):
        super().__init__()
        self.tuner, self.trial, self.execution = tuner, trial, execution
        self.best = None

    def on_epoch_end(self, epoch, logs=None):
        objective = self.tuner.oracle.objective
        value = (logs or {}).get(objective.name)
        if value is None:
            raise KeyError(f"Objective {objective.name!r} is not among the metrics fit "
                           f"reports ({sorted(logs or {})}); pass validation data for a "
                           f"val_ metric, or add the metric in compile()")
        if self.execution == 0 and (self.best is None or objective.better(value, self.best)):
            self.best = value
            self.tuner._save_weights(self.trial, self.model, epoch)


class Tuner:
    """Base tuner over an oracle."""

    def __init__(self, oracle, hypermodel=None, max_model_size=None, optimizer=None,
                 loss=None, metrics=None, distribution_strategy=None, directory=None,
                 project_name=None, logger=None, tuner_id=None, overwrite=False,
                 executions_per_trial=1, **kwargs):
        if hypermodel is None:
            raise ValueError("Received `hypermodel=None`: pass a function build_model(hp) "
                             "or a kt.HyperModel")
        self.hypermodel = hypermodel if isinstance(hypermodel, HyperModel) else \
            _FunctionHyperModel(hypermodel)
        self.oracle = oracle
        self.directory = directory or "."
        self.project_name = project_name or "untitled_project"
        self.project_dir = os.path.join(self.directory, self.project_name)
        self.executions_per_trial = int(executions_per_trial)
        self._input_shape = None  # the data's (None, ...) shape, for unbuilt best models
        self.tuner_id = tuner_id or os.environ.get("KERASTUNER_TUNER_ID", "tuner0")
        if overwrite and os.path.lexists(self.project_dir):
            project_files.remove_project(self.project_dir)
        self.oracle._configure(self.project_dir)
        if self.oracle.objective is None:
            raise ValueError("An objective is required: objective='val_accuracy' or "
                             "kt.Objective(name, direction)")

    # -- searching -------------------------------------------------------------------------
    def search(self, *fit_args, **fit_kwargs):
        """Runs trials until the oracle stops (max_trials, an exhausted grid or schedule)."""
        self._populate_initial_space()
        self._input_shape = _data_shape(fit_args[0] if fit_args else fit_kwargs.get("x"))
        while True:
            trial = self.oracle.create_trial(self.tuner_id)
            if trial.status == TrialStatus.STOPPED:
                break
            if trial.status == TrialStatus.IDLE:
                time.sleep(0.2)
                continue
            self._run_and_record(trial, fit_args, fit_kwargs)
        trials = list(self.oracle.trials.values())
        if trials and all(t.status == TrialStatus.FAILED for t in trials):
            raise RuntimeError(f"All {len(trials)} trials failed; the last one's error:\n"
                               f"{trials[-1].message}")

    def _populate_initial_space(self):
        hp = self.oracle.hyperparameters.copy()
        hp.values = {}
        self.hypermodel.build(hp)
        self.oracle.update_space(hp)

    def _run_and_record(self, trial, fit_args, fit_kwargs):
        print(f"\nSearch: Running Trial #{int(trial.trial_id) + 1}\n")
        try:
            histories = self.run_trial(trial, *fit_args, **fit_kwargs)
        except Exception:  # noqa: BLE001 - a failed trial is recorded, the search goes on
            trial.status, trial.message = TrialStatus.FAILED, traceback.format_exc()
            self.oracle.end_trial(trial)
            print(f"Trial {trial.trial_id} failed:\n{trial.message}", file=sys.stderr)
            return
        objective = self.oracle.objective
        scores, best_steps = [], []
        for h in histories:
            series = h.history.get(objective.name, [])
            best = objective.best_of(series)
            scores.append(best)
            best_steps.append(series.index(best))
        trial.score = float(sum(scores) / len(scores))
        trial.best_step = best_steps[0]
        trial.metrics = {k: [float(v) for v in vals] for k, vals in
                         histories[0].history.items()}
        trial.status = TrialStatus.COMPLETED
        self.oracle.end_trial(trial)
        print(f"Trial {trial.trial_id} Complete; {objective.name}: {trial.score}")

    def run_trial(self, trial, *args, **kwargs):
        """Builds and fits the trial's model executions_per_trial times; returns the
        History objects."""
        histories = []
        for execution in range(self.executions_per_trial):
            hp = trial.hyperparameters.copy()
            model = self._build(hp)
            fit_kwargs = dict(kwargs)
            callbacks = [_copy(c) for c in fit_kwargs.pop("callbacks", None) or []]
            callbacks.append(_BestEpoch(self, trial, execution))
            fit_kwargs.update(self._fit_overrides(trial, model))
            histories.append(self.hypermodel.fit(hp, model, *args, callbacks=callbacks,
                                                 **fit_kwargs))
        return histories

    def _fit_overrides(self, trial, model):
        return {}

    def _build(self, hp):
        model = self.hypermodel.build(hp)
        if model is None:
            raise RuntimeError("The hypermodel's build(hp) returned None: return the "
                               "compiled model")
        self.oracle.update_space(hp)
        return model

    # -- weights ---------------------------------------------------------------------------
    def _save_weights(self, trial, model, epoch):
        """Saves under a new name, then records it in trial.json (atomic), then removes the
        previous file: a kill never leaves a trial pointing at torn weights."""
        name = f"checkpoint_epoch{epoch}"
        model.save_weights(self._weights_path(trial, name))
        old, trial.weights = trial.weights, name
        self.oracle.end_trial(trial)
        if old and old != name:
            prefix = self._weights_path(trial, old)
            for suffix in (".index", ".data-00000-of-00001"):
                path = project_files.inside(self.project_dir, prefix + suffix)
                if os.path.isfile(path) and not os.path.islink(path):
                    os.unlink(path)

    def _weights_path(self, trial, name):
        """The checkpoint prefix `name` in the trial's directory (a plain name, inside the
        project: names come from trial.json, which may be crafted)."""
        project_files.check_weights_name(name, f"trial {trial.trial_id}")
        return project_files.inside(self.project_dir,
                                    os.path.join(self.oracle.trial_dir(trial.trial_id), name))

    def load_model(self, trial):
        """The trial's model with its best epoch's weights."""
        if not trial.weights:
            raise ValueError(f"Trial {trial.trial_id} has no saved weights (status "
                             f"{trial.status})")
        model = self.hypermodel.build(trial.hyperparameters.copy())
        if not model.built and self._input_shape is not None:
            model.build(self._input_shape)  # the shape of the data the search trained on
        # an unbuilt model (a search from another process) gets its weights when it builds
        model.load_weights(self._weights_path(trial, trial.weights))
        return model

    # -- results ---------------------------------------------------------------------------
    def get_best_models(self, num_models=1):
        """The best `num_models` models, their best epoch's weights loaded."""
        best = self.oracle.get_best_trials(num_models)
        if not best:
            raise ValueError(f"No trial of {self.project_dir} completed, so there is no best "
                             f"model; run search() (the failed trials' errors are in their "
                             f"trial.json files)")
        return [self.load_model(t) for t in best]

    def get_best_hyperparameters(self, num_trials=1):
        return [t.hyperparameters for t in self.oracle.get_best_trials(num_trials)]

    def search_space_summary(self, extended=False):
        hp = self.oracle.hyperparameters
        print("Search space summary")
        print(f"Default search space size: {len(hp.space)}")
        for item in hp.space:
            print(f"{item.name} ({item.kind})")
            print(item.config())

    def results_summary(self, num_trials=10):
        print("Results summary")
        print(f"Results in {self.project_dir}")
        print(f"Showing {num_trials} best trials")
        print(self.oracle.objective)
        for trial in self.oracle.get_best_trials(num_trials):
            print()
            print(trial.summary())

    @property
    def remaining_trials(self):
        if self.oracle.max_trials is None:
            return None
        return self.oracle.max_trials - len(self.oracle.trials)


def _copy(callback):
    try:
        return copy.deepcopy(callback)
    except Exception:  # noqa: BLE001 - some callbacks hold files or locks: share those
        return callback


def _oracle_kwargs(kwargs):
    names = ("hyperparameters", "allow_new_entries", "tune_new_entries",
             "max_retries_per_trial", "max_consecutive_failed_trials")
    return {k: kwargs.pop(k) for k in names if k in kwargs}


class RandomSearch(Tuner):
    """`kt.RandomSearch`: max_trials random points of the space."""

    def __init__(self, hypermodel=None, objective=None, max_trials=10, seed=None, **kwargs):
        oracle = oracle_module.RandomSearchOracle(objective, max_trials, seed=seed,
                                                  **_oracle_kwargs(kwargs))
        super().__init__(oracle, hypermodel, **kwargs)


class GridSearch(Tuner):
    """`kt.GridSearch`: the space's grid in order (see GridSearchOracle)."""

    def __init__(self, hypermodel=None, objective=None, max_trials=None, seed=None,
                 **kwargs):
        oracle = oracle_module.GridSearchOracle(objective, max_trials, seed=seed,
                                                **_oracle_kwargs(kwargs))
        super().__init__(oracle, hypermodel, **kwargs)


class BayesianOptimization(Tuner):
    """`kt.BayesianOptimization`: Gaussian-process guided search."""

    def __init__(self, hypermodel=None, objective=None, max_trials=10,
                 num_initial_points=None, alpha=1e-4, beta=2.6, seed=None, **kwargs):
        oracle = oracle_module.BayesianOptimizationOracle(
            objective, max_trials, num_initial_points, alpha, beta, seed,
            **_oracle_kwargs(kwargs))
        super().__init__(oracle, hypermodel, **kwargs)


class Hyperband(Tuner):
    """`kt.Hyperband`: successive-halving brackets up to max_epochs (fit's `epochs` is
    set per trial)."""

    def __init__(self, hypermodel=None, objective=None, max_epochs=100, factor=3,
                 hyperband_iterations=1, seed=None, **kwargs):
        oracle = oracle_module.HyperbandOracle(objective, max_epochs, factor,
                                               hyperband_iterations, seed,
                                               **_oracle_kwargs(kwargs))
        super().__init__(oracle, hypermodel, **kwargs)

    def _fit_overrides(self, trial, model):
        values = trial.hyperparameters.values
        parent = values.get("tuner/trial_id")
        if parent is not None:
            parent_trial = self.oracle.trials.get(parent)
            if parent_trial is None or not parent_trial.weights:
                raise errors.NotFoundError(
                    None, None, f"Trial {trial.trial_id} continues trial {parent}, whose "
                                f"trial file or weights are missing or were skipped")
            model.load_weights(self._weights_path(parent_trial, parent_trial.weights))
        return {"epochs": values["tuner/epochs"],
                "initial_epoch": values["tuner/initial_epoch"]}
