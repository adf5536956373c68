"""Argument rules of the convolution, pooling and reshaping layers, as Keras's `conv_utils`:
tuple and padding normalisation, `data_format`, output lengths and the per-channel bias.

Example:
    >>> normalize_tuple(3, 2, "kernel_size")
    (3, 3)
    >>> conv_output_length(16, 3, "valid", 2)
    7
"""
from tensorlite.keras import backend
from tensorlite.ops import array_ops, math_ops


def normalize_tuple(value, n, name, allow_zero=False):
    """An int or an iterable of n ints -> a tuple of n ints (Keras's conv_utils rule)."""
    if isinstance(value, int):
        out = (value,) * n
    else:
        try:
            out = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                             f"Received: {name}={value!r}") from None
        if len(out) != n:
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                             f"Received: {name}={value!r}")
    low = 0 if allow_zero else 1
    if any(v < low for v in out):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} "
                         f"{'non-negative' if allow_zero else 'positive'} integers. "
                         f"Received: {name}={value!r}")
    return out


def normalize_padding(value, allowed=("valid", "same")):
    padding = value.lower() if isinstance(value, str) else value
    if padding not in allowed:
        raise ValueError(f"The `padding` argument must be one of {', '.join(map(repr, allowed))}"
                         f". Received: padding={value!r}")
    return padding


def normalize_data_format(value):
    fmt = backend.image_data_format() if value is None else str(value).lower()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                         f"'channels_last'. Received: data_format={value!r}")
    return fmt


def conv_output_length(length, kernel, padding, stride, dilation=1):
    """Output length of a convolution or pooling window along one axis (None stays None)."""
    if length is None:
        return None
    eff = (kernel - 1) * dilation + 1
    if padding in ("same", "causal"):
        out = length
    else:
        out = length - eff + 1
    return (out + stride - 1) // stride


def deconv_output_length(length, kernel, padding, output_padding, stride, dilation=1):
    """Output length of a transposed convolution along one axis."""
    if length is None:
        return None
    eff = (kernel - 1) * dilation + 1
    if output_padding is None:
        if padding == "valid":
            return length * stride + max(eff - stride, 0)
        return length * stride
    pad = eff // 2 if padding == "same" else 0
    return (length - 1) * stride + eff - 2 * pad + output_padding


def channels_bias(out, bias, channels_first):
    """Adds a per-channel bias on axis 1 (channels_first) or the last axis."""
    if channels_first:
        rank = out.shape.rank
        bias = array_ops.reshape(bias, (-1,) + (1,) * (rank - 2))
    return math_ops.add(out, bias)
