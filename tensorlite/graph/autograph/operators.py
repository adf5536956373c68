"""AutoGraph's runtime: the `ag__.*` functions converted code calls.

Each decides when the code runs, as TensorFlow's AutoGraph does: a condition or iterable
that is a tensor computed in the graph being traced stages tf.cond / tf.while_loop; anything
else (Python values, constants, eager tensors) runs as plain Python. Staged statements
follow TensorFlow's rules and messages: a name a branch outputs must be set in both
branches; a loop variable must be defined before the loop and keep its dtype (and its shape,
unless `set_loop_options(shape_invariants=...)` relaxes it). Errors name the user's line.

Example (what `if x > 0: y = x` becomes, schematically):
    >>> ag__.if_stmt(x > 0, if_body, else_body, get_state, set_state, ("y",))  # doctest: +SKIP
"""
import builtins

import numpy as np

from tensorlite.framework import nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.user_frame import user_location
from tensorlite.graph import control_flow, tracing
from tensorlite.ops import array_ops, control_flow_ops, gather_ops, math_ops
from tensorlite.ops.tensor_array_ops import is_tensor_array


# -- undefined values ------------------------------------------------------------------------
class Undefined:
    """The value of a name a staged statement may leave unset; any use is an error."""

    def __init__(self, symbol_name):
        object.__setattr__(self, "symbol_name", symbol_name)

    def _fail(self, *_, **__):
        raise UnboundLocalError(
            f"local variable '{self.symbol_name}' is used before it is assigned (it is "
            f"assigned in only some branches of an `if`, or inside a loop); assign it "
            f"before the statement")

    __getattr__ = __call__ = __bool__ = __iter__ = __getitem__ = __len__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __array__ = __index__ = _fail

    def __repr__(self):
        return f"Undefined({self.symbol_name!r})"


class UndefinedReturnValue:
    """The return value before a `return` ran (lowering.py)."""

    def __repr__(self):
        return "UndefinedReturnValue()"


def is_undefined(v):
    return isinstance(v, (Undefined, UndefinedReturnValue))


def ld(scope, names):
    """The values of `names` in `scope` (locals()), Undefined where unset."""
    return tuple(scope[n] if n in scope else Undefined(n) for n in names)


def retval(value):
    return None if isinstance(value, UndefinedReturnValue) else value


def _is_retval(name):
    return name.startswith("retval_")


# -- what stages -----------------------------------------------------------------------------
def _read(x):
    return x.read_value() if getattr(x, "_is_variable", False) else x


def is_staged(x):
    """True for a tensor the graph being traced computes (its value varies per call)."""
    x = _read(x)
    return isinstance(x, Tensor) and tracing.is_tracing() and not control_flow.is_static(x)


def not_(x):
    x = _read(x)
    if is_staged(x):
        return math_ops.logical_not(x)
    return not x


def _bool_op(values, staged_op, python_stop):
    """`and`/`or` over thunks: Python's short-circuit on Python values; a staged operand
    makes the rest a tf.cond (so later operands still run only when needed)."""
    result = _read(values[0]())
    for i, thunk in enumerate(values[1:], 1):
        if is_staged(result):
            rest = values[i:]
            other = lambda rest=rest: convert_to_tensor(_bool_op(rest, staged_op,  # noqa: E731
                                                                  python_stop))
            return control_flow_ops.cond(
                result, *((other, lambda: result) if staged_op == "and" else
                          (lambda: result, other)))
        if bool(result) == python_stop:
            return result
        result = _read(thunk())
    return result


def and_(*thunks):
    """`a and b` in converted code: tf.logical_and semantics when `a` is staged."""
    return _bool_op(thunks, "and", False)


def or_(*thunks):
    """`a or b` in converted code."""
    return _bool_op(thunks, "or", True)


def if_exp(cond, if_true, if_false):
    """`a if cond else b`: tf.cond when `cond` is staged."""
    cond = _read(cond)
    if is_staged(cond):
        return control_flow_ops.cond(cond, if_true, if_false)
    return if_true() if cond else if_false()


# -- if ----------------------------------------------------------------------------------------
class _ProbeElse(Exception):
    """The main branch left an output undefined: learn what the else branch does first."""


def if_stmt(cond, body, orelse, get_state, set_state, names):
    """An `if` statement: tf.cond when `cond` is staged, else Python's `if`."""
    cond = _read(cond)
    if not is_staged(cond):
        if cond:
            body()
        else:
            orelse()
        return
    _staged_if(cond, body, orelse, get_state, set_state, names, user_location(2))


