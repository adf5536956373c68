"""The registry is the only op table: every op declares each consumer's rule beside its
registration, or says explicitly that the consumer does not support it
(`declare(op, unsupported="onnx tflite")`), and the graph layer's properties are read from
the ops, never from tables of op names."""
import importlib
import pkgutil

import pytest

import tensorlite as tf
from tensorlite.framework import registry


def _import_everything():
    """Every tensorlite module, so that lazily registered op families are in the walk."""
    for info in pkgutil.walk_packages(tf.__path__, "tensorlite."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            pass


def _ours(op):
    """An op tensorlite registers (other test modules register throwaway ops of their own)."""
    module = getattr(op.forward, "__module__", None) or ""
    return module.split(".")[0] in ("tensorlite", "numpy") or op.name == "_WalkProbe"


def _missing():
    """'Op: rule' for each op and consumer with neither a rule nor an unsupported marker."""
    _import_everything()
    missing = []
    for op in list(registry.REGISTRY.values()):
        if not _ours(op):
            continue
        for consumer in registry.CONSUMERS:
            if not registry.declared(op, consumer):
                missing.append(f"{op.name}: {consumer}")
        if op.tf is not None and not registry.declared(op, "tf_outputs"):
            missing.append(f"{op.name}: tf_outputs (it has a tf rule)")
    return missing


def test_every_op_declares_every_consumer_rule_or_unsupported():
    missing = _missing()
    assert not missing, ("ops without a rule or an explicit unsupported= marker "
                         "(declare it beside the registration):\n  " + "\n  ".join(missing))


def test_the_walk_names_a_new_op_without_rules():
    op = registry.Op("_WalkProbe", lambda x: x, None, None, False, True)
    registry.REGISTRY[op.name] = op
    try:
        missing = _missing()
    finally:
        del registry.REGISTRY[op.name]
    assert "_WalkProbe: onnx" in missing and "_WalkProbe: tf" in missing


def test_an_undeclared_attribute_fails():
    with pytest.raises(AttributeError):
        registry.get("Exp").stateful_by_hand = True


def test_declare_rejects_unknown_rules_and_markers():
    op = registry.get("Exp")
    with pytest.raises(TypeError, match="unknown consumer"):
        registry.declare(op, onnxx=None)
    with pytest.raises(TypeError, match="unknown consumers"):
        registry.declare(op, unsupported="onnxx")


def test_commutative_property_drives_cse():
    from tensorlite.graph.ir import Node
    from tensorlite.graph.passes.cse import node_key
    mul, sub = registry.get("Mul"), registry.get("Sub")
    assert mul.commutative and not sub.commutative
    assert node_key(Node(mul, [1, 2], {}, [3]), [1, 2]) == node_key(Node(mul, [2, 1], {}, [4]),
                                                                    [2, 1])
    assert node_key(Node(sub, [1, 2], {}, [3]), [1, 2]) != node_key(Node(sub, [2, 1], {}, [4]),
                                                                    [2, 1])


def test_saved_model_output_names_come_from_the_declarations():
    from tensorlite.saved_model.op_outputs import output_arg
    assert output_arg("MatMul") == "product"
    assert output_arg("BatchMatMulV2") == "output"
    assert output_arg("Relu") == "activations"
    assert output_arg("AddV2") == "z"
    with pytest.raises(tf.errors.UnimplementedError, match="NoSuchTfOp"):
        output_arg("NoSuchTfOp")


def test_callbacks_are_generated_from_the_registry():
    from tensorlite.graph.ir import CALLBACKS
    assert {"EagerPyFunc", "PyFunc", "PrintV2", "KerasMetric"} <= CALLBACKS
    assert "PyFuncStateless" not in CALLBACKS  # declared free of effects
    assert registry.get("PyFuncStateless").varying
