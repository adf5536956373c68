"""`tf.keras.utils.pad_sequences` (also `tf.keras.preprocessing.sequence.pad_sequences`).

Example:
    >>> pad_sequences([[1, 2, 3], [4]], maxlen=2)
    array([[2, 3],
           [0, 4]], dtype=int32)
"""
import numpy as np


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """Pads (and cuts) lists of sequences to one length, as Keras: `padding`/`truncating`
    'pre' act at the start, 'post' at the end; the result is a NumPy array."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(f"padding and truncating must be 'pre' or 'post', got {padding!r}, "
                         f"{truncating!r}")
    lengths, inner = [], ()
    for s in sequences:
        if not hasattr(s, "__len__"):
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: "
                             f"{s!r}")
        lengths.append(len(s))
        if len(s) and not inner:
            inner = np.asarray(s).shape[1:]
    if maxlen is None:
        maxlen = max(lengths, default=0)
    is_text = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.object_)
    if isinstance(value, str) and dtype != object and not is_text:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type "
                         f"{type(value)}; use dtype=object for string padding")
    out = np.full((len(sequences), maxlen) + tuple(inner), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or maxlen == 0:
            continue
        cut = np.asarray(s, dtype=dtype)[-maxlen:] if truncating == "pre" else \
            np.asarray(s, dtype=dtype)[:maxlen]
        if cut.shape[1:] != tuple(inner):
            raise ValueError(f"Shape of sample {cut.shape[1:]} of sequence at position {i} "
                             f"is different from expected shape {tuple(inner)}")
        if padding == "post":
            out[i, :len(cut)] = cut
        else:
            out[i, maxlen - len(cut):] = cut
    return out
