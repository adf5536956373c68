"""The JIT behind `tf.function(jit_compile=True)` (also `experimental_compile=True` and
`tf.config.optimizer.set_jit(True)`): compiles a graph, specialised on its input shapes, into
one generated Python function with fused kernels inlined.

What it does that the plain executor does not:
- elementwise chains and reductions become kernels that allocate once and then work in
  place (`np.exp(t, t)`): `log(2*exp(relu(x+1)))` is one allocation and five in-place passes;
- each kernel step is the NumPy call the op's forward makes, without the forward's wrapper,
  so results are bit-identical to eager (reductions call `ufunc.reduce` as np.sum/np.mean do);
- ReLU and max/min against a scalar run against a preallocated constant array of the full
  shape (NumPy's scalar-broadcast path for maximum is ~4x slower than its array path);
- matmul, reshape and reductions are emitted inline; everything else calls its op's forward;
- with numexpr installed, a kernel may run as ONE multithreaded numexpr pass
  (`sum(x + y*z)`), chosen by timing both versions once at compile time on the kernel's real
  shapes (numexpr wins on large arrays and many cores; on small arrays NumPy's SIMD loops do).

The input shapes and dtypes are guarded on entry; another shape compiles another
specialisation (as XLA does), up to MAX_SPECIALISATIONS, then the plain executor runs.
The runner has executor.compile_graph's contract: `run(list of arrays) -> list of output
arrays in graph.output_slots() order`; `run.source` is the generated code and `run.kernels`
one line per fused kernel.

Example:
    >>> f = tf.function(lambda x: tf.math.log(2 * tf.exp(tf.nn.relu(x + 1))), jit_compile=True)
    >>> f(tf.zeros([2])).numpy()
    array([1.6931472, 1.6931472], dtype=float32)
"""
import functools
import re
import timeit

import numpy as np

from tensorlite.framework import dtypes, registry
from tensorlite.framework.registry import Spec
from tensorlite.graph import executor
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, Graph, Node, is_stateful
from tensorlite.graph.grouping import fusion_groups
from tensorlite.graph.passes.fusion import FUSED
from tensorlite.ops.math_ops import ADD, MUL, SUB, SUM

try:  # optional extra: `pip install numexpr`
    import numexpr
except ImportError:  # pragma: no cover - depends on the environment
    numexpr = None

BACKEND = ["auto"]  # "auto" (time numexpr against NumPy per kernel), "numpy" or "numexpr"
MAX_SPECIALISATIONS = 8
NUMEXPR_MIN_SIZE = 1 << 16  # below this, numexpr's start-up cost always loses
MAX_CONSTANT_FILL = 1 << 22  # largest preallocated constant array (elements)


def set_backend(name):
    """Chooses the kernel generator: "auto", "numpy" or "numexpr" (needs numexpr)."""
    if name not in ("auto", "numpy", "numexpr"):
        raise ValueError(f"unknown jit backend {name!r}; use 'auto', 'numpy' or 'numexpr'")
    if name == "numexpr" and numexpr is None:
        raise ImportError("the numexpr jit backend needs numexpr: pip install numexpr")
    BACKEND[0] = name


# -- what can be fused: each op's `jit` rule (declared beside the op) --------------------------
# The forms of a `jit` rule (a tuple: kind, then its arguments and flags):
#   ("ufunc", name, *flags)  the forward is np.<name> (checked: if the forward changes, the
#                            compiler calls the new forward instead of guessing); flags:
#                            "floats": the forward wraps the ufunc with a check that only
#                            matters for integers, so only float/complex results fuse;
#                            "swap": commutative, a scalar or broadcast operand goes second;
#                            "fill": a 0-d constant operand runs as a preallocated full array;
#   ("ufunc_with", name, constant, *flags)  np.<name>(x, constant) (Relu: maximum with 0);
#   ("chain", first ufunc, its args ("{0}", "0.5"), in-place steps, *flags)  the forward's
#                            NumPy calls re-emitted step by step into one buffer;
#   ("reduce", ufunc, *flags)  ufunc.reduce, as np.sum/np.mean do; "typed": the input's
#                            dtype is passed; "mean": divided by the count (floats only);
#                            "nonempty": only when no reduced axis is empty (max, min);
#   ("expr", template)       one NumPy expression of the inputs ({0}, {1}, ...);
#   ("alias",)               the output is the input (Identity, StopGradient);
#   ("cast",), ("matmul",), ("reshape",)  emitted inline when the shapes allow it.
# An op's `numexpr` rule is its numexpr expression ("{0}" for inputs); for a "reduce" op,
# numexpr's reduction function ("sum").
FLOATS = "fc"


