"""`tf.nn`: neural-network ops."""
from tensorlite.ops.conv_ops import (  # noqa: F401
    atrous_conv2d, conv1d, conv2d, conv2d_transpose, convolution, depthwise_conv2d,
    separable_conv2d)
from tensorlite.ops.candidate_sampling_ops import compute_accidental_hits  # noqa: F401
from tensorlite.ops.ctc_beam_search import ctc_beam_search_decoder  # noqa: F401
from tensorlite.ops.ctc_ops import ctc_greedy_decoder, ctc_loss, ctc_unique_labels  # noqa: F401
from tensorlite.ops.embedding_sparse import (  # noqa: F401
    embedding_lookup_sparse, safe_embedding_lookup_sparse)
from tensorlite.ops.log_poisson_loss import log_poisson_loss  # noqa: F401
from tensorlite.ops.math_ops import sigmoid, tanh  # noqa: F401
from tensorlite.ops.sampled_losses import nce_loss, sampled_softmax_loss  # noqa: F401
from tensorlite.ops.pooling_ops import (  # noqa: F401
    avg_pool, avg_pool1d, avg_pool2d, max_pool, max_pool1d, max_pool2d)
from tensorlite.ops.nn_ops import (  # noqa: F401
    batch_normalization, bias_add, compute_average_loss, crelu, dropout, elu,
    embedding_lookup, gelu, in_top_k, l2_loss, l2_normalize, leaky_relu, log_softmax, moments,
    relu, relu6, scale_regularization_loss, selu, sigmoid_cross_entropy_with_logits, silu,
    softmax, softmax_cross_entropy_with_logits, softplus, softsign,
    sparse_softmax_cross_entropy_with_logits, swish, top_k, weighted_cross_entropy_with_logits,
    zero_fraction)

from tensorlite.framework.symbolic_dispatch import expose as _expose  # noqa: E402
_expose(globals(), "nn.")  # ops on Keras symbolic tensors become layers
