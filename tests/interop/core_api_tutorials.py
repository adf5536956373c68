"""The export pattern of three of TensorFlow's Core API tutorials (the Core APIs quickstart,
"Logistic regression for binary classification with Core APIs" and "Multilayer perceptrons
for digit recognition with Core APIs"): a tf.Module whose `__call__` is a tf.function with
`input_signature=[tf.TensorSpec(shape=[None, None], ...)]` (the MLP's: four None dims of
uint8 images), saved with tf.saved_model.save and called after tf.saved_model.load. The code
is the tutorials' own, trimmed of plotting and data loading; the caller passes its `tf`
(real TensorFlow or tensorlite), so both sides build the same modules."""
import numpy as np

RNG = np.random.default_rng(7)
FEATURES = RNG.normal(size=(16, 9)).astype(np.float32)
TARGETS = (FEATURES @ np.arange(1, 10, dtype=np.float32) / 10).astype(np.float32)
IMAGES = RNG.integers(0, 256, size=(4, 28, 28, 1)).astype(np.uint8)


def quickstart(tf):
    """The Core APIs quickstart: a normalized linear regression, exported."""
    class Normalize(tf.Module):
        def __init__(self, x):
            # Initialize the mean and standard deviation for normalization
            self.mean = tf.math.reduce_mean(x, axis=0)
            self.std = tf.math.reduce_std(x, axis=0)

        def norm(self, x):
            # Normalize the input
            return (x - self.mean) / self.std

        def unnorm(self, x):
            # Unnormalize the input
            return (x * self.std) + self.mean

    class LinearRegression(tf.Module):
        def __init__(self):
            self.built = False

        @tf.function
        def __call__(self, x):
            # Initialize the model parameters on the first call
            if not self.built:
                # Randomly generate the weight vector and bias term
                rand_w = tf.random.uniform(shape=[x.shape[-1], 1])
                rand_b = tf.random.uniform(shape=[])
                self.w = tf.Variable(rand_w)
                self.b = tf.Variable(rand_b)
                self.built = True
            y = tf.add(tf.matmul(x, self.w), self.b)
            return tf.squeeze(y, axis=1)

    class ExportModule(tf.Module):
        def __init__(self, model, norm_x, norm_y):
            # Initialize pre and postprocessing functions
            self.model = model
            self.norm_x = norm_x
            self.norm_y = norm_y

        @tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
        def __call__(self, x):
            # Run the ExportModule for new data points
            x = self.norm_x.norm(x)
            y = self.model(x)
            y = self.norm_y.unnorm(y)
            return y

    norm_x, norm_y = Normalize(FEATURES), Normalize(TARGETS)
    lin_reg = LinearRegression()
    x = norm_x.norm(FEATURES)
    y = norm_y.norm(TARGETS)
    lin_reg(x)
    lin_reg.w.assign(np.linspace(-1, 1, 9, dtype=np.float32).reshape(9, 1))
    lin_reg.b.assign(0.25)
    for _ in range(3):  # the tutorial's training step, a few times
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(lin_reg(x) - y))
        grads = tape.gradient(loss, lin_reg.variables)
        for g, v in zip(grads, lin_reg.variables):
            v.assign_sub(0.01 * g)
    return ExportModule(model=lin_reg, norm_x=norm_x, norm_y=norm_y), FEATURES


