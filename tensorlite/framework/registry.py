"""The op registry: every operation is defined once here, with all its rules.

An op is a forward computation on NumPy arrays, a gradient rule (vector-Jacobian product
written with tensorlite ops, so that it is itself differentiable), and a shape/dtype rule.
Eager execution, the GradientTape, graph tracing, export and vectorisation all read this one
table. Consumers beyond the forward, gradient and shape rule (TensorFlow's op name and attrs
for GraphDef/SavedModel, the ONNX and TFLite mappings, the batching rule of
`vectorized_map`) are declared beside the op with `declare`; each consumer documents the form
of its own rule and raises a clear error naming the op when a rule is missing.

Gradient rules have the signature ``grad(g, ans, *inputs, **attrs)`` and return one entry
per input (a Tensor or None). They must accept a cotangent ``g`` with extra *leading* batch
dimensions (``g.ndim - ans.ndim`` of them): the tape pushes all basis cotangents of a
jacobian through the backward pass at once. Rules that cannot are registered with
``batchable=False`` and the jacobian loops over them instead.

Example:
    >>> op = registry.get("Exp")
    >>> op.name
    'Exp'
"""
import threading
from collections import namedtuple

import numpy as np

from tensorlite.framework import dtypes

REGISTRY = {}


class _NotDifferentiable:
    """Grad marker: the op's outputs carry no gradient (integer results, random draws)."""

    def __repr__(self):
        return "NOT_DIFFERENTIABLE"


NOT_DIFFERENTIABLE = _NotDifferentiable()

# A symbolic value: shape is a tuple whose entries are ints or None.
Spec = namedtuple("Spec", ["shape", "dtype"])


# The consumers that read per-op rules declared with `declare`; None means "no rule". An op
# says that a consumer does not handle it (yet, or by design: a gradient-only op has no
# inference export) with `declare(op, unsupported="onnx tflite")`
# (the rule stays None, so consumers raise their usual error naming the op); the registry
# walk (tests/test_registry_walk.py) requires a rule or that marker for every op.
CONSUMERS = ("tf", "onnx", "tflite", "batch", "tf_import")

