"""`tf.function`: trace once per input signature, then run the graph.

Concrete functions are cached by the arguments' signature, with TensorFlow's rules: a
tensor contributes its shape and dtype, a Python value its value, any other object its
identity. With `input_signature`, arguments must match the declared TensorSpecs; its None
dimensions (and, with `reduce_retracing=True`, the first dimension of every tensor) make
the function shape-polymorphic: one graph serves every size, and inside it those
dimensions are None, as in TensorFlow. A second, silent trace at other sizes checks that
the graph does not depend on them (code that turns a size into a constant, e.g. a gradient
rule's broadcast); if it does, each shape gets its own graph (internally, not counted as a
retrace) and `shape_specialised` says which op. Every trace says which argument changed
and how; too many traces warn as TensorFlow does. `jit_compile=True` (or `experimental_compile=True`) compiles the
graph into fused kernels (see compiler.py).

Example:
    >>> @tf.function
    ... def f(x):
    ...     return tf.math.log(2 * tf.exp(tf.nn.relu(x + 1)))
    >>> f(tf.zeros([2])).numpy()
    array([1.6931472, 1.6931472], dtype=float32)
"""
import contextlib
import functools
import inspect
import io
import re
import warnings

import numpy as np

from tensorlite.framework import errors, nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.graph import executor
from tensorlite.graph.ir import is_callback
from tensorlite.graph.signatures import StaticSpecs, signature_text
from tensorlite.graph.size_check import first_difference, resized
from tensorlite.graph.tracing import fits_shape, trace

_RUN_EAGERLY = [False]
RETRACE_WARNING_AFTER = 5
# Callables f(concrete_function) told of every call of a traced function (the call that
# traced it included); tf.summary.trace_on collects graphs this way. Empty means no cost.
CALL_LISTENERS = []
_JIT_DEFAULT = [False]


def run_functions_eagerly(run_eagerly):
    """`tf.config.run_functions_eagerly`: call the Python functions directly (debugging)."""
    _RUN_EAGERLY[0] = bool(run_eagerly)


def functions_run_eagerly():
    return _RUN_EAGERLY[0]


def _describe_leaf(x):
    if isinstance(x, Tensor):
        return f"tensor {x.dtype.name}{list(x.shape.as_list())}"
    if getattr(x, "_is_variable", False):
        return f"variable {x.name}"
    return f"Python value {x!r:.40}"


def _relaxed_shape(shape, declared):
    """A tensor's static shape in a polymorphic trace: the declared TensorSpec's (None
    dims), or with reduce_retracing (declared None) its own with the first dim None."""
    if declared is not None:
        return declared
    return (None,) + tuple(shape[1:]) if len(shape) else ()


_VARIABLE_ON_NON_FIRST_CALL = (
    "tf.function only supports singleton tf.Variables created on the first call. Make sure "
    "the tf.Variable is only created once or created outside tf.function. See "
    "https://www.tensorflow.org/guide/function#creating_tfvariables for more information.")


def _arrays_as_tensors(args, kwargs, leaves):
    leaves = [convert_to_tensor(x) if type(x) is np.ndarray else x for x in leaves]
    args, kwargs = nest.pack_like([list(args), kwargs], leaves, expand_composites=True)
    return tuple(args), kwargs, leaves


def _leaf_key(x):
    if isinstance(x, Tensor):
        return ("T", tuple(x._value.shape), x._dtype.name)
    if isinstance(x, np.ndarray):
        return ("T", x.shape, str(x.dtype))
    if getattr(x, "_is_variable", False):
        return ("V", id(x))
    tracing_type = getattr(type(x), "__tf_tracing_type__", None)
    if tracing_type is not None:  # tf.types.experimental.TraceType: its equality decides
        return ("TT", tracing_type(x, None))
    try:
        hash(x)
        return ("P", type(x).__name__, x)
    except TypeError:
        return ("O", id(x))


