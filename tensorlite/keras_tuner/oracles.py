"""Oracles: which hyperparameters each trial tries. Their state is the project directory:
`oracle.json` (objective and search space) and `trial_NN/trial.json` per trial, each
written atomically, read and changed under an exclusive lock (`oracle.lock`, flock), and
checked when read (project_files.py: ids, names, paths inside the project; a corrupt trial
file is reported and skipped). So a
killed search resumes where it stopped (finished trials are never repeated; a trial whose
process died is run again with the same values), and several worker processes sharing
the directory (KerasTuner's "distributed" tuning, KERASTUNER_TUNER_ID naming each) split
the trials between them.
"""
import contextlib
import fcntl
import math
import os

import numpy as np

from tensorlite.framework import errors
from tensorlite.keras_tuner import project_files as files
from tensorlite.keras_tuner.hyperparameters import HyperParameters
from tensorlite.keras_tuner.trial import Trial, TrialStatus, owner, owner_alive, write_json

__all__ = ["Objective", "Oracle", "RandomSearchOracle", "GridSearchOracle",
           "HyperbandOracle", "BayesianOptimizationOracle"]

_MAX_COLLISIONS = 50


class Objective:
    """`kt.Objective(name, direction)`: the metric to optimise, 'min' or 'max'."""

    def __init__(self, name, direction):
        if direction not in ("min", "max"):
            raise ValueError(f"`direction` must be 'min' or 'max', got {direction!r}")
        self.name, self.direction = name, direction

    def better(self, a, b):
        return a < b if self.direction == "min" else a > b

    def best_of(self, values):
        return min(values) if self.direction == "min" else max(values)

    def __eq__(self, other):
        return isinstance(other, Objective) and (other.name, other.direction) == \
            (self.name, self.direction)

    def __repr__(self):
        return f"Objective(name={self.name!r}, direction={self.direction!r})"


def to_objective(obj):
    """A name ('val_accuracy': max, 'val_loss': min, as KerasTuner infers) or Objective."""
    if isinstance(obj, Objective):
        return obj
    if isinstance(obj, str):
        base = obj[4:] if obj.startswith("val_") else obj
        maximize = any(k in base for k in ("acc", "auc", "precision", "recall", "f1",
                                           "iou", "top_k"))
        return Objective(obj, "max" if maximize else "min")
    raise TypeError(f"objective must be a metric name or kt.Objective, got {obj!r}")