def _jit_rule(op):
    """The op's jit rule, or None (no rule, or a "ufunc" rule whose forward is no longer
    exactly that ufunc)."""
    rule = getattr(op, "jit", None)
    if rule is not None and rule[0] == "ufunc" and "floats" not in rule[2:] and \
            op.forward is not getattr(np, rule[1]):
        return None
    return rule


class _KernelOp:
    """Stands in for the op of a node that runs a compiled numexpr kernel."""
    multi_output = False

    def __init__(self, name, forward):
        self.name = name
        self.forward = forward


# -- shapes and dtypes ------------------------------------------------------------------------
def infer_specs(graph):
    """slot -> Spec (shape tuple, tensorlite DType) or None where unknown; stateful nodes
    are never evaluated."""
    specs = {s: Spec(tuple(shape), dtype) for s, (shape, dtype) in graph.specs.items()}
    for s, v in graph.constants.items():
        specs[s] = _value_spec(v)
    for node in graph.nodes:
        outs = _node_specs(node, specs)
        for o, spec in zip(node.outputs, outs):
            specs[o] = spec
    return specs


def _value_spec(v):
    try:
        return Spec(tuple(np.shape(v)), dtypes.as_dtype(np.asarray(v).dtype))
    except (TypeError, ValueError, KeyError):
        return None


def _variable_spec(var):
    try:
        shape = var.shape.as_list()
        return None if None in shape else Spec(tuple(shape), var.dtype)
    except (AttributeError, ValueError, TypeError):
        return None


def _node_specs(node, specs):
    n = len(node.outputs)
    if node.op is READ_VARIABLE or node.op is ASSIGN_VARIABLE:
        return [_variable_spec(node.attrs["variable"])] * n
    ins = [specs.get(s) for s in node.inputs]
    if any(s is None for s in ins) or (is_stateful(node.op) and node.op.shape_fn is None):
        return [None] * n
    try:
        out = node.op.infer(*ins, **node.attrs)
    except Exception:  # noqa: BLE001 - unknown only means "not fused"
        return [None] * n
    outs = list(out) if node.op.multi_output else [out]
    good = [o if o is not None and o.shape is not None and
            all(isinstance(d, (int, np.integer)) for d in o.shape) else None for o in outs]
    return good + [None] * (n - len(good))


def _np_dtype(spec):
    return np.dtype(spec.dtype.as_numpy_dtype)


# -- undoing the remapping pass ----------------------------------------------------------------
def unfuse(graph):
    """A copy of `graph` with `FusedElementwise` nodes (graph/passes/fusion.py) expanded back
    into their member ops, which the JIT fuses its own way."""
    if not any(n.op is FUSED for n in graph.nodes):
        return graph
    g = graph.copy()
    nodes = []
    for node in graph.nodes:
        if node.op is not FUSED:
            nodes.append(node)
            continue
        program = node.attrs["program"]
        refs = list(node.inputs)
        for j, (name, inputs, _inplace) in enumerate(program):
            out = node.outputs[0] if j == len(program) - 1 else g.new_slot()
            nodes.append(Node(registry.get(name), [refs[r] for r in inputs], {}, [out],
                              node.where))
            refs.append(out)
    g.nodes = nodes
    return g


