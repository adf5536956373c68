"""`tf.keras.datasets`: Keras's data sets, downloaded once from the origins Keras uses into
the Keras cache ($KERAS_HOME/datasets, default ~/.keras/datasets), checked against their
published hashes, and loaded offline from then on; `digits` is scikit-learn's bundled set."""
from tensorlite.keras.datasets import (boston_housing, cifar10, cifar100,  # noqa: F401
                                       digits, fashion_mnist, imdb, mnist, reuters)
