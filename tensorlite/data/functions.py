"""Calling user functions on dataset elements: the tf.data calling convention, conversion
of results to tensors, checks against the declared structure, per-element seeds, and error
notes that name the stage and the element index."""
import time

from tensorlite.data import structure
from tensorlite.framework import errors


class StageFunction:
    """A user function bound to a pipeline stage (map, filter, flat_map, ...)."""

    def __init__(self, fn, stage, check_spec=True):
        if not callable(fn):
            raise TypeError(f"{stage}: expected a callable, got {type(fn).__name__}")
        self.fn = fn
        self.stage = stage
        self.spec = None  # structure/dtypes of the first result, checked on later ones
        self._check = check_spec
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def __call__(self, element, index):
        try:
            out = structure.call_with_element(self.fn, element)
        except Exception as e:  # noqa: BLE001 - re-raised with a note, same type/traceback
            _note(e, f"raised by the function {self.name!r} of the {self.stage} stage on "
                     f"element {index}")
            raise
        return out

    def convert(self, out, index):
        """Result -> tensors, checked against the first result's structure and dtypes. A
        list returned by the function is a tuple of components, as tf.data packs it."""
        if type(out) is list:
            out = tuple(out)
        element = structure.to_element(out, f"{self.stage} element {index}")
        if self._check:
            if self.spec is None:
                self.spec = structure.spec_of(element)
            else:
                structure.check_matches(element, _loose(self.spec), f"{self.stage} stage "
                                        f"(function {self.name!r})", index)
        return element


def _loose(spec):
    from tensorlite.framework import nest  # noqa: PLC0415
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
    return nest.map_structure(lambda s: TensorSpec(None, s.dtype), spec)


def _note(exc, text):
    notes = getattr(exc, "__notes__", [])
    if text not in notes:
        exc.add_note(text)


def timed(stats_entry, fn, *args):
    """Runs fn, adding its wall time to a Stats entry."""
    t0 = time.perf_counter()
    try:
        return fn(*args)
    finally:
        stats_entry.add(time.perf_counter() - t0)


def check_predicate(value, stage, index):
    """A filter/take_while predicate must give a scalar bool."""
    t = structure.to_element(value, f"{stage} predicate")
    if not hasattr(t, "dtype") or not t.dtype.is_bool or t.shape.rank != 0:
        raise errors.InvalidArgumentError(
            None, None, f"{stage}: the predicate must return a scalar tf.bool tensor, got "
            f"{getattr(t, 'dtype', type(t).__name__)} with shape {getattr(t, 'shape', '?')} "
            f"on element {index}")
    return bool(t._value)


def traced_spec(fn, input_spec, first_spec):
    """The element_spec of `fn` mapped over elements of `input_spec`, as TensorFlow gives
    it: `first_spec` (from one real element) with None wherever tracing `fn` on the input
    spec leaves a size unknown, so a `map` after `batch` keeps the batch dimension None.
    Without an unknown size in the input, or when the function cannot be traced (it reads
    `.numpy()`, returns a non-tensor), the first element's spec stands."""
    from tensorlite.framework import nest  # noqa: PLC0415
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
    leaves = nest.flatten(input_spec)
    if not all(type(s) is TensorSpec for s in leaves) or \
            not any(s.shape.rank is not None and None in s.shape.as_list() for s in leaves):
        return first_spec
    from tensorlite.graph.function import Function  # noqa: PLC0415
    from tensorlite.ops.script_ops import effects_off  # noqa: PLC0415
    try:
        with effects_off():
            concrete = Function(lambda element: structure.call_with_element(fn, element),
                                name=getattr(fn, "__name__", "map_fn")
                                ).get_concrete_function(input_spec)
        traced = nest.flatten(concrete.output_shapes)
    except Exception:  # noqa: BLE001 - an untraceable function keeps the probed spec
        return first_spec
    specs = nest.flatten(first_spec)
    if len(traced) != len(specs) or not all(type(s) is TensorSpec for s in specs):
        return first_spec
    relaxed = [s if t.rank != s.shape.rank or s.shape.rank is None else
               TensorSpec([None if d is None else k for k, d in zip(s.shape.as_list(),
                                                                     t.as_list())],
                          s.dtype, s.name) for s, t in zip(specs, traced)]
    return nest.pack_like(first_spec, relaxed)