# -- kernels: which nodes fuse together --------------------------------------------------------
def _fusible(node, specs):
    rule = _jit_rule(node.op)
    if rule is None or len(node.outputs) != 1 or is_stateful(node.op):
        return False
    out = specs.get(node.outputs[0])
    if out is None or any(specs.get(s) is None for s in node.inputs):
        return False
    kind, flags = rule[0], rule[1:]
    if "floats" in flags:
        return _np_dtype(out).kind in FLOATS
    if "mean" in flags:
        return _np_dtype(out).kind in "f"
    if "nonempty" in flags:
        x = specs[node.inputs[0]]
        return all(x.shape[a] != 0 for a in node.attrs["axis"])
    if kind == "cast":
        return not node.attrs["dtype"].is_string and (
            node.attrs["dtype"].kind in FLOATS or _np_dtype(specs[node.inputs[0]]).kind in "biu")
    return True


def _is_reduce(op):
    rule = _jit_rule(op)
    return rule is not None and rule[0] == "reduce"


def kernels(graph, specs):
    """Lists of node indices (in graph order), one per fused kernel. Walking backwards, a
    fusible node joins its consumers' kernel when all its uses are in that one kernel and it
    is no graph output; a kernel never spans a stateful node."""
    nodes = graph.nodes
    groups = fusion_groups(graph, lambda n: _fusible(n, specs), lambda n: is_stateful(n.op))
    return [g for g in groups if len(g) > 1 or _is_reduce(nodes[g[0]].op)]


