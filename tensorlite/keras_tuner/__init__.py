"""KerasTuner's API on tensorlite's Keras: `import tensorlite.keras_tuner as kt`.

HyperParameters (Int, Float with linear/log/reverse-log sampling, Choice, Boolean, Fixed,
conditional_scope), HyperModel, Objective, and the RandomSearch, GridSearch, Hyperband and
BayesianOptimization tuners with search / get_best_models / get_best_hyperparameters /
search_space_summary / results_summary. Trial state is written atomically under
directory/project_name, so a killed search resumes (overwrite=False) without repeating
finished trials, and worker processes sharing the directory run trials in parallel.

Example:
    >>> import tensorlite.keras_tuner as kt
    >>> tuner = kt.tuners.RandomSearch(build_model, objective="val_accuracy",
    ...                                max_trials=6, directory="tuning",
    ...                                project_name="digits")  # doctest: +SKIP
"""
from tensorlite.keras_tuner import oracles  # noqa: F401
from tensorlite.keras_tuner.hyperparameters import HyperParameters  # noqa: F401
from tensorlite.keras_tuner.oracles import Objective  # noqa: F401
from tensorlite.keras_tuner.trial import Trial  # noqa: F401
from tensorlite.keras_tuner.tuner import (BayesianOptimization, GridSearch,  # noqa: F401
                                          HyperModel, Hyperband, RandomSearch, Tuner)


class tuners:  # noqa: N801 - KerasTuner's namespace: kt.tuners.RandomSearch
    RandomSearch, GridSearch, Hyperband, BayesianOptimization = \
        RandomSearch, GridSearch, Hyperband, BayesianOptimization


class engine:  # noqa: N801 - kt.engine.hyperparameters.HyperParameters
    class hyperparameters:  # noqa: N801
        HyperParameters = HyperParameters

    class hypermodel:  # noqa: N801
        HyperModel = HyperModel


__version__ = "1.4.7"
