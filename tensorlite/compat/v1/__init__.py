"""`tf.compat.v1`: TensorFlow 1.x graphs and sessions (the "Tensorflow 1.x" cell of
the notes "Structure of Deep Learning Frameworks").

    tf.compat.v1.disable_eager_execution()
    x = tf.compat.v1.placeholder(tf.float32, shape=(2,))
    with tf.compat.v1.variable_scope("matmul", reuse=tf.compat.v1.AUTO_REUSE):
        W = tf.compat.v1.get_variable("W", initializer=tf.ones((2, 2)))
    y = W * x
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(y, feed_dict={x: [1, 0]})   # array([[1., 0.], [1., 0.]], dtype=float32)

Names TF 1.x shares with TF 2 (tf.compat.v1.float32, tf.compat.v1.matmul, ...) come from
the top-level namespace.
"""
from tensorlite.compat.v1 import initializers, layers, losses, metrics, nn, train
from tensorlite.compat.v1.gradients import gradients
from tensorlite.compat.v1.graph import (Graph, GraphKeys, Operation, add_to_collection,
                                        add_to_collections, get_collection,
                                        get_collection_ref, get_default_graph,
                                        reset_default_graph)
from tensorlite.compat.v1.graph_mode import (disable_eager_execution, disable_v2_behavior,
                                             enable_eager_execution, enable_v2_behavior,
                                             executing_eagerly,
                                             executing_eagerly_outside_functions)
from tensorlite.compat.v1.initializers import (constant_initializer, glorot_normal_initializer,
                                               glorot_uniform_initializer, ones_initializer,
                                               random_normal_initializer,
                                               random_uniform_initializer,
                                               truncated_normal_initializer, zeros_initializer)
from tensorlite.compat.v1.placeholder import placeholder, placeholder_with_default
from tensorlite.compat.v1.session import InteractiveSession, Session, get_default_session
from tensorlite.compat.v1.variable_scope import (AUTO_REUSE, VariableScope, get_variable,
                                                 get_variable_scope, variable_scope)
from tensorlite.compat.v1.variables import (all_variables, assign, assign_add, assign_sub,
                                            global_variables, global_variables_initializer,
                                            initialize_all_variables,
                                            initialize_local_variables, local_variables,
                                            local_variables_initializer, model_variables,
                                            trainable_variables, variables_initializer)


def __getattr__(name):
    import tensorlite  # noqa: PLC0415
    try:
        return getattr(tensorlite, name)
    except AttributeError:
        raise AttributeError(f"module 'tensorlite.compat.v1' has no attribute {name!r}") \
            from None
