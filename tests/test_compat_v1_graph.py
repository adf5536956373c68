"""tf.Graph as TF1 code uses it: symbolic tensors (graph, op, name, None dimensions from the
registry's shape rules, no .numpy()), operations by name, collections, finalize."""
import pytest

import tensorlite as tf


def test_graph_tensors_are_symbolic():
    g = tf.Graph()
    with g.as_default():
        assert not tf.executing_eagerly()
        x = tf.compat.v1.placeholder(tf.float32, shape=(None, 3), name="x")
        y = tf.matmul(x, tf.ones([3, 2]))
        z = tf.reduce_sum(tf.nn.relu(y), axis=1)
        assert x.graph is g and y.graph is g and z.graph is g
        assert x.op.type == "Placeholder" and x.name == "x:0"
        assert y.shape.as_list() == [None, 2]  # from the registry's shape rules
        assert z.shape.as_list() == [None]
        assert y.name == y.op.name + ":0" and g.get_tensor_by_name("x:0") is x
        with pytest.raises(TypeError, match="Session.run"):
            y.numpy()
        names = [op.name for op in g.get_operations()]
        assert names[0] == "x" and y.op.name in names
        assert g.get_operation_by_name(y.op.name) is y.op
        with pytest.raises(KeyError):
            g.get_operation_by_name("nope")
        d = tf.compat.v1.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[None])
        with tf.compat.v1.Session() as s:
            assert s.run(d).tolist() == [1.0, 2.0]
            assert s.run(d, {d: [5.0]}).tolist() == [5.0]
    with pytest.raises(AttributeError, match="eager"):
        tf.constant(1.0).graph
    assert tf.executing_eagerly()


def test_collections_and_finalize():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        tf.compat.v1.add_to_collection("mine", c)
        assert g.get_collection("mine") == [c]
        x = tf.compat.v1.placeholder(tf.float32, [])
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError, match="finalized"):
            x + 1.0


def test_constant_in_a_graph_is_a_named_graph_tensor():
    """The TF 2 'Introduction to graphs' guide: inside `with tf.Graph().as_default()`,
    tf.constant makes a Const op of that graph, named as asked (uniquified, scoped)."""
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(5.0, name="five")
        again = tf.constant(1.0, name="five")
        with tf.name_scope("scope"):
            scoped = tf.constant(2.0)
        product = c * again
    assert c.graph is g and c.op.name == "five" and c.name == "five:0"
    assert c.op.type == "Const"
    assert again.name == "five_1:0" and scoped.name == "scope/Const:0"
    assert [op.name for op in g.get_operations()] == ["five", "five_1", "scope/Const", "Mul"]
    with tf.compat.v1.Session(graph=g) as sess:
        assert sess.run(product) == 5.0
    with pytest.raises(AttributeError, match="eager"):
        tf.constant(1.0).graph  # noqa: B018 - outside the graph, eager as before