class Oracle:
    """Base oracle: subclasses implement populate_space(trials) -> values, 'IDLE' or
    'STOPPED'."""

    def __init__(self, objective=None, max_trials=None, hyperparameters=None,
                 allow_new_entries=True, tune_new_entries=True, seed=None,
                 max_retries_per_trial=0, max_consecutive_failed_trials=3):
        self.objective = to_objective(objective) if objective is not None else None
        self.max_trials = max_trials
        self.hyperparameters = hyperparameters.copy() if hyperparameters else \
            HyperParameters()
        self._fixed = set(self.hyperparameters._space)
        self.allow_new_entries = allow_new_entries
        self.tune_new_entries = tune_new_entries
        self.seed = np.random.randint(1, 10000) if seed is None else seed
        self.max_consecutive_failed_trials = max_consecutive_failed_trials
        self.project_dir = None
        self._reported = set()

    # -- files ----------------------------------------------------------------------------
    def _configure(self, project_dir):
        self.project_dir = project_dir
        self._reported = set()  # skipped state files already warned about
        os.makedirs(project_dir, exist_ok=True)

    @contextlib.contextmanager
    def _locked(self):
        path = files.inside(self.project_dir, os.path.join(self.project_dir, "oracle.lock"))
        try:  # O_NOFOLLOW: a lock file planted as a link is never followed out
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as e:
            raise errors.PermissionDeniedError(
                None, None, f"cannot open the tuner's lock file {path}: {e}") from None
        with os.fdopen(fd, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                self._load_space()
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _space_path(self):
        return os.path.join(self.project_dir, "oracle.json")

    def _load_space(self):
        """Merges oracle.json's search space into ours; a corrupt or crafted one is reported
        and skipped (the space is rebuilt from the hypermodel and rewritten)."""
        path = self._space_path()
        if not os.path.lexists(path):
            return
        try:
            files.inside(self.project_dir, path)
            config = files.read_json_checked(path)
            if not isinstance(config, dict) or not isinstance(
                    config.get("hyperparameters"), dict):
                raise errors.DataLossError(None, None, "it holds no hyperparameters mapping")
            saved = HyperParameters.from_config(config["hyperparameters"])
        except errors.DataLossError as e:  # a link out of the project is raised, not read
            files.warn_skipped(path, e.message, self._reported)
            return
        except (ValueError, TypeError, KeyError, AttributeError, IndexError,
                RecursionError) as e:  # from_config on crafted data
            files.warn_skipped(path, f"its search space is not valid ({type(e).__name__}: "
                                     f"{e})", self._reported)
            return
        for name, hp in saved._space.items():
            self.hyperparameters._space.setdefault(name, hp)

    def _save_space(self):
        write_json(files.inside(self.project_dir, self._space_path()),
                   {"hyperparameters": self.hyperparameters.get_config(),
                    "objective": [self.objective.name, self.objective.direction]})

    def trial_dir(self, trial_id):
        """The directory of a trial: `trial_<id>` in the project, for a valid id only."""
        files.check_trial_id(trial_id, f"trial in {self.project_dir}")
        return files.inside(self.project_dir,
                            os.path.join(self.project_dir, f"trial_{trial_id}"))

    def _trials(self):
        """The project's trials, in id order; corrupt or crafted trial files are reported
        and skipped."""
        out = []
        for name in sorted(os.listdir(self.project_dir)):
            m = files.TRIAL_DIR.match(name)
            path = os.path.join(self.project_dir, name, "trial.json")
            if m is None or not os.path.lexists(path):
                continue  # not a trial, or one whose file is not written yet
            trial = self._read_trial(path, m["id"])
            if trial is not None:
                out.append(trial)
        return out

    def _read_trial(self, path, dir_id):
        try:
            files.inside(self.project_dir, path)
            d = files.read_json_checked(path)
        except (errors.DataLossError, errors.PermissionDeniedError, OSError) as e:
            files.warn_skipped(path, getattr(e, "message", None) or str(e), self._reported)
            return None
        problem = files.trial_dict_problem(d, dir_id) or self._values_problem(d.get("values",
                                                                                   {}))
        if problem is not None:
            files.warn_skipped(path, problem, self._reported)
            return None
        return Trial.from_dict(d, self.hyperparameters)

    def _values_problem(self, values):
        """What is wrong with a trial file's values, or None (subclasses add their tags)."""
        return files.values_problem(values, self.hyperparameters)

    def _next_trial_id(self, trials):
        """One past the largest id in use, counting every trial_NN directory (also those
        skipped as corrupt, so a new trial never overwrites one)."""
        ids = [int(m["id"]) for m in map(files.TRIAL_DIR.match, os.listdir(self.project_dir))
               if m is not None]
        ids += [int(t.trial_id) for t in trials]
        return f"{max(ids) + 1 if ids else 0:02d}"

    def save_trial(self, trial):
        directory = self.trial_dir(trial.trial_id)
        os.makedirs(directory, exist_ok=True)
        write_json(files.inside(self.project_dir, os.path.join(directory, "trial.json")),
                   trial.to_dict())

    # -- the protocol ----------------------------------------------------------------------
    @property
    def trials(self):
        """{trial_id: Trial} of this project (all workers)."""
        return {t.trial_id: t for t in self._trials()}

    def update_space(self, hyperparameters):
        """Adds hyperparameters a model declared that the space does not have yet."""
        with self._locked():
            new = [hp for n, hp in hyperparameters._space.items()
                   if n not in self.hyperparameters._space]
            if new and not self.allow_new_entries:
                raise RuntimeError(f"`allow_new_entries` is False, but found new entries "
                                   f"{[hp.name for hp in new]}")
            for hp in new:
                self.hyperparameters._space[hp.name] = hp
                if not self.tune_new_entries:
                    self._fixed.add(hp.name)
            self._save_space()

    def create_trial(self, tuner_id):
        """The next trial for worker `tuner_id` (a Trial RUNNING), or a Trial whose status is
        IDLE (wait: others' results are needed) or STOPPED (the search is over)."""
        with self._locked():
            trials = self._trials()
            for t in trials:  # a trial whose process died runs again, same values
                if t.status == TrialStatus.RUNNING and not owner_alive(t.owner):
                    t.owner = owner(tuner_id)
                    self.save_trial(t)
                    return t
            live = [t for t in trials if t.status != TrialStatus.INVALID]
            if self.max_trials is not None and len(live) >= self.max_trials:
                return Trial(None, self.hyperparameters.copy(), TrialStatus.STOPPED)
            failed_run = 0
            for t in reversed(live):
                if t.status != TrialStatus.FAILED:
                    break
                failed_run += 1
            if failed_run >= self.max_consecutive_failed_trials:
                raise RuntimeError(f"{failed_run} consecutive trials failed; the last: "
                                   f"{live[-1].message}")
            trial_id = self._next_trial_id(trials)
            values = self.populate_space(trial_id, live)
            if values in (TrialStatus.IDLE, TrialStatus.STOPPED):
                return Trial(None, self.hyperparameters.copy(), values)
            trial = Trial(trial_id, self.hyperparameters.with_values(values),
                          TrialStatus.RUNNING, owner_info=owner(tuner_id))
            self.save_trial(trial)
            return trial

    def end_trial(self, trial):
        with self._locked():
            self.save_trial(trial)

    def get_best_trials(self, num_trials=1):
        done = [t for t in self._trials() if t.status == TrialStatus.COMPLETED and
                t.score is not None]
        sign = 1 if self.objective.direction == "min" else -1
        return sorted(done, key=lambda t: sign * t.score)[:num_trials]

    # -- sampling helpers ------------------------------------------------------------------
    def _rng(self, trial_id, attempt=0):
        return np.random.default_rng([int(self.seed), int(trial_id), attempt])

    def _random_values(self, rng):
        """A random point: values in declaration order, so conditions see their parents."""
        hp = self.hyperparameters.copy()
        hp.values = {}
        for item in hp.space:
            if not hp.is_active(item):
                continue
            hp.values[item.name] = item.default if item.name in self._fixed else \
                item.random(rng)
        return hp.values

    def _unique_random(self, trial_id, trials):
        seen = {_key(t.hyperparameters.values) for t in trials}
        for attempt in range(_MAX_COLLISIONS):
            values = self._random_values(self._rng(trial_id, attempt))
            if _key(values) not in seen:
                return values
        return None


def _key(values):
    return tuple(sorted((k, repr(v)) for k, v in values.items() if not k.startswith("tuner/")))


class RandomSearchOracle(Oracle):
    """Random points, never the same one twice (stops when it finds none new)."""

    def populate_space(self, trial_id, trials):
        values = self._unique_random(trial_id, trials)
        return TrialStatus.STOPPED if values is None else values


class GridSearchOracle(Oracle):
    """Every combination of the hyperparameters' grids in order (Int/Float with a step:
    their steps; Float without: 10 points; Choice/Boolean: the values), up to max_trials."""

    def populate_space(self, trial_id, trials):
        seen = {_key(t.hyperparameters.values) for t in trials}
        for values in self._grid():
            if _key(values) not in seen:
                return values
        return TrialStatus.STOPPED

    def _grid(self):
        def expand(i, hp):
            if i == len(hp.space):
                yield dict(hp.values)
                return
            item = hp.space[i]
            if not hp.is_active(item):
                yield from expand(i + 1, hp)
                return
            options = [item.default] if item.name in self._fixed else item.grid()
            for v in options:
                hp.values[item.name] = v
                yield from expand(i + 1, hp)
            hp.values.pop(item.name, None)
        hp = self.hyperparameters.copy()
        hp.values = {}
        yield from expand(0, hp)


class BayesianOptimizationOracle(Oracle):
    """Gaussian-process regression of the score on the unit-scaled hyperparameters
    (RBF kernel, noise `alpha`), next point by the upper confidence bound (beta); the first
    `num_initial_points` (default 3 per hyperparameter) are random."""

    def __init__(self, objective=None, max_trials=10, num_initial_points=None, alpha=1e-4,
                 beta=2.6, seed=None, hyperparameters=None, allow_new_entries=True,
                 tune_new_entries=True, max_retries_per_trial=0,
                 max_consecutive_failed_trials=3):
        super().__init__(objective, max_trials, hyperparameters, allow_new_entries,
                         tune_new_entries, seed, max_retries_per_trial,
                         max_consecutive_failed_trials)
        self.num_initial_points, self.alpha, self.beta = num_initial_points, alpha, beta

    def _vector(self, values):
        return np.array([hp.to_unit(values.get(hp.name, hp.default))
                         for hp in self.hyperparameters.space], np.float64)

    def populate_space(self, trial_id, trials):
        done = [t for t in trials if t.status == TrialStatus.COMPLETED and t.score is not None]
        n_init = self.num_initial_points or max(3 * len(self.hyperparameters.space), 2)
        if len(done) < n_init:
            values = self._unique_random(trial_id, trials)
            return TrialStatus.STOPPED if values is None else values
        x = np.stack([self._vector(t.hyperparameters.values) for t in done])
        sign = 1.0 if self.objective.direction == "min" else -1.0
        y = sign * np.array([t.score for t in done], np.float64)
        mu_y, sd_y = y.mean(), y.std() or 1.0
        y = (y - mu_y) / sd_y
        k = _rbf(x, x) + self.alpha * np.eye(len(x))
        chol = np.linalg.cholesky(k + 1e-10 * np.eye(len(x)))
        weights = np.linalg.solve(chol.T, np.linalg.solve(chol, y))
        rng = self._rng(trial_id)
        seen = {_key(t.hyperparameters.values) for t in trials}
        candidates = [self._random_values(rng) for _ in range(200)]
        candidates = [c for c in candidates if _key(c) not in seen]
        if not candidates:
            return TrialStatus.STOPPED
        xc = np.stack([self._vector(c) for c in candidates])
        ks = _rbf(xc, x)
        mean = ks @ weights
        v = np.linalg.solve(chol, ks.T)
        std = np.sqrt(np.maximum(1.0 - (v * v).sum(axis=0), 1e-12))
        return candidates[int(np.argmin(mean - self.beta * std))]


def _rbf(a, b, length=0.5):
    d = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * d / length ** 2)