class AtomicFunction:
    """`ConcreteFunction.inference_fn`: the one graph a concrete function runs, without
    gradient support (a tape does not see through it; use the ConcreteFunction for that).

    Example:
        >>> f = tf.function(lambda x: x * 2).get_concrete_function(tf.constant(1.0))
        >>> f.inference_fn(tf.constant(3.0))
        <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
    """

    def __init__(self, concrete):
        self._concrete = concrete
        self.name = concrete.name
        self.graph = concrete.graph

    @property
    def function_type(self):
        return self._concrete.function_type

    def __call__(self, *args, **kwargs):
        from tensorlite.framework.dispatch import observers_paused  # noqa: PLC0415
        from tensorlite.framework.variables import READ_HOOKS  # noqa: PLC0415
        tensors = self._concrete._checked_inputs(args, kwargs)
        with observers_paused():
            saved, READ_HOOKS[:] = READ_HOOKS[:], []
            try:
                result = self._concrete._call_flat(tensors)
            finally:
                READ_HOOKS[:] = saved
        return result

    def call_with_captures(self, args, kwargs, captures):
        """A call whose captured tensors are the graph's constants already: `captures`
        must be empty or those same values."""
        if captures:
            raise NotImplementedError("AtomicFunction.call_with_captures with new capture "
                                      "values: tensorlite's graphs hold their captures as "
                                      "constants; call the function without them")
        return self(*args, **(kwargs or {}))

    def __repr__(self):
        return f"<AtomicFunction> {self.name}{self.function_type}"


