"""Every optimizer against real TensorFlow (tf.keras 2): the same float32 variable and
gradients, five steps, eagerly and inside a tf.function here; the variable after each step
must match TensorFlow's (the OptimizerV2 classes, and TF 2.11+'s optimizers for AdamW,
Lion, weight_decay and use_ema)."""
import json

import numpy as np
import pytest

import tensorlite as tf

pytestmark = pytest.mark.interop

RNG = np.random.default_rng(3)
W0 = RNG.standard_normal((4, 3)).astype(np.float32)
GRADS = RNG.standard_normal((5, 4, 3)).astype(np.float32)

# (name, class, tf.keras legacy OptimizerV2 class?, kwargs)
CASES = [
    ("sgd", "SGD", True, {"learning_rate": 0.1}),
    ("sgd_nesterov", "SGD", True, {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    ("adam", "Adam", True, {"learning_rate": 0.05}),
    ("adam_amsgrad", "Adam", True, {"learning_rate": 0.05, "amsgrad": True}),
    ("rmsprop", "RMSprop", True, {"learning_rate": 0.01}),
    ("rmsprop_centered_momentum", "RMSprop", True,
     {"learning_rate": 0.01, "momentum": 0.5, "centered": True}),
    ("adagrad", "Adagrad", True, {"learning_rate": 0.1}),
    ("adadelta", "Adadelta", True, {"learning_rate": 1.0}),
    ("adamax", "Adamax", True, {"learning_rate": 0.05}),
    ("nadam", "Nadam", True, {"learning_rate": 0.05}),
    ("ftrl", "Ftrl", True, {"learning_rate": 0.1, "l1_regularization_strength": 0.01,
                            "l2_regularization_strength": 0.02,
                            "l2_shrinkage_regularization_strength": 0.01, "beta": 0.1}),
    ("clipnorm", "Adam", True, {"learning_rate": 0.05, "clipnorm": 0.5}),
    ("legacy_decay", "SGD", True, {"learning_rate": 0.1, "decay": 0.5}),
    ("adamw", "AdamW", False, {"learning_rate": 0.05, "weight_decay": 0.1}),
    ("lion", "Lion", False, {"learning_rate": 0.01}),
    # TF 2.11+'s arguments of every optimizer
    ("sgd_weight_decay", "SGD", False, {"learning_rate": 0.1, "momentum": 0.5,
                                        "weight_decay": 0.05}),
    ("adam_ema_overwrite", "Adam", False, {"learning_rate": 0.05, "use_ema": True,
                                           "ema_momentum": 0.7,
                                           "ema_overwrite_frequency": 2}),
    # (the OptimizerV2 RMSprop: TF 2.11+'s adds epsilon under the square root instead)
    ("rmsprop_global_clipnorm", "RMSprop", True, {"learning_rate": 0.01,
                                                  "global_clipnorm": 0.3}),
]


@pytest.fixture(scope="module")
def tf_steps(tmp_path_factory, request):
    from tests.interop.conftest import run_tf
    d = tmp_path_factory.mktemp("optimizers")
    (d / "cases.json").write_text(json.dumps(
        [{"name": n, "class": c, "legacy": legacy, "kwargs": kw} for n, c, legacy, kw in CASES]))
    np.savez(d / "inputs.npz", w0=W0, grads=GRADS)
    facts = run_tf("optimizers", d)
    assert facts["names"] == sorted(n for n, *_ in CASES)
    return dict(np.load(d / "tf_out.npz"))


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_optimizer_steps_match_tensorflow(tf_steps, case, graph):
    name, cls, _, kwargs = case
    opt = getattr(tf.keras.optimizers, cls)(**kwargs)
    var = tf.Variable(W0)
    step = lambda g: opt.apply_gradients([(g, var)])  # noqa: E731
    step = tf.function(step) if graph else step
    for k, g in enumerate(GRADS):
        step(tf.constant(g))
        np.testing.assert_allclose(var.numpy(), tf_steps[name][k], rtol=2e-5, atol=2e-6,
                                   err_msg=f"{name}, step {k + 1}")