class HyperbandOracle(Oracle):
    """Hyperband (Li et al. 2017) as KerasTuner schedules it: brackets of successive
    halving; round 0 trains many random configurations for few epochs, each later round
    continues the best 1/factor of the previous round's trials (from their weights) for
    factor times more epochs, up to max_epochs."""

    def __init__(self, objective=None, max_epochs=100, factor=3, hyperband_iterations=1,
                 seed=None, hyperparameters=None, allow_new_entries=True,
                 tune_new_entries=True, max_retries_per_trial=0,
                 max_consecutive_failed_trials=3):
        super().__init__(objective, None, hyperparameters, allow_new_entries,
                         tune_new_entries, seed, max_retries_per_trial,
                         max_consecutive_failed_trials)
        if factor < 2:
            raise ValueError(f"`factor` must be >= 2, got {factor}")
        self.max_epochs, self.factor = int(max_epochs), int(factor)
        self.hyperband_iterations = int(hyperband_iterations)

    def _values_problem(self, values):
        """Hyperband's tags in a trial file: whole numbers in the schedule's range (a
        crafted tuner/epochs would train for as long as it says)."""
        limits = {"tuner/epochs": self.max_epochs, "tuner/initial_epoch": self.max_epochs,
                  "tuner/bracket": self.num_brackets(), "tuner/round": self.num_brackets(),
                  "tuner/iteration": self.hyperband_iterations}
        for name, top in limits.items():
            v = values.get(name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or
                                  not 0 <= v <= top):
                return f"{name} {v!r} is not a whole number in [0, {top}]"
        return super()._values_problem(values)

    def num_brackets(self):
        epochs, n = self.max_epochs, 0
        while epochs >= 1:
            epochs /= self.factor
            n += 1
        return n

    def _size(self, bracket, rnd):
        end = math.ceil(1 + math.log(self.max_epochs, self.factor)) / self.factor ** bracket
        return math.ceil(end * self.factor ** (bracket - rnd))

    def _epochs(self, bracket, rnd):
        return math.ceil(self.max_epochs / self.factor ** (bracket - rnd))

    def schedule(self):
        """[(iteration, bracket, round, size, epochs)] in the order they run."""
        out = []
        for it in range(self.hyperband_iterations):
            for b in reversed(range(self.num_brackets())):
                for r in range(b + 1):
                    out.append((it, b, r, self._size(b, r), self._epochs(b, r)))
        return out

    def populate_space(self, trial_id, trials):
        for it, b, r, size, epochs in self.schedule():
            mine = [t for t in trials if _slot(t) == (it, b, r)]
            if len(mine) >= size:
                continue
            tags = {"tuner/epochs": epochs, "tuner/initial_epoch": 0,
                    "tuner/bracket": b, "tuner/round": r, "tuner/iteration": it}
            if r == 0:
                values = self._unique_random(trial_id, trials)
                return TrialStatus.STOPPED if values is None else {**values, **tags}
            prev = [t for t in trials if _slot(t) == (it, b, r - 1)]
            if any(t.status == TrialStatus.RUNNING for t in prev):
                return TrialStatus.IDLE
            ranked = sorted([t for t in prev if t.status == TrialStatus.COMPLETED and
                             t.score is not None],
                            key=lambda t: t.score if self.objective.direction == "min"
                            else -t.score)
            taken = {t.hyperparameters.values.get("tuner/trial_id") for t in mine}
            for parent in ranked[:size]:
                if parent.trial_id not in taken:
                    values = {k: v for k, v in parent.hyperparameters.values.items()
                              if not k.startswith("tuner/")}
                    tags.update({"tuner/initial_epoch": self._epochs(b, r - 1),
                                 "tuner/trial_id": parent.trial_id})
                    return {**values, **tags}
            continue  # fewer survivors than the round's size: the round is done
        return TrialStatus.STOPPED


def _slot(trial):
    v = trial.hyperparameters.values
    return (v.get("tuner/iteration"), v.get("tuner/bracket"), v.get("tuner/round"))