def logistic(tf):
    """Logistic regression with Core APIs: `__call__(x, train=True)` and a threshold."""
    class LogisticRegression(tf.Module):
        def __init__(self):
            self.built = False

        def __call__(self, x, train=True):
            # Initialize the model parameters on the first call
            if not self.built:
                # Randomly generate the weights and the bias term
                rand_w = tf.random.uniform(shape=[x.shape[-1], 1], seed=22)
                rand_b = tf.random.uniform(shape=[], seed=22)
                self.w = tf.Variable(rand_w)
                self.b = tf.Variable(rand_b)
                self.built = True
            # Compute the model output
            z = tf.add(tf.matmul(x, self.w), self.b)
            z = tf.squeeze(z, axis=1)
            if train:
                return z
            return tf.sigmoid(z)

    def predict_class(y_pred, thresh=0.5):
        # Return a tensor with  `1` if `y_pred` > `0.5`, and `0` otherwise
        return tf.cast(y_pred > thresh, tf.float32)

    class ExportModule(tf.Module):
        def __init__(self, model, norm_x, class_pred):
            # Initialize pre- and post-processing functions
            self.model = model
            self.norm_x = norm_x
            self.class_pred = class_pred

        @tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
        def __call__(self, x):
            # Run the `ExportModule` for new data points
            x = self.norm_x.norm(x)
            y = self.model(x, train=False)
            y = self.class_pred(y)
            return y

    class Normalize(tf.Module):
        def __init__(self, x):
            # Initialize the mean and standard deviation for normalization
            self.mean = tf.Variable(tf.math.reduce_mean(x, axis=0))
            self.std = tf.Variable(tf.math.reduce_std(x, axis=0))

        def norm(self, x):
            # Normalize the input
            return (x - self.mean) / self.std

    norm_x = Normalize(FEATURES)
    model = LogisticRegression()
    model(norm_x.norm(FEATURES))
    model.w.assign(np.linspace(-1, 1, 9, dtype=np.float32).reshape(9, 1))
    model.b.assign(-0.1)
    return ExportModule(model=model, norm_x=norm_x, class_pred=predict_class), FEATURES


def mlp(tf):
    """Multilayer perceptrons with Core APIs: uint8 images of any shape, reshaped."""
    class DenseLayer(tf.Module):
        def __init__(self, out_dim, activation=tf.identity):
            self.out_dim = out_dim
            self.activation = activation
            self.built = False

        def __call__(self, x):
            if not self.built:
                # Infer the input dimension based on first call
                self.in_dim = x.shape[1]
                grid = np.linspace(-0.05, 0.05, self.in_dim * self.out_dim, dtype=np.float32)
                self.w = tf.Variable(grid.reshape(self.in_dim, self.out_dim))
                self.b = tf.Variable(tf.zeros(shape=(self.out_dim,)))
                self.built = True
            # Compute the forward pass
            z = tf.add(tf.matmul(x, self.w), self.b)
            return self.activation(z)

    class MLP(tf.Module):
        def __init__(self, layers):
            self.layers = layers

        @tf.function
        def __call__(self, x, preds=False):
            # Execute the model's layers sequentially
            for layer in self.layers:
                x = layer(x)
            return x

    def preprocess_test(x):
        # The export module takes in unprocessed and unlabeled data
        x = tf.reshape(x, shape=[-1, 784])
        x = x / 255
        return x

    def class_pred_test(y):
        # Generate class predictions from MLP output
        return tf.argmax(tf.nn.softmax(y), axis=1)

    class ExportModule(tf.Module):
        def __init__(self, model, preprocess, class_pred):
            # Initialize pre and postprocessing functions
            self.model = model
            self.preprocess = preprocess
            self.class_pred = class_pred

        @tf.function(input_signature=[
            tf.TensorSpec(shape=[None, None, None, None], dtype=tf.uint8)])
        def __call__(self, x):
            # Run the ExportModule for new data points
            x = self.preprocess(x)
            y = self.model(x)
            y = self.class_pred(y)
            return y

    mlp_model = MLP([DenseLayer(out_dim=16, activation=tf.nn.relu), DenseLayer(out_dim=10)])
    mlp_model(tf.zeros([1, 784]))
    return ExportModule(model=mlp_model, preprocess=preprocess_test,
                        class_pred=class_pred_test), IMAGES


TUTORIALS = {"quickstart": quickstart, "logistic": logistic, "mlp": mlp}
