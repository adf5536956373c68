"""`tf.estimator`: Estimator, EstimatorSpec, RunConfig(train_distribute=...), train/evaluate/
predict, export_saved_model, train_and_evaluate, SessionRunHook and the early-stopping hooks
of `tf.estimator.experimental`, the canned estimators (DNN, Linear and DNNLinearCombined
classifiers and regressors; BoostedTrees classifier and regressor) over feature columns,
and numpy_input_fn / pandas_input_fn.

Example (the Google I/O 2018 talk "Distributed TensorFlow training"):
    >>> distribution = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> run_config = tf.estimator.RunConfig(train_distribute=distribution)
    >>> classifier = tf.estimator.Estimator(model_fn=model_function, model_dir=model_dir,
    ...                                     config=run_config)
    >>> classifier.train(input_fn=input_function)
"""
from tensorlite.estimator import experimental, export, inputs
from tensorlite.estimator.boosted_trees import BoostedTreesClassifier, BoostedTreesRegressor
from tensorlite.estimator.canned import (DNNClassifier, DNNLinearCombinedClassifier,
                                         DNNLinearCombinedRegressor, DNNRegressor,
                                         LinearClassifier, LinearRegressor)
from tensorlite.estimator.estimator import Estimator, EstimatorSpec, ModeKeys
from tensorlite.estimator.graph_loops import NanLossDuringTrainingError
from tensorlite.estimator.hooks import (CheckpointSaverListener, SessionRunArgs,
                                        SessionRunContext, SessionRunHook, SessionRunValues)
from tensorlite.estimator.run_config import RunConfig
from tensorlite.estimator.warm_start import WarmStartSettings
from tensorlite.estimator.training import EvalSpec, TrainSpec, train_and_evaluate

# TF 1.8 code (Google I/O 2018's TF Hub talk) writes tf.estimator.input.numpy_input_fn
input = inputs  # noqa: A001