# -- NumPy code generation ---------------------------------------------------------------------
class _Emitter:
    """Writes one line (or a few) of NumPy per node. A value the generated code allocated
    itself ("owned") and that no opaque call has seen ("escaped": it might be aliased by a
    view) may be overwritten in place at its last use."""

    def __init__(self, graph, specs, env):
        self.graph = graph
        self.specs = specs
        self.env = env
        self.lines = []
        self.owned = set()
        self.escaped = set()
        self.last = executor.last_uses(graph)
        self.fills = {}

    # -- helpers
    def name_const(self, value, hint):
        key = f"k{hint}_{len(self.env)}"
        self.env[key] = value
        return key

    def fill(self, value, shape, dtype):
        """A preallocated read-only array of `value` in `shape` (shared per value/shape)."""
        key = (float(value), shape, dtype.str)
        name = self.fills.get(key)
        if name is None:
            arr = np.full(shape, value, dtype=dtype)
            arr.flags.writeable = False
            name = self.fills[key] = self.name_const(arr, "fill")
        return name

    def reusable(self, slot, k, out_spec):
        spec = self.specs.get(slot)
        return (slot in self.owned and slot not in self.escaped and self.last.get(slot) == k
                and spec is not None and out_spec is not None and len(out_spec.shape) > 0
                and tuple(spec.shape) == tuple(out_spec.shape) and spec.dtype == out_spec.dtype)

    def target(self, node, k, candidates):
        """The dying owned input to write into, or None."""
        out = self.specs.get(node.outputs[0])
        for s in candidates:
            if self.reusable(s, k, out):
                return s
        return None

    def scalar_const(self, slot):
        """The Python-visible value of a 0-d constant slot, else None."""
        v = self.graph.constants.get(slot)
        if v is None or np.ndim(v) != 0:
            return None
        return np.asarray(v)

    # -- emission
    def emit(self, k, node):
        if node.op is READ_VARIABLE:  # the variable's current array: read, never written
            var = self.name_const(node.attrs["variable"], "var")
            return self._assign(node, f"{var}._t._value", owned=False)
        if self._fusible(node):
            rule = _jit_rule(node.op)
            if getattr(self, "_emit_" + rule[0])(k, node, *rule[1:]) is not False:
                return None
        return self._call(k, node)

    def _fusible(self, node):
        return _fusible(node, self.specs)

    def _call(self, k, node):
        fn = functools.partial(node.op.forward, **node.attrs) if node.attrs else \
            node.op.forward
        self.env[f"f{k}"] = fn
        call = f"f{k}({', '.join(f'v{s}' for s in node.inputs)})"
        outs = node.outputs
        if len(outs) == 1 and not node.op.multi_output:
            self.lines.append(f"v{outs[0]} = {call}")
        elif outs:
            self.lines.append(f"{', '.join(f'v{s}' for s in outs)}, = {call}")
        else:
            self.lines.append(call)
        self.escaped.update(node.inputs)

    def _assign(self, node, expr, owned=True):
        self.lines.append(f"v{node.outputs[0]} = {expr}")
        if owned:
            self.owned.add(node.outputs[0])

    def _ufunc(self, k, node, ufunc, args=None):
        args = [f"v{s}" for s in node.inputs] if args is None else args
        t = self.target(node, k, node.inputs)
        minmax = ufunc in ("maximum", "minimum")  # a positional `out` is deprecated there
        out = "" if t is None else (f", out=v{t}" if minmax else f", v{t}")
        self._assign(node, f"np.{ufunc}({', '.join(args)}{out})")

    def _full_scalar(self, node, i):
        """Operand `i` as a preallocated full array when it is a 0-d constant and the other
        operand already has the output's shape (NumPy's array-array loops are the fast ones)."""
        c = self.scalar_const(node.inputs[i])
        other = self.specs[node.inputs[1 - i]]
        out = self.specs[node.outputs[0]]
        if c is None or tuple(other.shape) != tuple(out.shape) or not out.shape or \
                int(np.prod(out.shape)) > MAX_CONSTANT_FILL:
            return None
        return self.fill(c, tuple(out.shape), c.dtype)

    def _emit_ufunc(self, k, node, ufunc, *flags):
        if "swap" in flags:
            return self._commutative(k, node, ufunc)
        if "fill" in flags:
            return self._minmax(k, node, ufunc)
        return self._ufunc(k, node, ufunc)

    def _commutative(self, k, node, ufunc):
        """A scalar or broadcast operand goes second: NumPy's loops are faster that way
        (2 * x is ~30% slower than x * 2 on [100, 100] float32), and the result is the
        same (IEEE addition and multiplication commute)."""
        a, b = node.inputs
        out = tuple(self.specs[node.outputs[0]].shape)
        if tuple(self.specs[a].shape) != out and tuple(self.specs[b].shape) == out:
            a, b = b, a
        return self._ufunc(k, node, ufunc, [f"v{a}", f"v{b}"])

    def _minmax(self, k, node, ufunc):
        args = [f"v{s}" for s in node.inputs]
        for i in (0, 1):
            full = self._full_scalar(node, i)
            if full is not None:
                args[i] = full
        return self._ufunc(k, node, ufunc, args)

    def _emit_ufunc_with(self, k, node, ufunc, constant, *flags):
        """np.<ufunc>(x, constant); with "fill", against a preallocated array of the
        constant (NumPy's scalar-broadcast path for maximum is ~4x slower)."""
        x = self.specs[node.inputs[0]]
        if "fill" not in flags or not x.shape or int(np.prod(x.shape)) > MAX_CONSTANT_FILL:
            return self._ufunc(k, node, ufunc, [f"v{node.inputs[0]}", constant])
        full = self.fill(float(constant), tuple(x.shape), _np_dtype(x))
        return self._ufunc(k, node, ufunc, [f"v{node.inputs[0]}", full])

    def _emit_chain(self, k, node, first, first_args, steps, *flags):
        """`first` allocates (or writes into a dying input); each step then runs in place:
        `steps` are format strings with {t} for the buffer."""
        o = node.outputs[0]
        args = [a.format(*[f"v{s}" for s in node.inputs]) for a in first_args]
        self._ufunc(k, node, first, args)
        if len(self.specs[o].shape) == 0:  # 0-d results are NumPy scalars: no buffers
            for step in steps:
                self.lines.append(f"v{o} = " + step.format(t=f"v{o}", out=""))
            return
        for step in steps:
            self.lines.append(step.format(t=f"v{o}", out=f", out=v{o}"))

    def _emit_expr(self, k, node, template):
        self._assign(node, template.format(*[f"v{s}" for s in node.inputs]))

    def _emit_alias(self, k, node):
        self.lines.append(f"v{node.outputs[0]} = v{node.inputs[0]}")
        self.escaped.add(node.inputs[0])

    def _emit_cast(self, k, node):
        npdt = self.name_const(np.dtype(node.attrs["dtype"].as_numpy_dtype), "dtype")
        self._assign(node, f"v{node.inputs[0]}.astype({npdt})")

    def _emit_reduce(self, k, node, ufunc, *flags):
        x = self.specs[node.inputs[0]]
        axis, keepdims = tuple(node.attrs["axis"]), bool(node.attrs["keepdims"])
        dt = "None"
        if "typed" in flags:
            dt = self.name_const(_np_dtype(x), "dtype")
        expr = f"np.{ufunc}.reduce(v{node.inputs[0]}, {axis!r}, {dt}, None, {keepdims})"
        o = node.outputs[0]
        self._assign(node, expr)
        if "mean" in flags:  # exactly as np.mean: divide by np.intp(count), unsafe cast
            n = self.name_const(np.intp(int(np.prod([x.shape[a] for a in axis]))), "count")
            if len(self.specs[o].shape) > 0:
                self.lines.append(f"np.true_divide(v{o}, {n}, out=v{o}, casting='unsafe')")
            else:
                self.lines.append(f"v{o} = v{o}.dtype.type(v{o} / {n})")
        if len(self.specs[o].shape) == 0:
            self.owned.discard(o)

    def _emit_matmul(self, k, node):
        a, b = (self.specs[s] for s in node.inputs)
        if node.attrs.get("transpose_a") or node.attrs.get("transpose_b") or \
                len(a.shape) < 2 or len(b.shape) < 2 or a.shape[-1] != b.shape[-2]:
            return False
        self._assign(node, f"np.matmul(v{node.inputs[0]}, v{node.inputs[1]})")
        return None

    def _emit_reshape(self, k, node):
        x, out = self.specs[node.inputs[0]], self.specs[node.outputs[0]]
        if int(np.prod(x.shape)) != int(np.prod(out.shape)):
            return False  # let the forward raise its error
        self._assign(node, f"v{node.inputs[0]}.reshape({tuple(out.shape)!r})", owned=False)
        self.escaped.add(node.inputs[0])
        return None


