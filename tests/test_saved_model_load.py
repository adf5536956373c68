"""tf.saved_model.load on crafted directories: a malformed or empty saved_model.pb, a
missing one, a graph naming an op tensorlite lacks or a function missing from the library:
each a clear error of TensorFlow's class, with nothing from the file executed. Loading real
TensorFlow SavedModels is tested in tests/interop/test_savedmodel_interop.py."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.saved_model.protos import SavedModel


def _write(tmp_path, model):
    (tmp_path / "saved_model.pb").write_bytes(model.SerializeToString()
                                              if hasattr(model, "SerializeToString") else model)
    return str(tmp_path)


@pytest.mark.parametrize("data", [b"\x0a\xff\xff\xff", b"\x12\x05garbage-not-a-proto"])
def test_malformed_proto_is_data_loss(tmp_path, data):
    with pytest.raises(tf.errors.DataLossError, match="saved_model.pb"):
        tf.saved_model.load(_write(tmp_path, data))


def test_missing_and_empty(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="SavedModel file does not exist"):
        tf.saved_model.load(str(tmp_path))
    with pytest.raises(tf.errors.DataLossError, match="no MetaGraphDef"):
        tf.saved_model.load(_write(tmp_path, SavedModel(saved_model_schema_version=1)))


def _function_model(op_name, call=None):
    model = SavedModel(saved_model_schema_version=1)
    meta = model.meta_graphs.add()
    meta.meta_info_def.tags.append("serve")
    fn = meta.graph_def.library.function.add()
    fn.signature.name = "f"
    fn.signature.input_arg.add(name="x", type=1)
    fn.signature.output_arg.add(name="y", type=1)
    node = fn.node_def.add(name="evil", op=op_name, input=["x"])
    if call is not None:
        node.attr["f"].func.name = call
    fn.ret["y"] = "evil:output:0"
    graph = meta.object_graph_def
    root = graph.nodes.add()
    root.user_object.identifier = "_generic_user_object"
    root.children.add(node_id=1, local_name="__call__")
    graph.nodes.add().function.concrete_functions.append("f")
    concrete = graph.concrete_functions["f"]
    spec = concrete.canonicalized_input_signature.tuple_value.values
    arg = spec.add().tuple_value.values.add().tensor_spec_value
    arg.name, arg.dtype = "x", 1
    arg.shape.dim.add(size=-1)
    spec.add().dict_value.SetInParent()
    concrete.output_signature.tensor_spec_value.dtype = 1
    return model


def test_unknown_op_names_op_node_and_function(tmp_path):
    model = tf.saved_model.load(_write(tmp_path, _function_model("PyFunc")))
    with pytest.raises(tf.errors.UnimplementedError, match=r"op PyFunc \(node 'evil' in "
                                                           r"function f\)"):
        model(np.ones(2, np.float32))


def test_call_of_a_missing_function_is_not_found(tmp_path):
    model = tf.saved_model.load(_write(tmp_path, _function_model("PartitionedCall", "nope")))
    with pytest.raises(tf.errors.NotFoundError, match="function nope"):
        model(np.ones(2, np.float32))