def _staged_if(cond, body, orelse, get_state, set_state, names, where):
    init = get_state()
    plan = {"outputs": list(names), "main": {}, "else": None}

    def run(fn):
        set_state(init)
        fn()
        return dict(zip(names, get_state()))

    def main():
        values = run(body)
        out = []
        for n in list(plan["outputs"]):
            v = values[n]
            if is_undefined(v):
                if plan["else"] is None:
                    raise _ProbeElse()
                other = plan["else"].get(n)
                if other is None or is_undefined(other):  # unset either way: stays unset
                    plan["outputs"].remove(n)
                    continue
                if not _is_retval(n):
                    raise ValueError(f"'{n}' must also be initialized in the main branch "
                                     f"(if statement at {where}); assign it before the `if` "
                                     f"or in both branches")
                v = array_ops.zeros_like(convert_to_tensor(other))
            v = _branch_value(n, v, "main", where, None)
            plan["main"][n] = v
            out.append(v)
        return tuple(out)

    def other():
        values = run(orelse)
        out = []
        for n in plan["outputs"]:
            v, like = values[n], plan["main"][n]
            if is_undefined(v):
                if not _is_retval(n):
                    raise ValueError(f"'{n}' must also be initialized in the else branch "
                                     f"(if statement at {where}); add an `else` that "
                                     f"assigns it, or assign it before the `if`")
                v = array_ops.zeros_like(like) if isinstance(like, Tensor) else \
                    nest.map_structure(array_ops.zeros_like, like)
            v = _branch_value(n, v, "else", where, like)
            out.append(v)
        return tuple(out)

    try:
        result = control_flow_ops.cond(cond, main, other)
    except _ProbeElse:
        plan["else"] = _probe(lambda: run(orelse))
        result = control_flow_ops.cond(cond, main, other)
    final = dict(zip(names, init))
    final.update(zip(plan["outputs"], result))
    for n in names:
        if n not in plan["outputs"]:
            final[n] = Undefined(n)
    set_state(tuple(final[n] for n in names))


def _probe(fn):
    """Runs `fn` as a throwaway sub-trace (nothing reaches the graph); its result."""
    box = {}

    def traced():
        box["values"] = fn()
        return ()
    control_flow.trace_sub(traced, [], "autograph_probe")
    return box["values"]


def _branch_value(name, v, branch, where, like):
    """A branch output as tensors (Python numbers convert; dtypes must agree)."""
    if v is None:
        raise ValueError(f"'{name}' is None at the end of the {branch} branch (if statement "
                         f"at {where}); a tensor-dependent `if` must give it a tensor value "
                         f"in both branches")
    try:
        t = nest.map_structure(lambda x: x if isinstance(x, Tensor) else
                               convert_to_tensor(_read(x)), v)
    except (TypeError, ValueError) as e:
        raise TypeError(f"'{name}' is {type(v).__name__} at the end of the {branch} branch "
                        f"(if statement at {where}), which a tensor-dependent `if` cannot "
                        f"output: it must be a tensor or a nest of tensors ({e})") from None
    if like is not None:
        a, b = nest.flatten(like), nest.flatten(t)
        for x, y in zip(a, b):
            if x.dtype != y.dtype:
                raise TypeError(f"'{name}' has dtype {x.dtype.name} in the main branch, but "
                                f"dtype {y.dtype.name} in the else branch (if statement at "
                                f"{where}); use tf.cast so both branches agree")
    return t


# -- loops -------------------------------------------------------------------------------------
def while_stmt(test, body, get_state, set_state, names, opts=None):
    """A `while` loop: tf.while_loop when its condition is staged, else Python's."""
    cond = _read(test())
    if is_staged(cond):
        _staged_loop(lambda: test(), lambda: body(), get_state, set_state, names, opts,
                     user_location(2), None)
        return
    where, n = None, 0
    while cond:
        body()
        n += 1
        cond = _read(test())
        if is_staged(cond):
            where = where or user_location(2)
            raise ValueError(
                f"the condition of the while loop at {where} became a tensor computed in the "
                f"graph after {n} Python iteration(s); a loop must be decided the same way "
                f"throughout: make its variables tensors before the loop (tf.constant) so "
                f"that the whole loop becomes a tf.while_loop")