class ConcreteFunction:
    """One traced graph and its compiled runner."""

    def __init__(self, graph, function_name, jit):
        self.graph = graph
        self.name = function_name
        self._jit = jit
        self._run = None
        self.structured_outputs = graph.outputs

    def _runner(self):
        if self._run is None:
            from tensorlite.graph.passes import optimize  # noqa: PLC0415
            self.optimized_graph = optimize(self.graph)
            if self._jit:
                from tensorlite.graph.compiler import compile_jit  # noqa: PLC0415
                self._run = compile_jit(self.optimized_graph)
            else:
                self._run = executor.compile_graph(self.optimized_graph)
        return self._run

    def __call__(self, *args, **kwargs):
        """Runs the graph; each argument must have the dtype it was traced with
        (InvalidArgumentError otherwise, as TensorFlow's concrete functions). Tensors may
        also be passed by their argument names (`concrete(a=x)`)."""
        return self._call_flat(self._checked_inputs(args, kwargs))

    def _checked_inputs(self, args, kwargs):
        """The call's tensors in placeholder order, checked against the traced dtypes and
        static shapes."""
        tensors = [a if isinstance(a, Tensor) else convert_to_tensor(a)
                   for a in nest.flatten(list(args), expand_composites=True)
                   if isinstance(a, (Tensor, int, float, np.ndarray, np.generic))]
        slots = self.graph.placeholders
        if kwargs:
            tensors += self._by_name(slots[len(tensors):], kwargs)
        if len(tensors) != len(slots):
            raise TypeError(f"{self.name}: this concrete function takes {len(slots)} tensor "
                            f"arguments, got {len(tensors)}")
        for i, (t, s) in enumerate(zip(tensors, slots)):
            shape, dtype = self.graph.specs[s]
            if t._dtype is not dtype:
                raise errors.InvalidArgumentError(
                    None, None, f"cannot compute {self.name} as input #{i}(zero-based) was "
                    f"expected to be a {dtype.name} tensor but is a {t.dtype.name} tensor; "
                    f"pass a {dtype.name} tensor (tf.cast) or call the tf.function itself, "
                    f"which traces a new graph for new dtypes")
            static = (getattr(self.graph, "symbolic_shapes", None) or {}).get(s)
            if static is not None and not fits_shape(static, t._value.shape):
                raise TypeError(
                    f"{self.name}: input #{i} has shape {list(t._value.shape)}, which is "
                    f"incompatible with this concrete function's "
                    f"{list(TensorShape(list(static)).as_list())} (None: any size); call the "
                    f"tf.function itself, which traces a graph for other shapes")
        return tensors

    def _by_name(self, slots, kwargs):
        """The tensors for placeholders `slots` (those positional arguments left) from
        keyword arguments named as the traced function's arguments."""
        names = [self.graph.input_names.get(s) for s in slots]
        unknown = sorted(set(kwargs) - set(names))
        if unknown or None in names:
            raise TypeError(f"{self.name}: unexpected keyword argument(s) "
                            f"{unknown or list(kwargs)}; this concrete function's remaining "
                            f"arguments are "
                            f"{[n for n in names if n is not None] or 'positional only'}")
        missing = [n for n in names if n not in kwargs]
        if missing:
            raise TypeError(f"{self.name}: missing required argument(s) {missing}")
        return [v if isinstance(v, Tensor) else convert_to_tensor(v)
                for v in (kwargs[n] for n in names)]

    def _call_flat(self, tensors):
        if CALL_LISTENERS:
            for listener in CALL_LISTENERS:
                listener(self)
        if executor.observed():  # a tape (or the profiler) must see the ops
            return executor.interpret(self.graph, tensors)
        run = self._runner()
        try:
            arrays = run([t._value for t in tensors])
        except errors.OpError as e:
            found = self._node_at(run, e)
            if found is not None and is_callback(found[0].op):  # say which call
                e.message = f"{e.message}\n  in tf.function {self.name!r}, node " \
                    f"{found[0].op.name} created at {found[0].where}"
                e.args = (e.message,)
            raise
        except Exception as e:  # noqa: BLE001 - name the failing node
            found = self._node_at(run, e)
            if found is None:
                return self._locate_error(tensors)
            node, frame = found
            shapes = [list(np.shape(frame.f_locals.get(f"v{s}"))) for s in node.inputs]
            raise errors.InvalidArgumentError(
                None, None, f"{node.op.name} failed in tf.function {self.name!r} on the op "
                f"created at {node.where}: {e} (inputs {shapes})") from e
        return executor.pack_outputs(self.optimized_graph, arrays)

    def _node_at(self, run, exc):
        """(node, runner frame) of the node whose call raised `exc`, read from the
        traceback's line in the compiled runner (nothing runs again: Python callbacks are
        not repeated); None when the traceback does not tell (the jit's inlined kernels)."""
        filename = f"<tensorlite graph {self.optimized_graph.name}>"
        tb, frame, line = exc.__traceback__, None, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                frame, line = tb.tb_frame, tb.tb_lineno
            tb = tb.tb_next
        source = getattr(run, "source", None)
        m = frame and source and re.search(r"\bf(\d+)\(", source.splitlines()[line - 1])
        if not m:
            return None
        return self.optimized_graph.nodes[int(m.group(1))], frame

    def _locate_error(self, tensors):
        values = dict(zip(self.graph.placeholders, [t._value for t in tensors]))
        values.update(self.graph.constants)
        from tensorlite.graph.ir import ASSIGN_VARIABLE  # noqa: PLC0415
        from tensorlite.ops.script_ops import effects_off  # noqa: PLC0415
        for node in self.graph.nodes:
            if node.op is ASSIGN_VARIABLE:  # already applied by the failed run: no replay
                values[node.outputs[0]] = values[node.inputs[0]]
                continue
            try:
                with effects_off():  # a replay: tf.print and tf.summary acted already
                    out = node.op.forward(*[values[s] for s in node.inputs], **node.attrs)
            except Exception as e:  # noqa: BLE001
                raise errors.InvalidArgumentError(
                    None, None, f"{node.op.name} failed in tf.function {self.name!r} on the "
                    f"op created at {node.where}: {e} (inputs "
                    f"{[list(np.shape(values[s])) for s in node.inputs]})") from e
            outs = out if node.op.multi_output else (out,)
            values.update(zip(node.outputs, outs))
        raise errors.InternalError(None, None, f"tf.function {self.name!r} failed but the "
                                   f"op-by-op re-run did not")

    @property
    def inputs(self):
        return list(self.graph.placeholders)

    @property
    def inference_fn(self):
        """TensorFlow's AtomicFunction of this concrete function: the same graph, called
        with the same arguments, but never differentiated."""
        return AtomicFunction(self)

    def pretty_printed_signature(self, verbose=True):
        """This function's signature as `Function.pretty_printed_concrete_signatures`
        prints it."""
        return signature_text(self.name, None, self)

    def __str__(self):
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature().splitlines()[0]} at " \
               f"{hex(id(self))}>"

    @property
    def function_type(self):
        """TensorFlow's FunctionType, as it prints: each argument with its TensorSpec (or
        its traced Python value), then the outputs' specs."""
        from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
        args, kwargs = self.structured_input_signature
        params = [p[0] for p in getattr(self, "parameters", None) or []]
        names = [params[i] if i < len(params) else getattr(a, "name", None) or f"arg{i}"
                 for i, a in enumerate(args)]
        parts = [f"{n}: {a!r}" if isinstance(a, TensorSpec) else f"{n}: Literal[{a!r}]"
                 for n, a in zip(names, args)]
        parts += [f"{k}: {v!r}" if isinstance(v, TensorSpec) else f"{k}: Literal[{v!r}]"
                  for k, v in kwargs.items()]
        outputs = nest.map_structure(lambda sh, dt: TensorSpec(sh, dt), self.output_shapes,
                                     self.output_dtypes)
        return _FunctionType(f"({', '.join(parts)}) -> {outputs!r}")

    @property
    def output_dtypes(self):
        """The outputs' dtypes, in the outputs' structure (None for a Python value)."""
        specs = StaticSpecs(self.graph)
        return nest.map_structure(lambda s: specs.dtype(s), self.graph.outputs,
                                  expand_composites=True)

    @property
    def output_shapes(self):
        """The outputs' static shapes (None where a size varies), in their structure."""
        specs = StaticSpecs(self.graph)
        return nest.map_structure(lambda s: specs.shape(s), self.graph.outputs,
                                  expand_composites=True)

    @property
    def structured_input_signature(self):
        """(args, kwargs) as TensorFlow gives them: a TensorSpec (static shape, dtype,
        argument name) per tensor argument, Python arguments as their values.

        Example:
            >>> cf = tf.function(lambda x: x).get_concrete_function(tf.TensorSpec([None]))
            >>> cf.structured_input_signature
            ((TensorSpec(shape=(None,), dtype=tf.float32, name='x'),), {})
        """
        specs = StaticSpecs(self.graph)
        slots = iter(self.graph.placeholders)
        args = []
        for name, labels, value in getattr(self, "parameters", None) or []:
            if labels is None:
                args.append(value)
                continue
            leaves = [TensorSpec(specs.shape(s), self.graph.specs[s][1],
                                 name if len(labels) == 1 else label)
                      for label, s in zip(labels, slots)]
            args.append(leaves[0] if len(leaves) == 1 else leaves)
        n = getattr(self, "n_positional", len(args))
        names = [p[0] for p in getattr(self, "parameters", None) or []]
        return tuple(args[:n]), dict(zip(names[n:], args[n:]))