# -- numexpr kernels ---------------------------------------------------------------------------
MAX_NE_EXPR = 4000


def numexpr_kernel(graph, specs, members):
    """(callable, input slots, expression) running the kernel as one numexpr pass, or None
    when numexpr cannot express it exactly (dtypes other than float32/float64, several
    reductions or one that is not last, several reduced axes)."""
    if numexpr is None:
        return None
    nodes = [graph.nodes[k] for k in members]
    inputs, expr_of = [], {}

    def ref(s):
        if s in expr_of:
            return expr_of[s]
        spec = specs.get(s)
        if spec is None or _np_dtype(spec) not in (np.float32, np.float64, np.bool_):
            raise _NotExpressible
        inputs.append(s)
        expr_of[s] = f"a{len(inputs) - 1}"
        return expr_of[s]

    try:
        for i, node in enumerate(nodes):
            name = node.op.name
            out = specs[node.outputs[0]]
            if _np_dtype(out) not in (np.float32, np.float64, np.bool_):
                return None
            args = [ref(s) for s in node.inputs]
            form = getattr(node.op, "numexpr", None)
            if form is None:
                return None
            if not _is_reduce(node.op):
                e = form.format(*args)
            elif i == len(nodes) - 1 and \
                    len(node.attrs["axis"]) in (1, len(specs[node.inputs[0]].shape)):
                e = _ne_reduce(node, specs, args[0])
            else:
                return None
            expr_of[node.outputs[0]] = e
    except _NotExpressible:
        return None
    expr = expr_of[nodes[-1].outputs[0]]
    if len(expr) > MAX_NE_EXPR or not inputs:
        return None
    signature = [(f"a{i}", float if _np_dtype(specs[s]) == np.float32 else
                  (bool if _np_dtype(specs[s]) == np.bool_ else np.float64))
                 for i, s in enumerate(inputs)]
    try:
        compiled = numexpr.NumExpr(expr, signature=signature)
    except Exception:  # noqa: BLE001 - an expression numexpr rejects runs in NumPy
        return None
    out = specs[nodes[-1].outputs[0]]
    shape = tuple(out.shape)

    def run(*arrays):
        r = compiled(*arrays)
        return r.reshape(shape) if r.shape != shape else r
    with np.errstate(all="ignore"):
        trial = run(*[_sample(graph, specs, s) for s in inputs])
    if trial.dtype != _np_dtype(out) or trial.shape != shape:  # numexpr's own type rules
        return None
    return run, inputs, expr


