"""`tf.keras`: layers, models, losses, metrics, optimizers, callbacks."""
from tensorlite.keras import (activations, backend, callbacks, config,  # noqa: F401
                              constraints, datasets, initializers, layers, losses, metrics,
                              models, optimizers, regularizers, saving, utils)
from tensorlite.keras import mixed_precision, preprocessing  # noqa: F401
from tensorlite.keras.engine.sequential import Sequential  # noqa: F401
from tensorlite.keras.engine.training import Model  # noqa: F401
from tensorlite.keras.engine_symbolic import Input  # noqa: F401
from tensorlite.keras import applications  # noqa: F401,E402