class Function:
    """What `tf.function` returns: a callable that traces and caches graphs."""

    def __init__(self, python_function, input_signature=None, autograph=True,
                 jit_compile=None, reduce_retracing=False, experimental_compile=None,
                 name=None, experimental_relax_shapes=None):
        if not callable(python_function):
            raise TypeError(f"tf.function expects a callable, got {type(python_function)}")
        self._fn = python_function
        self._name = name or getattr(python_function, "__name__", type(python_function)
                                     .__name__)
        self._signature = None if input_signature is None else list(input_signature)
        self._jit = bool(jit_compile or experimental_compile)
        self._autograph = bool(autograph)
        self._converted = None  # the AutoGraph-converted function, made at the first trace
        self._reduce_retracing = reduce_retracing or bool(experimental_relax_shapes)
        # Keras's fit step turns it off: it traces one graph per batch shape by design
        self.warns_on_retracing = True
        # One graph for all sizes (None dimensions) unless the function reads a static
        # shape it computed (then: one graph per shape, and `shape_specialised` says where).
        self._declared = _declared_shapes(self._signature)
        self._polymorphic = not self._jit and (self._reduce_retracing or any(
            None in d for d in self._declared or ()))
        self.shape_specialised = None  # why each shape gets its own graph, if it does
        self._made_variables = False
        self._cache = {}
        self._keys = []  # signature keys in trace order, for retrace messages
        self._calls = 0
        self._traces = 0
        self.retrace_log = []  # why each retrace happened
        functools.update_wrapper(self, python_function, updated=())

    # -- methods: one Function per instance ---------------------------------------------
    def __get__(self, instance, owner):
        if instance is None:
            return self
        bound = instance.__dict__.get(("_tf_function", id(self))) if hasattr(
            instance, "__dict__") else None
        if bound is None:
            bound = Function(functools.partial(self._fn, instance), self._signature,
                             autograph=self._autograph, jit_compile=self._jit,
                             reduce_retracing=self._reduce_retracing,
                             name=self._name)
            try:
                instance.__dict__[("_tf_function", id(self))] = bound
            except (AttributeError, TypeError):
                pass
        return bound

    @property
    def python_function(self):
        return self._fn

    def experimental_get_tracing_count(self):
        return self._traces

    # -- calling -------------------------------------------------------------------------
    def _bind(self, args, kwargs):
        if self._signature is not None:
            if kwargs:
                raise TypeError(f"{self._name}: with an input_signature, pass arguments "
                                f"positionally")
            if len(args) != len(self._signature):
                raise TypeError(f"{self._name}() takes {len(self._signature)} positional "
                                f"arguments per its input_signature but {len(args)} were "
                                f"given")
            out = []
            for i, (a, spec) in enumerate(zip(args, self._signature)):
                if type(spec).__name__ == "RaggedTensorSpec":  # a composite: kept whole
                    if not spec.is_compatible_with(a):
                        raise TypeError(
                            f"{self._name}: argument {i} ({_arg_name(self._fn, i)}) is "
                            f"{type(a).__name__} {a!r}, which is incompatible with the "
                            f"input_signature entry {spec}")
                    out.append(a)
                    continue
                t = convert_to_tensor(a, dtype_hint=getattr(spec, "dtype", None))
                if isinstance(spec, TensorSpec) and not spec.is_compatible_with(t):
                    raise TypeError(
                        f"{self._name}: argument {i} ({_arg_name(self._fn, i)}) is "
                        f"{_describe_leaf(t)}, which is incompatible with the "
                        f"input_signature entry {spec}; pass a {spec.dtype.name} tensor of "
                        f"shape {spec.shape}")
                out.append(t)
            return tuple(out), {}
        return args, kwargs

    def __call__(self, *args, **kwargs):
        if _RUN_EAGERLY[0]:
            return self._fn(*args, **kwargs)
        args, kwargs = self._bind(args, kwargs)
        self._calls += 1
        leaves = nest.flatten([list(args), kwargs], expand_composites=True)
        for x in leaves:
            if type(x) is np.ndarray:  # NumPy arrays are tensor arguments, as in TF: a
                args, kwargs, leaves = _arrays_as_tensors(args, kwargs, leaves)  # graph
                break                  # input, never a constant baked into the trace
        key = self._key(leaves)
        concrete = self._cache.get(key)
        if concrete is None and self._cache:
            concrete = self._compatible(leaves)
            if concrete is not None:  # later calls of this shape: one lookup
                self._cache[key] = concrete
        if concrete is not None:
            return concrete._call_flat([x for x in leaves if isinstance(x, Tensor)])
        declared = self._generalised(leaves) if self._reduce_retracing else None
        if declared is not None:
            key = self._key(leaves, declared)
        return self._trace_and_call(key, args, kwargs, declared=declared)

    def _generalised(self, leaves):
        """reduce_retracing, as TensorFlow: a call whose tensors differ from a traced
        polymorphic signature only in some sizes traces one graph with those dims None
        too (so varying sequence lengths stop retracing); None when there is none."""
        shapes = self._static_shapes(leaves)
        if shapes is None:
            return None
        mine = self._key(leaves)
        for key in reversed(self._keys):
            if len(key) != len(mine) or any(
                    (a[0] == "T*") != (b[0] == "T*") or (a[0] != "T*" and a != b) or
                    (a[0] == "T*" and (a[2] != b[2] or len(a[1]) != len(b[1])))
                    for a, b in zip(key, mine)):
                continue
            old = iter([k[1] for k in key if k[0] == "T*"])
            return [tuple(d if d == e else None for d, e in zip(shape, next(old)))
                    for shape in shapes]
        return None

    def _key(self, leaves, declared=None):
        if declared is None and not self._polymorphic:  # the hot path of every call
            return tuple(_leaf_key(x) for x in leaves)
        shapes = self._static_shapes(leaves, declared)
        if shapes is None:
            return tuple(_leaf_key(x) for x in leaves)
        shapes = iter(shapes)
        return tuple(("T*", next(shapes), x._dtype.name) if isinstance(x, Tensor)
                     else _leaf_key(x) for x in leaves)

    def _static_shapes(self, leaves, declared=None):
        """The tensor leaves' static shapes for a polymorphic trace (None dims may vary):
        `declared` (get_concrete_function's TensorSpecs), else the input_signature's, else
        with reduce_retracing the first dim relaxed. None: one graph per exact shape."""
        if self._jit or self.shape_specialised is not None:
            return None
        tensors = [x for x in leaves if isinstance(x, Tensor)]
        n = len(tensors)
        declared = declared if declared is not None and len(declared) == n else [None] * n
        own = self._declared if self._declared is not None and len(self._declared) == n \
            else [None] * n
        out = []
        for t, d, o in zip(tensors, declared, own):
            shape = tuple(t._value.shape)
            d = d if d is not None else o if o is not None else \
                _relaxed_shape(shape, None) if self._reduce_retracing else shape
            out.append(tuple(d))
        return out if any(None in d for d in out) else None

    def _compatible(self, leaves):
        """A cached polymorphic ConcreteFunction these arguments fit (a call after
        get_concrete_function(tf.TensorSpec([None, 3])) uses it, as TF's subtyping does)."""
        for key, concrete in self._cache.items():
            if len(key) != len(leaves) or not any(k[0] == "T*" for k in key):
                continue
            if all(_fits_key(k, x) for k, x in zip(key, leaves)):
                return concrete
        return None

    def _trace_and_call(self, key, args, kwargs, call=True, declared=None):
        shape_only = self._keys and (self._signature is not None or
                                     self.shape_specialised is not None)
        if not shape_only:
            self._traces += 1
            reason = self._retrace_reason(key, args, kwargs)
            self.retrace_log.append(reason)
            if self._traces > RETRACE_WARNING_AFTER and self.warns_on_retracing:
                warnings.warn(
                    f"{self._traces} out of the last {self._calls} calls to "
                    f"{self._name} triggered tf.function retracing. Tracing is expensive "
                    f"and the excessive number of tracings could be due to (1) creating "
                    f"@tf.function repeatedly in a loop, (2) passing tensors with different "
                    f"shapes, (3) passing Python objects instead of tensors. This time: "
                    f"{reason}", stacklevel=3)
        self._keys.append(key)
        graph, result = self._trace_checking_variables(args, kwargs, call, declared)
        if graph.size_dependent is not None:
            self.shape_specialised = graph.size_dependent
            self.retrace_log.append(
                f"{self._name}: one graph per input shape, because the graph depends on the "
                f"sizes its None dimensions take: {graph.size_dependent} (use tf.shape(x) "
                f"for a size the graph needs)")
            key = self._key(nest.flatten([list(args), kwargs], expand_composites=True))
        concrete = self._cache[key] = ConcreteFunction(graph, self._name,
                                                       self._jit or _JIT_DEFAULT[0])
        concrete.parameters = self._parameters(args, kwargs)
        concrete.n_positional = len(args)
        if call and CALL_LISTENERS:
            for listener in CALL_LISTENERS:
                listener(concrete)
        # a variable returned (`return self.count.assign_add(1)`) is its value, as every
        # later call of the graph gives it and as TensorFlow returns it
        return nest.map_structure(
            lambda v: v.read_value() if getattr(v, "_is_variable", False) else v, result) \
            if call else result

    def _trace_checking_variables(self, args, kwargs, call, declared=None):
        """Traces; as in TensorFlow, only the first trace may create variables, and once it
        has, a second trace (not a call) must create none. A polymorphic trace is traced a
        second time at other sizes: `graph.size_dependent` says where the two differ."""
        from tensorlite.framework.variables import variable_creator_scope  # noqa: PLC0415
        created = []

        def creator(next_creator, **kw):
            created.append(True)
            return next_creator(**kw)
        fn = self._traced_function()
        leaves = nest.flatten([list(args), kwargs], expand_composites=True)
        shapes = self._static_shapes(leaves, declared)
        names = self._tensor_names(args, kwargs, leaves)
        vary = shapes is not None and any(None in s for s in shapes)
        with variable_creator_scope(creator):
            graph, result = trace(fn, args, kwargs, self._name, call=call, shapes=shapes,
                                  names=names)
            graph.size_dependent = None
            if created and self._made_variables:
                raise ValueError(_VARIABLE_ON_NON_FIRST_CALL)
            if created:
                self._made_variables = True
            first = len(created)
            if vary:
                graph.size_dependent = self._check_sizes(fn, graph, args, kwargs, shapes,
                                                         names)
            elif created:
                trace(fn, args, kwargs, self._name, call=False)
            if len(created) > first:
                raise ValueError(_VARIABLE_ON_NON_FIRST_CALL)
        return graph, result

    def _check_sizes(self, fn, graph, args, kwargs, shapes, names):
        """Traces again (silently, not a call) with the None dimensions one longer: every
        one of them, else only each tensor's first; returns where the graphs differ (None:
        one graph serves every size)."""
        failure = None
        for leading_only in (False, True):
            other_args, other_kwargs = resized(args, kwargs, shapes, leading_only)
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # a check the user never sees
                    other, _ = trace(fn, other_args, other_kwargs, self._name, call=False,
                                     shapes=shapes, names=names)
            except Exception as e:  # noqa: BLE001 - these sizes are not valid inputs
                failure = e
                continue
            return first_difference(graph, other)
        return f"the function fails at other sizes its None dimensions allow ({failure})"

    def _parameters(self, args, kwargs):
        """[(name, labels of its tensor leaves, or None and its Python value)] for the
        signature text: tensor arguments are listed, Python ones shown as name=value."""
        out = []
        items = [(_arg_name(self._fn, i), a) for i, a in enumerate(args)] + \
            sorted(kwargs.items())
        for name, value in items:
            leaves = nest.flatten([value], expand_composites=True)
            n = sum(isinstance(x, Tensor) for x in leaves)
            if n:
                out.append((name, [name] if n == 1 else [f"{name}[{j}]" for j in range(n)],
                            None))
            else:
                out.append((name, None, value))
        return out

    def _tensor_names(self, args, kwargs, leaves):
        labels = self._leaf_labels(args, kwargs)
        if len(labels) != len(leaves):
            return None
        return [re.sub(r"\W+", "_", label).strip("_") or "arg"
                for label, x in zip(labels, leaves) if isinstance(x, Tensor)]

    def _traced_function(self):
        """What tracing runs: the AutoGraph-converted function unless autograph=False."""
        if not self._autograph:
            return self._fn
        if self._converted is None:
            from tensorlite.graph.autograph.conversion import converted  # noqa: PLC0415
            self._converted = converted(self._fn)
        return self._converted

    @property
    def last_concrete_function(self):
        """The ConcreteFunction of the most recent trace (None before the first)."""
        return self._cache.get(self._keys[-1]) if self._keys else None

    def _retrace_reason(self, key, args, kwargs):
        if not self._keys:
            return f"first trace of {self._name}"
        prev = self._keys[-1]
        leaves = nest.flatten([list(args), kwargs], expand_composites=True)
        for i, (a, b) in enumerate(zip(prev, key)):
            if a != b:
                what = {"T": "tensor", "T*": "tensor", "V": "variable", "P": "Python value",
                        "O": "object", "TT": "tracing type"}
                if a[0] in ("T", "T*") and b[0] in ("T", "T*"):
                    change = f"shape/dtype {a[2]}{list(a[1])} -> {b[2]}{list(b[1])}"
                elif a[0] == b[0] == "P":
                    change = f"value {a[2]!r} -> {b[2]!r}"
                elif a[0] == b[0] == "TT":
                    change = f"tracing type {a[1]!r} -> {b[1]!r}"
                else:
                    change = f"{what[a[0]]} -> {what[b[0]]}"
                return (f"{self._name} retraced (trace #{self._traces}): argument "
                        f"{self._leaf_labels(args, kwargs)[i]} ({_describe_leaf(leaves[i])}) "
                        f"changed {change}")
        return (f"{self._name} retraced (trace #{self._traces}): the number of arguments "
                f"changed ({len(prev)} -> {len(key)})")

    def _leaf_labels(self, args, kwargs):
        """A name per flattened argument leaf: the parameter, with [i] inside structures."""
        labels = []
        for i, a in enumerate(args):
            n = len(nest.flatten([a], expand_composites=True))
            base = _arg_name(self._fn, i)
            labels += [base] if n == 1 else [f"{base}[{j}]" for j in range(n)]
        for k in sorted(kwargs):
            n = len(nest.flatten([kwargs[k]], expand_composites=True))
            labels += [k] if n == 1 else [f"{k}[{j}]" for j in range(n)]
        return labels

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments. TensorSpecs trace on zeros (size 1 for
        a None dimension), and their None dimensions make the function shape-polymorphic:
        it runs on any size and its outputs' static shapes have None where TF's do.

        Example:
            >>> cf = tf.function(lambda x: x * 2).get_concrete_function(
            ...     tf.TensorSpec([None, 3]))
            >>> cf.output_shapes
            TensorShape([None, 3])
        """
        def materialise(x):
            if type(x).__name__ == "RaggedTensorSpec":
                return x._trace_example()
            if isinstance(x, TensorSpec):
                from tensorlite.ops.array_ops import zeros  # noqa: PLC0415
                if x.shape.rank is None:  # any rank: traced on a scalar (see _AnyRank)
                    return zeros([], x.dtype)
                return zeros([1 if d is None else d for d in x.shape.as_list()], x.dtype)
            return x
        any_rank = any(isinstance(x, TensorSpec) and x.shape.rank is None
                       for x in nest.flatten([list(args), kwargs]))
        if not args and not kwargs and self._signature is not None:
            args = tuple(self._signature)
        declared = [shape for x in nest.flatten([list(args), kwargs])
                    for shape in _spec_shapes(x)]
        # TensorSpecs nested in structures (a dict of features) trace as TensorFlow's do
        args = tuple(nest.map_structure(materialise, a) for a in args)
        kwargs = {k: nest.map_structure(materialise, v) for k, v in kwargs.items()}
        args, kwargs = self._bind(args, kwargs)
        leaves = nest.flatten([list(args), kwargs], expand_composites=True)
        key = self._key(leaves, declared)
        if key not in self._cache:  # a trace, not a call: tf.print/tf.summary stay silent
            self._trace_and_call(key, args, kwargs, call=False, declared=declared)
        concrete = self._cache.get(self._key(leaves, declared)) or self.last_concrete_function
        return _AnyRank(self, concrete, args, kwargs) if any_rank else concrete

    def pretty_printed_concrete_signatures(self, verbose=True):
        """The traced signatures, one block each, as TensorFlow prints them:

            f(x)
              Args:
                x: float32 Tensor, shape=(2,)
              Returns:
                float32 Tensor, shape=(2,)
        """
        return "\n\n".join(signature_text(self._name, self._fn, c) for c in
                             dict.fromkeys(self._cache.values()))

    def __repr__(self):
        return f"<tf.function {self._name}>"


class _FunctionType(str):
    """`ConcreteFunction.function_type`: its text is what TensorFlow prints."""


class _AnyRank:
    """The concrete function of `get_concrete_function(tf.TensorSpec(None))`: TensorFlow's
    graph takes a tensor of any rank there. tensorlite's graphs have ranks, so this one
    traced on a scalar runs calls of that shape, and a call of other shapes runs the
    function's graph for them (traced once per shape, with the same Python arguments):
    the same results, more traces. Everything else is the scalar trace's."""

    def __init__(self, function, concrete, args, kwargs):
        self._function, self._concrete = function, concrete
        self._template = [list(args), kwargs]

    def __getattr__(self, name):
        return getattr(self._concrete, name)

    def __call__(self, *args, **kwargs):
        tensors = self._concrete._checked_inputs(args, kwargs)
        specs = [self._concrete.graph.specs[s][0] for s in self._concrete.graph.placeholders]
        if all(t._value.shape == tuple(sp) for t, sp in zip(tensors, specs)):
            return self._concrete._call_flat(tensors)
        new = iter(tensors)
        flat = [next(new) if isinstance(x, Tensor) else x
                for x in nest.flatten(self._template, expand_composites=True)]
        call_args, call_kwargs = nest.pack_like(self._template, flat, expand_composites=True)
        concrete = self._function.get_concrete_function(*call_args, **call_kwargs)
        return concrete._call_flat(tensors)

    def __repr__(self):
        return repr(self._concrete)