class _NotExpressible(Exception):
    pass


def _ne_reduce(node, specs, arg):
    x = specs[node.inputs[0]]
    fn = node.op.numexpr
    if len(node.attrs["axis"]) == len(x.shape) and len(x.shape) != 1:
        return f"{fn}({arg})"
    return f"{fn}({arg}, axis={node.attrs['axis'][0]})"


def _sample(graph, specs, s):
    if s in graph.constants:
        return np.asarray(graph.constants[s])
    dt = _np_dtype(specs[s])
    if dt.kind == "b":
        return np.ones(specs[s].shape, dt)
    return np.random.default_rng(0).uniform(0.5, 1.5, specs[s].shape).astype(dt)


def _numpy_kernel(graph, specs, members, inputs):
    """The kernel alone as a NumPy function of its inputs (to time against numexpr)."""
    g = Graph()
    g.placeholders = [s for s in inputs if s not in graph.constants]
    g.specs = {s: (specs[s].shape, specs[s].dtype) for s in g.placeholders}
    g.constants = {s: graph.constants[s] for s in inputs if s in graph.constants}
    g.nodes = [graph.nodes[k] for k in members]
    g.outputs = [g.nodes[-1].outputs[0]]
    g.n_slots = graph.n_slots
    run = generate(g, specs, {}, fallback=None)
    keep = [i for i, s in enumerate(inputs) if s not in graph.constants]
    return lambda *arrays: run([arrays[i] for i in keep])


def _seconds(fn, args):
    """Best per-call time over a few short rounds (about 10 ms in all)."""
    fn(*args)
    start = timeit.default_timer()
    fn(*args)
    once = max(timeit.default_timer() - start, 1e-7)
    number = max(1, min(1000, int(0.003 / once)))
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=3)) / number


def choose_numexpr(graph, specs, groups, backend):
    """{root index: (callable, inputs, description)} for the kernels that run in numexpr:
    all it can express when forced, else those it runs faster than NumPy (timed here once,
    on the kernel's real shapes)."""
    chosen = {}
    if backend == "numpy" or numexpr is None:
        return chosen
    for members in groups:
        made = numexpr_kernel(graph, specs, members)
        if made is None:
            continue
        run, inputs, expr = made
        if backend == "auto":
            sizes = [int(np.prod(specs[graph.nodes[k].inputs[0]].shape)) for k in members]
            if max(sizes) < NUMEXPR_MIN_SIZE:
                continue
            arrays = [_sample(graph, specs, s) for s in inputs]
            with np.errstate(all="ignore"):
                if _seconds(run, arrays) >= _seconds(
                        _numpy_kernel(graph, specs, members, inputs), arrays):
                    continue
        chosen[members[-1]] = (run, inputs, f"numexpr: {expr}")
    return chosen