# Properties each op declares for the graph layer and the SavedModel reader/writer (the only
# place such per-op facts live: no consumer keeps a table of op names). name -> default.
#   tf_outputs    TensorFlow output argument names (saved_model/op_outputs.py): a str (all
#                 outputs in one argument, e.g. "y"), a tuple of argument specs for several
#                 (each a name or (name, length attribute)), or a dict {TF op name: either}
#                 when the `tf` rule writes several TF ops;
#   commutative   swapping the two inputs gives exactly the same result (graph/passes/cse.py);
#   jit           the compiler's emit rule (graph/compiler.py documents the forms);
#   numexpr       its numexpr expression, "{0}"/"{1}" for the inputs (graph/compiler.py);
#   fuse          its step in a FusedElementwise kernel (graph/passes/fusion.py documents
#                 the forms);
#   simplify      the arithmetic pass's rewrite rule (graph/passes/arithmetic.py);
#   fold          constant folding may evaluate it at optimisation time;
#   varying       runs Python on every call: outputs never frozen by a trace (graph/tracing.py);
#   shape_only    outputs follow the inputs' shapes, not their values (graph/tracing.py);
#   moves_values  outputs are the input's values moved (Identity, Reshape, Transpose): cheap,
#                 and run even where a Keras construction trace skips arithmetic, since
#                 Python may read them (graph/tracing.py's Tracer.stand_in);
#   exact_shape   the shape rule is exact: given the attributes the op's public function
#                 passes (and inputs of the ranks it accepts), the rule raises on every
#                 combination of input shapes the kernel refuses whatever the values, and
#                 otherwise gives the kernel's output shapes (it may refuse more: the kernel
#                 then runs and decides). A Keras construction trace then trusts the rule and
#                 runs no kernel to find shape errors (graph/tracing.py's Tracer.stand_in).
#                 Each claim is proven against the kernel, mismatched shapes included, by
#                 tests/test_shape_rules_exact.py;
#   cost          the parallel pass's cost form (graph/passes/parallel.py);
#   fuses         on a fused op: the contraction whose following bias add and ReLU it
#                 absorbs (graph/passes/kernel_fusion.py);
#   fuses_residual  on a fused op: it also takes a residual addend (ResNet's `Add` of a
#                 block's shortcut), an optional last input of the output's shape added
#                 after the bias and before the activation (graph/passes/kernel_fusion.py);
#   fuses_pad     on a fused op: the windowed op (MaxPool) whose input's constant spatial
#                 padding (a PadV2 used by nothing else) it takes as padding of its own,
#                 the pad's value as attribute `fill` (graph/passes/kernel_fusion.py);
#   fuses_scale   on a fused op: it takes the per-output-channel scale of the contraction's
#                 filter (the `linear_filter` input) as an input of its own (attribute
#                 scaled=True, the input after the bias) and applies it to the output in its
#                 epilogue (graph/passes/kernel_fusion.py);
#   polymorphic_attrs  `fn(specs, arrays, attrs) -> attrs` written for any size (tracing);
#   reads_state_only   stateful but changes nothing: export may run it on samples (capture);
#   tf_import_opaque   its tf_import rule computes outside the registry, so a loaded function
#                 using it runs as one node (saved_model/function_runner.py);
#   fresh_outputs each output is a new array no input shares: an assignment may adopt it
#                 without a copy (graph/executor.py);
#   zero_preserving  a unary elementwise op with f(0) == 0 whose TensorFlow function takes a
#                 SparseTensor, applied to its values (ops/sparse_dispatch.py);
#   kernel        an optimizer update op's NumPy kernel (ops/optimizer_ops.py), which the
#                 eager Keras optimizers call directly;
#   linear_filter the op is linear in a filter input and its output's last axis is the
#                 output channel, the row-major flattening of the filter's trailing axes:
#                 `(filter input index, number of trailing axes)` (Conv2D: (1, 1), HWIO;
#                 DepthwiseConv2dNative: (1, 2), HWCM), or `fn(attrs) -> that or None`
#                 when attributes decide; BatchNorm folding scales those filter entries
#                 (graph/passes/fold_batch_norm.py).
PROPERTIES = {"tf_outputs": None, "commutative": False, "jit": None, "numexpr": None,
              "fuse": None, "simplify": None, "fold": True, "varying": False,
              "shape_only": False, "moves_values": False, "exact_shape": False, "cost": None,
              "fuses": None, "fuses_residual": False, "fuses_scale": False, "fuses_pad": None,
              "polymorphic_attrs": None, "reads_state_only": False, "tf_import_opaque": False,
              "fresh_outputs": False, "kernel": None, "linear_filter": None,
              "zero_preserving": False}

# What running an op does besides computing its outputs from its inputs (`Op.effects`):
#   None            a pure tensor computation;
#   "state"         reads or changes in-process state: variables, random draws, mutable
#                   tables, TensorArrays, stateful control flow;
#   "io"            touches files, streams or the console (ReadFile, WriteFile, PrintV2,
#                   summary writes);
#   "callback"      runs arbitrary Python code that may have any effect (py_function, the
#                   effects of Keras's optimizers and metrics);
#   "pure_callback" runs Python code declared free of effects (numpy_function(stateful=
#                   False)): graph passes may fold it as TensorFlow does, but it is Python.
# Graph passes treat "state", "io" and "callback" as stateful (`Op.stateful`); loading a
# file resolves only functions whose ops have none of "io", "callback", "pure_callback"
# (keras/layers/op_lambda.py).
EFFECTS = (None, "state", "io", "callback", "pure_callback")
STATEFUL_EFFECTS = frozenset({"state", "io", "callback"})
UNSAFE_EFFECTS = frozenset({"io", "callback", "pure_callback"})


class Op:
    __slots__ = ("name", "forward", "grad", "shape_fn", "multi_output", "batchable",
                 "effects", "unsupported", *CONSUMERS, *PROPERTIES)

    def __init__(self, name, forward, grad, shape_fn, multi_output, batchable,
                 effects=None):
        self.name = name
        self.forward = forward
        self.grad = grad
        self.shape_fn = shape_fn
        self.multi_output = multi_output
        self.batchable = batchable
        self.effects = _checked_effects(name, effects)
        self.unsupported = frozenset()
        for consumer in CONSUMERS:
            setattr(self, consumer, None)
        for prop, default in PROPERTIES.items():
            setattr(self, prop, default)

    @property
    def stateful(self):
        """Whether graph passes must neither remove, merge, move nor fold its nodes."""
        return self.effects in STATEFUL_EFFECTS

    def __call__(self, *inputs, **attrs):
        """Runs the op on Tensors (already converted); returns a Tensor or a tuple."""
        return _execute(self, inputs, attrs)

    def infer(self, *specs, **attrs):
        """Output Spec(s) for input Specs, without running the op on real data."""
        if self.shape_fn is not None:
            return self.shape_fn(*specs, **attrs)
        return abstract_eval(self, specs, attrs)

    def __repr__(self):
        return f"<Op {self.name}>"


