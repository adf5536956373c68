"""`tf.keras.layers`."""
from tensorlite.keras.engine_symbolic import Input  # noqa: F401
from tensorlite.keras.layers.core import (Activation, Dense, Dropout, Flatten,  # noqa: F401
                                          InputLayer, Lambda, Reshape)
from tensorlite.keras.layers.layer import Layer  # noqa: F401
from tensorlite.keras.layers.op_lambda import SlicingOpLambda, TFOpLambda  # noqa: F401
from tensorlite.keras.layers.graph_metrics import AddLoss, AddMetric  # noqa: F401
from tensorlite.keras.layers.attention import (AdditiveAttention, Attention,  # noqa: F401
                                               EinsumDense, MultiHeadAttention)
from tensorlite.keras.layers.convolutional import (Conv1D, Conv1DTranspose, Conv2D,  # noqa: F401
                                                   Conv2DTranspose, Convolution1D,
                                                   Convolution1DTranspose, Convolution2D,
                                                   Convolution2DTranspose, DepthwiseConv2D,
                                                   SeparableConv2D, SeparableConvolution2D)
from tensorlite.keras.layers.embedding import Embedding  # noqa: F401
from tensorlite.keras.layers.merging import (Add, Average, Concatenate, Dot,  # noqa: F401
                                             Maximum, Minimum, Multiply, Subtract, add,
                                             average, concatenate, dot, maximum, minimum,
                                             multiply, subtract)
from tensorlite.keras.layers.normalization import (BatchNormalization,  # noqa: F401
                                                   LayerNormalization)
from tensorlite.keras.layers.pooling import (AveragePooling1D, AveragePooling2D,  # noqa: F401
                                             AvgPool1D, AvgPool2D, GlobalAveragePooling1D,
                                             GlobalAveragePooling2D, GlobalAvgPool1D,
                                             GlobalAvgPool2D, GlobalMaxPool1D,
                                             GlobalMaxPool2D, GlobalMaxPooling1D,
                                             GlobalMaxPooling2D, MaxPool1D, MaxPool2D,
                                             MaxPooling1D, MaxPooling2D)
from tensorlite.keras.layers.recurrent import (GRU, LSTM, RNN, GRUCell,  # noqa: F401
                                               LSTMCell, SimpleRNN, SimpleRNNCell,
                                               StackedRNNCells)
from tensorlite.keras.layers.reshaping import (Cropping1D, Cropping2D, Permute,  # noqa: F401
                                               RepeatVector, UpSampling1D, UpSampling2D,
                                               ZeroPadding1D, ZeroPadding2D)
from tensorlite.keras.layers.preprocessing_encoding import CategoryEncoding, Hashing  # noqa: F401
from tensorlite.keras.layers.preprocessing_lookup import (IntegerLookup,  # noqa: F401
                                                          StringLookup)
from tensorlite.keras.layers.text_vectorization import TextVectorization  # noqa: F401
from tensorlite.keras.layers.activation import (ELU, LeakyReLU, PReLU, ReLU,  # noqa: F401
                                                Softmax, ThresholdedReLU)
from tensorlite.keras.layers.image_preprocessing import (CenterCrop,  # noqa: F401
                                                         RandomContrast, RandomCrop,
                                                         RandomFlip, RandomRotation,
                                                         RandomZoom, Rescaling, Resizing)
from tensorlite.keras.layers.preprocessing_normalization import Normalization  # noqa: F401
from tensorlite.keras.layers.preprocessing_discretization import Discretization  # noqa: F401
from tensorlite.keras.layers.noise import (ActivityRegularization,  # noqa: F401
                                           GaussianNoise, SpatialDropout1D, SpatialDropout2D)
from tensorlite.keras.layers import experimental  # noqa: F401,E402
from tensorlite.keras.layers.masking import Masking  # noqa: F401,E402
from tensorlite.keras.layers.wrappers import Bidirectional, TimeDistributed  # noqa: F401,E402
from tensorlite.keras.layers.serialization import deserialize, serialize  # noqa: F401,E402