# -- the whole graph ---------------------------------------------------------------------------
def generate(graph, specs, replace, fallback=None):
    """The runner: `replace` maps a kernel's root node index to (callable or inline code
    template, input slots, description, nodes it absorbs) for kernels made elsewhere
    (numexpr, dot products); the absorbed nodes are skipped. With `fallback`, input shapes
    and dtypes are checked on entry and any mismatch goes to `fallback(args)`."""
    env = {"np": np}
    skip = {m for r in replace.values() for m in r[3]}
    g = graph.copy()
    g.nodes = [Node(_KernelOp("Kernel", replace[k][0]), replace[k][1], {}, node.outputs,
                    node.where) if k in replace else node
               for k, node in enumerate(graph.nodes) if k not in skip]
    em = _Emitter(g, specs, env)
    lines = ["def run(args):"]
    for i, s in enumerate(g.placeholders):
        lines.append(f"    v{s} = args[{i}]")
    if fallback is not None and g.placeholders:
        env["fallback"] = fallback
        checks = []
        for s in g.placeholders:
            shape, dtype = g.specs[s]
            env[f"d{s}"] = np.dtype(dtype.as_numpy_dtype)
            checks.append(f"v{s}.shape != {tuple(shape)!r} or v{s}.dtype != d{s}")
        lines.append(f"    if {' or '.join(checks)}:")
        lines.append("        return fallback(args)")
    for s, value in g.constants.items():
        env[f"c{s}"] = value
        lines.append(f"    v{s} = c{s}")
    deaths = {}
    for s, k in em.last.items():
        deaths.setdefault(k, []).append(s)
    placeholders = set(g.placeholders)
    for k, node in enumerate(g.nodes):
        em.lines = []
        if isinstance(node.op, _KernelOp) and isinstance(node.op.forward, str):
            em.lines.append(f"v{node.outputs[0]} = " +
                            node.op.forward.format(*[f"v{s}" for s in node.inputs]))
        elif isinstance(node.op, _KernelOp):
            env[f"f{k}"] = node.op.forward
            em.lines.append(f"v{node.outputs[0]} = f{k}("
                            f"{', '.join(f'v{s}' for s in node.inputs)})")
        else:
            em.emit(k, node)
        lines.extend("    " + line for line in em.lines)
        dead = [s for s in deaths.get(k, []) if s not in placeholders]
        if dead:
            lines.append(f"    del {', '.join(f'v{s}' for s in dead)}")
    lines.append(f"    return [{', '.join(f'v{s}' for s in g.output_slots())}]")
    source = _bind_numpy_names("\n".join(lines), env)
    exec(compile(source, f"<tensorlite jit {graph.name}>", "exec"), env)  # noqa: S102
    run = env["run"]
    run.source = source
    return run


def _bind_numpy_names(source, env):
    """`np.exp(` -> `np_exp(` with np_exp a global of the runner: one name lookup per call
    instead of two."""
    def bind(m):
        name = m.group(1)
        obj = np
        for part in name.split("."):
            obj = getattr(obj, part)
        alias = "np_" + name.replace(".", "_")
        env[alias] = obj
        return alias + "("
    return re.sub(r"\bnp\.([a-z_]+(?:\.reduce)?)\(", bind, source)


def describe(graph, groups, replace):
    lines = []
    for members in groups:
        root = members[-1]
        names = "+".join(graph.nodes[k].op.name for k in members)
        how = replace[root][2] if root in replace else "numpy, in place"
        lines.append(f"{names} -> %{graph.nodes[root].outputs[0]} ({how})")
    return lines


# -- sums of products as dot products -----------------------------------------------------------
REASSOCIATE_SUMS = True  # as XLA may: sum(x + y*z) -> sum(x) + dot(y, z), allclose not bitwise
DOT_MIN_SIZE = 4096


def dot_sums(graph, specs, groups):
    """{root: (template, inputs, description, absorbed nodes)} for full reductions of sums
    of elementwise products, which then read each input once and allocate nothing:
    `reduce_sum(x + y * z)` (the XLA example of the notes "Structure of Deep
    Learning Frameworks") becomes `sum(x) + dot(y, z)`."""
    out = {}
    if not REASSOCIATE_SUMS:
        return out
    nodes = graph.nodes
    producer = {o: k for k, n in enumerate(nodes) for o in n.outputs}
    uses = {}
    for n in nodes:
        for s in n.inputs:
            uses[s] = uses.get(s, 0) + 1
    for s in graph.output_slots():
        uses[s] = uses.get(s, 0) + 2
    for members in groups:
        root = nodes[members[-1]]
        x = specs.get(root.inputs[0]) if root.op is SUM else None
        if x is None or _np_dtype(x) not in (np.float32, np.float64) or \
                len(root.attrs["axis"]) != len(x.shape) or int(np.prod(x.shape)) < DOT_MIN_SIZE:
            continue
        absorbed, terms = [], []
        _terms(root.inputs[0], 1, tuple(x.shape), set(members), nodes, producer, uses, specs,
               absorbed, terms)
        if not any(t[0] == "dot" for t in terms):
            continue
        inputs, parts = [], []
        for kind, a, b, sign in terms:
            ia = len(inputs)
            inputs.append(a)
            if kind == "dot":
                inputs.append(b)
                part = f"np.dot({{{ia}}}.ravel(), {{{ia + 1}}}.ravel())"
            else:
                part = f"np.add.reduce({{{ia}}}, None)"
            parts.append(("- " if sign < 0 else "+ " if parts else "") + part)
        expr = " ".join(parts)
        if root.attrs["keepdims"]:
            expr = f"np.reshape({expr}, {(1,) * len(x.shape)!r})"
        desc = "numpy, " + " ".join(("dot" if t[0] == "dot" else "sum") + ("" if t[3] > 0
                                    else "(-)") for t in terms)
        out[members[-1]] = (expr, inputs, desc, absorbed)
    return out


