"""tf.custom_gradient functions saved in SavedModels, written once for both libraries: the
same code runs with `tf` TensorFlow (tf_custom_gradient_side.py) and tensorlite
(test_custom_gradient_savedmodel_interop.py).

- `clip_module`: the "Advanced automatic differentiation" guide's clip_gradients, verbatim;
  its loaded function's gradient of `v * v` at v=2 is 2.0 (the forward's would be 4.0).
- `two_input_module`: two arguments and one variable read, grad_fn(dy, variables=...);
  gradients 2, 3 and 5 (the forward's would be 6, 3 and 2).
- `variable_gradient_module`: a gradient that reads a variable (the gradient function
  captures it): 4 per element (the forward's would be 1).
- `two_output_module`: two outputs, grad_fn(dy1, dy2): 9 per element (the forward's 4).
"""


def clip_module(tf):
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    class MyModule(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)
    return MyModule()


def clip_gradient(tf, loaded):
    """The guide's check: the loaded function's gradient under a GradientTape."""
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    return float(t.gradient(output, v).numpy())


def two_input_module(tf):
    class Scaled(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(3.0)

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32),
                                      tf.TensorSpec([], tf.float32)])
        def f(self, a, b):
            @tf.custom_gradient
            def scaled_product(a, b):
                y = a * b * self.v

                def grad_fn(dy, variables=None):
                    return (dy * 2.0, dy * 3.0), [dy * 5.0 for _ in variables]
                return y, grad_fn
            return scaled_product(a, b)
    return Scaled()


def two_input_gradients(tf, loaded):
    """[d/da, d/db, d/dv] of the loaded function at a=1, b=2."""
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([a, b])
        y = loaded.f(a, b)
    return [float(g.numpy()) for g in t.gradient(y, [a, b, loaded.v])]


def variable_gradient_module(tf):
    class Scaled(tf.Module):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(4.0, trainable=False)

        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def f(self, x):
            @tf.custom_gradient
            def scaled_gradient(x):
                def grad(dy):
                    return dy * self.scale
                return x * 1.0, grad
            return scaled_gradient(x)
    return Scaled()


def two_output_module(tf):
    class TwoOutputs(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def f(self, x):
            @tf.custom_gradient
            def pair(x):
                def grad(dy1, dy2):
                    return dy1 * 2.0 + dy2 * 7.0
                return (x + 0.0, x * 3.0), grad
            a, b = pair(x)
            return a + b
    return TwoOutputs()


def vector_gradient(tf, loaded):
    """The loaded `f`'s gradient at x = [1, 2], as a list."""
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = loaded.f(x)
    return [float(g) for g in t.gradient(y, x).numpy()]
