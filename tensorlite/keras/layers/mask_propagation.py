"""Keras mask propagation: a layer's output carries the mask its `compute_mask` gives, and
the next layer called on that output receives it as its `mask` argument, as Keras does with
`tensor._keras_mask`. Tensors have fixed slots, so masks live in a side table
(framework/tensor_notes.py), which `tensor._keras_mask` reads.

Example:
    >>> emb = tf.keras.layers.Embedding(5, 2, mask_zero=True)
    >>> out = emb(tf.constant([[1, 0]]))
    >>> keras_mask(out).numpy()
    array([[ True, False]])
"""
from tensorlite.framework import nest
from tensorlite.framework.tensor_notes import KERAS_MASKS


def set_keras_mask(tensor, mask):
    if mask is not None:
        KERAS_MASKS.set(tensor, mask)


def keras_mask(tensor):
    """The mask attached to `tensor`, or None."""
    return KERAS_MASKS.get(tensor)


def input_mask(inputs):
    """The masks of a layer's inputs: one mask, a list of them, or None when none is set."""
    if not KERAS_MASKS:
        return None
    if isinstance(inputs, (list, tuple)):
        masks = [keras_mask(x) for x in inputs]
        return masks if any(m is not None for m in masks) else None
    return keras_mask(inputs)


def attach(layer, inputs, mask, outputs):
    """Sets `layer.compute_mask(inputs, mask)` on the outputs, when the layer propagates
    masks (supports_masking) or computes its own (an overridden compute_mask)."""
    own = type(layer).compute_mask is not _base_compute_mask()
    if not own and (mask is None or not layer.supports_masking):
        return
    out_mask = layer.compute_mask(inputs, mask)
    if out_mask is None:
        return
    if isinstance(outputs, (list, tuple)):
        masks = out_mask if isinstance(out_mask, (list, tuple)) else [out_mask] + [None] * (
            len(outputs) - 1)
        for o, m in zip(outputs, masks):
            set_keras_mask(o, m)
    else:
        set_keras_mask(outputs, out_mask if not isinstance(out_mask, (list, tuple)) else
                       nest.flatten(out_mask)[0])


def _base_compute_mask():
    from tensorlite.keras.layers.layer import Layer  # noqa: PLC0415 - the base class
    return Layer.compute_mask