def _fits_key(k, x):
    if k[0] != "T*":
        return k == _leaf_key(x)
    return isinstance(x, Tensor) and x._dtype.name == k[2] and fits_shape(k[1], x._value.shape)


def _declared_shapes(signature):
    """The input_signature's TensorSpec shapes (tuples with None), or None."""
    if signature is None:
        return None
    specs = nest.flatten(signature)
    if not all(isinstance(s, TensorSpec) and s.shape.rank is not None for s in specs):
        return None
    return [tuple(s.shape.as_list()) for s in specs]


def _arg_name(fn, i):
    try:
        params = list(inspect.signature(fn).parameters)
        return params[i] if i < len(params) else f"#{i}"
    except (TypeError, ValueError):
        return f"#{i}"


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_compile=None, experimental_relax_shapes=None,
             name=None, **kwargs):
    """`tf.function` as a decorator (with or without arguments) or a wrapper."""
    def wrap_fn(f):
        return Function(f, input_signature=input_signature, autograph=autograph,
                        jit_compile=jit_compile, reduce_retracing=reduce_retracing,
                        experimental_compile=experimental_compile, name=name,
                        experimental_relax_shapes=experimental_relax_shapes)
    if func is None:
        return wrap_fn
    return wrap_fn(func)


def _spec_shapes(x):
    """The static shapes a get_concrete_function argument declares, one per tensor it
    flattens into (None: as the value has it): a TensorSpec's shape; a RaggedTensorSpec's
    flat values (rows unknown) and row splits, in the order a RaggedTensor flattens."""
    if type(x).__name__ == "RaggedTensorSpec":
        dims = x.shape.as_list()
        inner = dims[x.ragged_rank + 1:]
        splits = [(None,)] * (x.ragged_rank - 1) + [(None if dims[0] is None else
                                                      dims[0] + 1,)]
        return [tuple([None] + inner)] + splits
    if isinstance(x, TensorSpec):
        return [tuple(x.shape.as_list()) if x.shape.rank is not None else None]
    if isinstance(x, Tensor):
        return [None]
    if hasattr(x, "flat_values") and hasattr(x, "row_splits"):  # a RaggedTensor value
        return [None] * len(nest.flatten(x, expand_composites=True))
    return []