def for_stmt(iterable, extra_test, body, get_state, set_state, names, opts=None):
    """A `for` loop: over a tensor (`for x in t`, `for i in tf.range(n)`) or a dataset
    inside a traced function it becomes a tf.while_loop; otherwise Python's `for`."""
    iterable = _read(iterable)
    if isinstance(iterable, Tensor) and tracing.is_tracing():
        _tensor_for(iterable, extra_test, body, get_state, set_state, names, opts,
                    user_location(2))
        return
    if _is_dataset(iterable) and tracing.is_tracing():
        _dataset_for(iterable, extra_test, body, get_state, set_state, names, opts,
                     user_location(2))
        return
    for x in iterable:
        if extra_test is not None:
            more = _read(extra_test())
            if is_staged(more):  # a tensor-dependent break: the rest runs under tf.cond
                if_stmt(more, lambda x=x: body(x), lambda: None, get_state, set_state, names)
                continue
            if not more:
                break
        body(x)


def _is_dataset(x):
    # duck-typed: the data layer sits above the graph layer
    return hasattr(x, "element_spec") and hasattr(x, "_make_iterator")


def _tensor_for(t, extra_test, body, get_state, set_state, names, opts, where):
    if t.shape.rank == 0:
        raise TypeError(f"for loop at {where}: cannot iterate over a scalar tensor")
    n = array_ops.shape(t)[0]
    if t.shape[0] == 0:
        # The body is traced on real values: with no element now, trace it on a padding
        # row (the loop still runs n times; only this graph pays for the copy).
        t = array_ops.concat([t, array_ops.zeros([1] + t.shape.as_list()[1:], t.dtype)], 0)

    def test(i):
        more = math_ops.less(i, n)
        return more if extra_test is None else and_(lambda: more, extra_test)

    def step(i):
        body(gather_ops.gather(t, i))
        return i + 1
    _staged_loop(test, step, get_state, set_state, names, opts, where,
                 convert_to_tensor(np.int32(0)))


def _dataset_for(ds, extra_test, body, get_state, set_state, names, opts, where):
    from tensorlite.graph.autograph import dataset_loop  # noqa: PLC0415
    dataset_loop.run(ds, extra_test, body, get_state, set_state, names, opts, where,
                     _staged_loop)


def _loop_options(opts):
    opts = dict(opts or {})
    unknown = set(opts) - {"shape_invariants", "maximum_iterations", "parallel_iterations",
                           "swap_memory"}
    if unknown:
        raise TypeError(f"set_loop_options got unknown options {sorted(unknown)}")
    return opts


def _staged_loop(test, step, get_state, set_state, names, opts, where, counter,
                 counter_shapes=None):
    """tf.while_loop over the loop variables `names` (plus `counter`, a tensor or a nest
    of them passed to `test` and `step`, when not None; `counter_shapes` relaxes its
    shapes)."""
    opts = _loop_options(opts)
    init = list(get_state())
    if any(_is_retval(n) and is_undefined(v) for n, v in zip(names, init)):
        init = _initial_return_value(names, init, get_state, set_state, step, counter)
    for n, v in zip(names, init):
        if is_undefined(v):
            raise ValueError(f"'{n}' must be defined before the loop (loop at {where}): it "
                             f"is read by the loop or after it, so it is a loop variable of "
                             f"the tf.while_loop this loop becomes; assign it a value of the "
                             f"right dtype and shape before the loop")
        if v is None:
            raise ValueError(f"'{n}' is None before the loop (loop at {where}); loop "
                             f"variables of a tensor-dependent loop must be tensors")
    arrays = [v if is_tensor_array(v) else None for v in init]  # carried as their handles
    init_t = [_loop_value(n, v, where) for n, v in zip(names, init)]
    invariants = _invariants(names, init, opts.get("shape_invariants"))
    k = 0 if counter is None else 1

    def rewrap(vals):
        return tuple(v if ta is None else ta._with_handle(v) for ta, v in zip(arrays, vals))

    def unpack(vals):
        set_state(rewrap(vals[k:]))
        return vals[0] if k else None

    def cond_fn(*vals):
        i = unpack(vals)
        more = _read(test(i) if k else test())
        return more if isinstance(more, Tensor) else convert_to_tensor(bool(more))

    def body_fn(*vals):
        i = unpack(vals)
        nxt = step(i) if k else step()
        new = [_loop_value(n, v, where) for n, v in zip(names, get_state())]
        for n, a, b, inv in zip(names, init_t, new, invariants):
            _check_loop_var(n, a, b, inv, where)
        return ([nxt] if k else []) + (new or [_DUMMY_VALUE()])

    start = ([counter] if k else []) + (init_t or [_DUMMY_VALUE()])
    shape_inv = None
    if any(inv is not None for inv in invariants) or counter_shapes is not None:
        head = counter_shapes if counter_shapes is not None else \
            nest.map_structure(lambda t: TensorShape(t.shape), counter)
        shape_inv = ([head] if k else []) + [
            inv if inv is not None else TensorShape(nest.flatten(a)[0].shape)
            for a, inv in zip(init_t, invariants)]
    result = control_flow_ops.while_loop(cond_fn, body_fn, start, shape_invariants=shape_inv,
                                         maximum_iterations=opts.get("maximum_iterations"))
    result = list(result)
    set_state(rewrap(result[k:k + len(names)]))