def _terms(slot, sign, shape, members, nodes, producer, uses, specs, absorbed, terms):
    """Splits the value in `slot` into signed terms ("sum", x) and ("dot", y, z) over
    nodes of the kernel used nowhere else and broadcasting nothing."""
    k = producer.get(slot)
    node = nodes[k] if k is not None else None
    if node is not None and k in members and uses.get(slot) == 1 and \
            all(specs.get(i) is not None and tuple(specs[i].shape) == shape
                for i in node.inputs):
        if node.op is ADD or node.op is SUB:
            absorbed.append(k)
            _terms(node.inputs[0], sign, shape, members, nodes, producer, uses, specs,
                   absorbed, terms)
            _terms(node.inputs[1], -sign if node.op is SUB else sign, shape, members, nodes,
                   producer, uses, specs, absorbed, terms)
            return
        if node.op is MUL:
            absorbed.append(k)
            terms.append(("dot", node.inputs[0], node.inputs[1], sign))
            return
    terms.append(("sum", slot, None, sign))


def compile_specialised(graph, backend, fallback=None):
    """One runner for the graph's placeholder specs (a guard on entry when `fallback`)."""
    specs = infer_specs(graph)
    groups = kernels(graph, specs)
    replace = {} if backend == "numexpr" else dot_sums(graph, specs, groups)
    chosen = choose_numexpr(graph, specs, [g for g in groups if g[-1] not in replace],
                            backend)
    for members in groups:
        root = members[-1]
        if root in chosen:
            fn, ins, desc = chosen[root]
            replace[root] = (fn, ins, desc, members[:-1])
    run = generate(graph, specs, replace, fallback=fallback)
    run.kernels = describe(graph, groups, replace)
    run.specs = specs
    return run


class JitFunction:
    """Specialisations of one graph by input shapes and dtypes."""

    def __init__(self, graph, backend):
        self.graph = unfuse(graph)
        self.backend = backend
        self.variants = {}
        self.generic = None
        self.main = compile_specialised(self.graph, backend, fallback=self.fallback)

    def fallback(self, args):
        key = tuple((np.shape(a), np.asarray(a).dtype.str) for a in args)
        run = self.variants.get(key)
        if run is None:
            if len(self.variants) >= MAX_SPECIALISATIONS:
                if self.generic is None:
                    self.generic = executor.compile_graph(self.graph)
                return self.generic(args)
            g = self.graph.copy()
            g.specs = {s: (tuple(np.shape(a)), dtypes.as_dtype(np.asarray(a).dtype))
                       for s, a in zip(g.placeholders, args)}
            run = self.variants[key] = compile_specialised(g, self.backend)
        return run(args)


def compile_jit(graph, backend=None):
    """A runner `run(args) -> list of output arrays` (executor.compile_graph's contract) with
    fused kernels; `run.source`, `run.kernels` (one line per kernel), `run.jit` (the
    JitFunction holding the other specialisations)."""
    jit = JitFunction(graph, backend or BACKEND[0])
    run = jit.main
    run.jit = jit
    return run