def _checked_effects(name, effects):
    if effects not in EFFECTS:
        raise ValueError(f"op {name}: effects={effects!r} is not one of {EFFECTS}")
    return effects


def register(name, forward, grad=None, shape=None, multi_output=False, batchable=True,
             effects=None, **rules):
    """Defines an op. `grad=None` means no rule yet: differentiating through it is a loud
    LookupError naming the op; `grad=NOT_DIFFERENTIABLE` means it legitimately has none.
    `effects` says what else running it does (see `EFFECTS`); None for pure computations.
    Other keywords are consumer rules and properties, as for `declare`."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is already registered")
    op = Op(name, forward, grad, shape, multi_output, batchable, effects)
    if rules:
        declare(op, **rules)
    REGISTRY[name] = op
    return op


def declare(op, **rules):
    """Attaches consumer rules and properties to an op, next to its registration, e.g.
    ``declare(EXP, onnx=..., batch=...)``. The keys are `CONSUMERS` (a rule, or UNSUPPORTED)
    and `PROPERTIES`; each consumer module documents what its rule is. `effects=` declares
    the op's effects (see `EFFECTS`); `unsupported=` names consumers (a string of names or a
    tuple) that do not handle the op. Returns the op.

    Example:
        >>> declare(get("Exp"), tf="Exp")  # doctest: +SKIP
    """
    if "effects" in rules:
        op.effects = _checked_effects(op.name, rules.pop("effects"))
    if "unsupported" in rules:
        op.unsupported = op.unsupported | _checked_consumers(op, rules.pop("unsupported"))
    for consumer, rule in rules.items():
        if consumer not in CONSUMERS and consumer not in PROPERTIES:
            raise TypeError(f"declare({op.name}): unknown consumer {consumer!r}; "
                            f"expected one of {', '.join(CONSUMERS + tuple(PROPERTIES))}")
        setattr(op, consumer, rule)
    return op


def _checked_consumers(op, names):
    names = names.split() if isinstance(names, str) else tuple(names)
    bad = [n for n in names if n not in CONSUMERS and n not in PROPERTIES]
    if bad:
        raise TypeError(f"declare({op.name}): unsupported= names unknown consumers {bad}")
    return frozenset(names)


def declared(op, consumer):
    """Whether `op` declares a rule for `consumer` or says it does not support it."""
    return getattr(op, consumer) is not None or consumer in op.unsupported


_needed = threading.local()


def input_needs_grad(i):
    """Inside a gradient rule: whether the tape needs the gradient of input `i` (False
    when that input does not depend on any source, e.g. the data batch of a first layer),
    so expensive rules can skip it. True when unknown."""
    mask = getattr(_needed, "mask", None)
    return True if mask is None else mask[i]


def set_needed_inputs(mask):
    _needed.mask = mask


def get(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise LookupError(f"no op named {name!r} is registered") from None


def abstract_eval(op, specs, attrs):
    """Shape rule by evaluation on zeros: exact for fully known shapes; ops that must handle
    unknown dimensions give an explicit shape rule."""
    arrays = []
    for s in specs:
        if any(d is None for d in s.shape):
            raise NotImplementedError(
                f"op {op.name} has no shape rule for partially known shapes {s.shape}; "
                f"give it one in its registration")
        arrays.append(np.zeros(s.shape, dtype=s.dtype.as_numpy_dtype if not s.dtype.is_string
                               else object))
    out = op.forward(*arrays, **attrs)
    if op.multi_output:
        return [Spec(np.shape(o), dtypes.as_dtype(np.asarray(o).dtype)) for o in out]
    return Spec(np.shape(out), dtypes.as_dtype(np.asarray(out).dtype))


def _execute(op, inputs, attrs):  # replaced by dispatch.execute when dispatch loads
    raise RuntimeError("tensorlite.framework.dispatch is not loaded")
