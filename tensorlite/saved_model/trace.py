"""A function traced for a SavedModel: its graph, each value's shape with the dimensions that
follow the batch size as None, and the attributes that follow it.

With a None batch dimension in the input signature the function is traced twice
(tensorlite/graph/capture.py) and the two traces say which dimensions and attribute entries
follow the batch size; with None beyond the batch dimension one shape-polymorphic trace
carries them by the ops' shape rules (graph/tracing.py); with fixed shapes one trace
suffices, and its shapes come from the ops' shape rules (so functions that assign variables
export too). A tf.function without an input signature exports the graphs its calls traced,
as they are.

Example:
    >>> traced = TracedGraph(module.f, [tf.TensorSpec([None, 3], tf.float32)])
    >>> traced.spec(traced.graph.placeholders[0]).shape
    (None, 3)
"""
import warnings

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.registry import Spec
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.saved_model import composites


class TracedGraph:
    """`graph`, `signature` (the input TensorSpecs), `spec(slot)` and `attrs(node)`."""

    def __init__(self, function, signature, graph=None):
        from tensorlite.graph.function import Function, function as tf_function  # noqa: PLC0415
        fn = function.python_function if isinstance(function, Function) else function
        fn = composites.sparse_outputs_as_parts(fn)  # SparseTensor outputs: components
        self._capture, self._symbolic = None, {}
        if graph is None and any(composites.is_composite_spec(s) for s in signature):
            # ragged arguments: the placeholders are their components, traced
            # shape-polymorphically (their sizes are the values', not a batch size)
            if any(type(s).__name__ == "SparseTensorSpec" for s in signature):
                raise NotImplementedError(
                    "tf.saved_model.save: a tf.function with a tf.SparseTensorSpec in its "
                    "input_signature is not exported yet (tensorlite's traces do not take "
                    "SparseTensor arguments, and its sparse ops keep the indices as NumPy "
                    "values a graph would freeze); pass indices, values and dense_shape as "
                    "TensorSpecs, or a RaggedTensorSpec")
            self.signature = [c for s in signature for c in composites.component_specs(s)]
            self._polymorphic(tf_function(fn), signature)
            self._tensorflow_order(signature)
            return
        self.signature = [s if isinstance(s, TensorSpec) else TensorSpec(s.shape, s.dtype)
                          for s in signature]
        dynamic = any(d is None for s in self.signature for d in s.shape.as_list())
        if graph is not None:  # an existing trace (a tf.function called without signature)
            from tensorlite.graph.passes import Specs  # noqa: PLC0415
            self.graph, self._specs = graph, Specs(graph)
        elif any(None in s.shape.as_list()[1:] for s in self.signature):
            self._polymorphic(tf_function(fn))
        elif dynamic:
            from tensorlite.graph.capture import capture  # noqa: PLC0415
            try:
                self._capture = capture(fn, self.signature)
            except ValueError as e:
                if "not tensors" not in str(e):
                    raise
                # ragged outputs (tf.strings.split of a batch of strings): their sizes are
                # the values', which two batch sizes of empty samples do not show; one
                # shape-polymorphic trace carries them
                self._polymorphic(tf_function(fn))
                return
            self.graph = self._capture.graph
        else:
            self.graph = tf_function(fn).get_concrete_function(*self.signature).graph
            from tensorlite.graph.passes import Specs  # noqa: PLC0415
            self._specs = Specs(self.graph)

    def _polymorphic(self, function, signature=None):
        """None beyond the batch dimension (`[None, None]` strings, `[None, None, 3]`
        images), or composite arguments (`signature`): one shape-polymorphic trace, whose
        ops' shape rules carry every None dimension (graph/tracing.py), as TensorFlow
        traces a signature symbolically."""
        from tensorlite.graph.passes import Specs  # noqa: PLC0415
        graph = function.get_concrete_function(*(signature or self.signature)).graph
        if graph.size_dependent is not None:
            raise errors.UnimplementedError(
                None, None, f"SavedModel export: the traced function depends on the sizes its "
                f"None dimensions take ({graph.size_dependent}); export one graph for every "
                f"size by computing sizes with tf.shape(x), or give fixed sizes in the "
                f"input_signature")
        self.graph, self._specs = graph, Specs(graph)
        self._symbolic = dict(graph.symbolic_shapes or {})

    def _tensorflow_order(self, signature):
        """A trace takes a RaggedTensor's components as it flattens: flat_values, then the
        row splits from the innermost; TensorFlow's functions take the row splits from the
        outermost. The placeholders are put in TensorFlow's order (the fresh graph's own)."""
        order, k = [], 0
        for spec in signature:
            n = len(composites.component_specs(spec))
            block = list(range(k, k + n))
            order += block[:1] + block[1:][::-1] if type(spec).__name__ == \
                "RaggedTensorSpec" else block
            k += n
        self.graph.placeholders = [self.graph.placeholders[i] for i in order]

    def spec(self, slot):
        """The slot's Spec: shape with None where it follows the batch size (or, in a
        polymorphic trace, any None dimension of the inputs)."""
        if slot in self.graph.specs:  # an argument: as the signature declares it
            i = self.graph.placeholders.index(slot)
            s = self.signature[i]
            return Spec(tuple(s.shape.as_list()), s.dtype)
        if slot in self._symbolic:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dtype = self._specs[slot].dtype
            return Spec(tuple(self._symbolic[slot]), dtype)
        if self._capture is not None:
            value = self._capture.value(slot)
            dyn = self._capture.dynamic_dims(slot)
            return Spec(tuple(None if i in dyn else int(d) for i, d in enumerate(value.shape)),
                        dtypes.as_dtype(value.dtype))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec = self._specs[slot]
        return Spec(tuple(spec.shape), spec.dtype)

    def attrs(self, node):
        """The node's attributes, tuple entries that follow the batch size as None."""
        attrs = dict(node.attrs)
        if self._capture is None:
            return attrs
        for key, positions in self._capture.varying_attrs(node).items():
            value = attrs[key]
            if not (isinstance(value, tuple) and positions):
                raise errors.UnimplementedError(
                    None, None, f"SavedModel export: attribute {key}={value!r} of "
                    f"{node.op.name} (node created at {node.where}) changes with the batch "
                    f"size; export with a fixed batch size in the input signature")
            attrs[key] = tuple(None if i in positions else v for i, v in enumerate(value))
        return attrs


__all__ = ["TracedGraph"]