def _initial_return_value(names, init, get_state, set_state, step, counter):
    """A `return` inside a staged loop: the return value starts as zeros shaped like what
    one iteration returns (traced and thrown away), as TensorFlow's AutoGraph does."""
    def one_iteration():
        set_state(tuple(init))
        step() if counter is None else step(counter)
        return dict(zip(names, get_state()))
    after = _probe(one_iteration)
    set_state(tuple(init))
    out = []
    for n, v in zip(names, init):
        new = after[n]
        if _is_retval(n) and is_undefined(v) and not is_undefined(new) and new is not None:
            v = nest.map_structure(lambda x: array_ops.zeros_like(convert_to_tensor(x)), new)
        out.append(v)
    return out


def _DUMMY_VALUE():  # noqa: N802 - a loop with no variables still needs one
    return convert_to_tensor(np.int32(0))


def _loop_value(name, v, where):
    if is_undefined(v):
        raise ValueError(f"'{name}' must be defined before the loop (loop at {where})")
    if is_tensor_array(v):
        if v.handle is None:
            raise TypeError(f"'{name}' is a tf.TensorArray made outside the tf.function; "
                            f"a graph loop (at {where}) can only carry one made inside it")
        return v.handle
    try:
        return nest.map_structure(lambda x: x if isinstance(x, Tensor) else
                                  convert_to_tensor(_read(x)), v)
    except (TypeError, ValueError) as e:
        raise TypeError(f"'{name}' is {type(v).__name__}, which cannot be a loop variable of "
                        f"the tf.while_loop the loop at {where} becomes (it must be a tensor "
                        f"or a nest of tensors): {e}") from None


def _invariants(names, values, shape_invariants):
    out = [None] * len(names)
    for var, shape in shape_invariants or ():
        for i, v in enumerate(values):
            if v is var or (isinstance(v, Tensor) and var is v):
                out[i] = TensorShape(shape)
    return out


def _check_loop_var(name, before, after, invariant, where):
    for a, b in zip(nest.flatten(before), nest.flatten(after)):
        if a.dtype != b.dtype:
            raise TypeError(f"'{name}' has dtype {a.dtype.name} before the loop, but dtype "
                            f"{b.dtype.name} after one iteration (loop at {where}); keep its "
                            f"dtype: tf.cast the new value, or start it as "
                            f"tf.constant(..., dtype=tf.{b.dtype.name})")
        allowed = invariant if invariant is not None else TensorShape(a.shape)
        if not allowed.is_compatible_with(TensorShape(b.shape)):
            raise ValueError(f"'{name}' has shape {tuple(a.shape.as_list())} before the "
                             f"loop, but shape {tuple(b.shape.as_list())} after one "
                             f"iteration (loop at {where}). Use "
                             f"tf.autograph.experimental.set_loop_options to set shape "
                             f"invariants, e.g. set_loop_options(shape_invariants=[({name}, "
                             f"tf.TensorShape([None]))])")


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """`tf.autograph.experimental.set_loop_options`: as the first statement of a loop body
    in converted code it sets the loop's options (the converter removes the call); called
    anywhere else it does nothing, as in TensorFlow.

    >>> for i in tf.range(n):  # doctest: +SKIP
    ...     tf.autograph.experimental.set_loop_options(
    ...         shape_invariants=[(v, tf.TensorShape([None]))])
    """
    del parallel_iterations, swap_memory, maximum_iterations, shape_invariants


# -- calls -------------------------------------------------------------------------------------
def converted_call(f, args, kwargs=None):
    """A call in converted code: the user's own functions are converted too; TensorFlow's
    (tensorlite's), the standard library's and objects without source run as they are."""
    kwargs = kwargs or {}
    if f is builtins.range and any(is_staged(a) for a in args):
        return array_ops.range(*args, **kwargs)
    from tensorlite.graph.autograph import conversion  # noqa: PLC0415
    target = conversion.converted(f)
    return target(*args, **kwargs)
