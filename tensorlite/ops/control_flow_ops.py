"""Control flow: `tf.cond`, `tf.case`, `tf.switch_case`, `tf.while_loop`.

Eagerly they just run the chosen Python function (so a GradientTape records its ops as
usual). While a tf.function is being traced, a predicate, index or loop that depends on the
graph becomes ONE graph node (If / Case / While) that decides every time the graph runs,
instead of the decision made at trace time being baked in; see
tensorlite/graph/control_flow.py. Python `if`/`while` on a tensor inside tf.function is an
error that points here.

Example:
    >>> x = tf.constant(3.0)
    >>> tf.cond(x > 0, lambda: x * 2, lambda: -x).numpy()
    6.0
    >>> tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), [0, 0])[1].numpy()
    6
"""
import numpy as np

from tensorlite.framework import dispatch, errors, nest
from tensorlite.framework.tensor import Tensor
from tensorlite.ops.common import to_tensor

__all__ = ["cond", "case", "switch_case", "while_loop"]


# The graph layer installs itself here when it loads (tensorlite/graph/control_flow.py):
# the module that builds If/Case/While nodes and says whether a trace is recording. Ops sit
# below the graph layer and never import it.
GRAPH = []


def graph_tracing():
    """True while a tf.function (or a v1 graph) is recording ops."""
    return bool(dispatch.OBSERVERS) and bool(GRAPH) and GRAPH[0].is_tracing()


def _graph():
    """The graph-side builders while a tf.function is being traced, else None."""
    return GRAPH[0] if graph_tracing() else None


def _pred(pred, what):
    if isinstance(pred, bool):
        raise TypeError(f"{what}: pred must not be a Python bool; pass a boolean scalar "
                        f"tensor (tf.constant(True)) or use a plain Python `if`")
    if getattr(pred, "_is_variable", False):
        pred = pred._read()
    p = to_tensor(pred)
    if p._value.ndim != 0:
        raise ValueError(f"{what}: the predicate must be a scalar, got shape "
                         f"{list(p._value.shape)}; reduce it first (tf.reduce_all / "
                         f"tf.reduce_any)")
    return p


def _check_callable(fn, label):
    if fn is None:
        raise TypeError(f"{label} must not be None; pass a callable")
    if not callable(fn):
        raise TypeError(f"{label} must be callable.")


def cond(pred, true_fn=None, false_fn=None, name=None):
    """`tf.cond`: `true_fn()` if `pred` else `false_fn()`; in a graph both are traced and
    the choice is made at run time."""
    _check_callable(true_fn, "true_fn")
    _check_callable(false_fn, "false_fn")
    p = _pred(pred, "cond")
    cf = _graph()
    if cf is not None and not cf.is_static(p):
        return cf.build_cond(p, true_fn, false_fn, name or "cond")
    return true_fn() if p._value else false_fn()


def select_branch(selectors, mode, n_branches, exclusive=False):
    """Index of the branch to run (the last is the default). mode "index": the selector
    itself, out of range -> default; "preds": the first true predicate, none -> default;
    "preds_no_default" (tf.case without default): none true is an error."""
    if mode == "index":
        i = int(selectors[0])
        return i if 0 <= i < n_branches - 1 else n_branches - 1
    hits = [i for i, p in enumerate(selectors) if bool(p)]
    if exclusive and len(hits) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"Input error: exclusive=True and more than one predicate evaluated "
            f"to true (predicates {hits}) [Op:Case]")
    if not hits and mode == "preds_no_default":
        raise errors.InvalidArgumentError(
            None, None, "Input error: None of conditions evaluated as True (tf.case without "
            "a default) [Op:Case]")
    return hits[0] if hits else n_branches - 1


def _unpack_singleton(fn, strict):
    if strict:
        return fn

    def call():
        out = fn()
        return out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    return call


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """`tf.case`: runs the function of the first true predicate (all must be false for
    `default`); with `exclusive`, more than one true predicate is an InvalidArgumentError.
    Without `default`, the last pair's function is the default, and no true predicate at
    all is an InvalidArgumentError, as in TensorFlow."""
    if not isinstance(pred_fn_pairs, (list, tuple)):
        raise TypeError(f"pred_fn_pairs must be a list or tuple of (predicate, callable) "
                        f"pairs, got {type(pred_fn_pairs).__name__}")
    if not pred_fn_pairs:
        raise ValueError("pred_fn_pairs must not be empty")
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {pair!r}")
        _check_callable(pair[1], "fn")
    if default is not None:
        _check_callable(default, "default")
    preds = [_pred(p, "case") for p, _ in pred_fn_pairs]
    fns = [_unpack_singleton(fn, strict) for _, fn in pred_fn_pairs]
    labels = [f"fn #{i}" for i in range(len(fns))]
    if default is not None:
        fns.append(_unpack_singleton(default, strict))
        labels.append("default")
    mode = "preds" if default is not None else "preds_no_default"
    cf = _graph()
    if cf is not None and not all(cf.is_static(p) for p in preds):
        return cf.build_case(preds, fns, mode, exclusive, name, labels)
    return fns[select_branch([p._value for p in preds], mode, len(fns), exclusive)]()


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """`tf.switch_case`: runs `branch_fns[branch_index]`; an index out of range runs
    `default`, or the last branch when there is none."""
    fns = _branch_list(branch_fns)
    if default is not None:
        _check_callable(default, "default")
        fns.append(default)
    if getattr(branch_index, "_is_variable", False):
        branch_index = branch_index._read()
    idx = to_tensor(branch_index)
    if idx._dtype.name not in ("int32", "int64") or idx._value.ndim != 0:
        raise TypeError(f"switch_case: branch_index must be a scalar int32 or int64 tensor, "
                        f"got {idx.dtype.name}{list(idx._value.shape)}")
    labels = [f"branch {i}" for i in range(len(fns))]
    cf = _graph()
    if cf is not None and not cf.is_static(idx):
        return cf.build_case([idx], fns, "index", False, name, labels)
    return fns[select_branch([idx._value], "index", len(fns))]()


def _branch_list(branch_fns):
    if isinstance(branch_fns, dict):
        branch_fns = sorted(branch_fns.items())
    items = list(branch_fns)
    if not items:
        raise ValueError("branch_fns must not be empty")
    if all(isinstance(x, tuple) and len(x) == 2 for x in items):
        keys = [k for k, _ in items]
        if sorted(keys) != list(range(len(keys))):
            raise ValueError(f"branch_fns keys must be the integers 0..{len(keys) - 1}, got "
                             f"{keys}")
        items = [fn for _, fn in sorted(items, key=lambda kv: kv[0])]
    for i, fn in enumerate(items):
        _check_callable(fn, f"branch_fns[{i}]")
    return items


def _as_loop_var(v):
    if getattr(v, "_is_variable", False):
        return v._read()
    if hasattr(v, "_with_handle"):  # a tf.TensorArray: eagerly itself, in a graph its handle
        return v
    return v if isinstance(v, Tensor) else to_tensor(v)


def _handles(structure):
    """Loop variables as a graph loop carries them: a TensorArray as its handle tensor."""
    return nest.map_structure(lambda v: v.handle if hasattr(v, "_with_handle") else v,
                              structure)


def _rewrapping(fn, templates):
    """fn called with the TensorArrays of `templates` rebuilt around the loop's handles;
    what it returns, with its TensorArrays as handles again."""
    def call(*vals):
        flat = [v if t is None else t._with_handle(v)
                for t, v in zip(nest.flatten(templates), vals)]
        return _handles(fn(*_unflat(templates, flat)))
    return call


def _unflat(templates, flat):
    out = nest.pack_like(templates, flat)
    return out if isinstance(out, (list, tuple)) else [out]


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """`tf.while_loop`: repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`
    (at most `maximum_iterations` times); returns the loop variables in their structure.
    In a graph the loop is one While node (gradients flow through it)."""
    _check_callable(cond, "cond")
    _check_callable(body, "body")
    if not isinstance(parallel_iterations, (int, np.integer)) or parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if isinstance(loop_vars, (list, tuple)) and not loop_vars:
        raise ValueError("No loop variables provided")
    loop_vars = nest.map_structure(_as_loop_var, loop_vars)
    limit = None
    if maximum_iterations is not None:
        limit = to_tensor(maximum_iterations)
        if limit._value.ndim != 0 or limit._dtype.name not in ("int32", "int64"):
            raise ValueError(f"maximum_iterations must be a scalar integer, got "
                             f"{limit.dtype.name}{list(limit._value.shape)}")
    cf = _graph()
    if cf is not None:
        templates = nest.map_structure(
            lambda v: v if hasattr(v, "_with_handle") else None, loop_vars)
        if any(t is not None for t in nest.flatten(templates)):  # TensorArrays: as handles
            out = while_loop(_rewrapping(cond, templates), _rewrapping(body, templates),
                             _handles(loop_vars), shape_invariants, parallel_iterations,
                             back_prop, swap_memory, maximum_iterations, name)
            flat = [v if t is None else t._with_handle(v)
                    for t, v in zip(nest.flatten(templates), nest.flatten(out))]
            return nest.pack_like(loop_vars, flat)
        return cf.build_while(cond, body, loop_vars, nest.flatten(loop_vars), limit,
                              shape_invariants, name or "while")
    return _eager_while(cond, body, loop_vars, None if limit is None else int(limit._value))


def _call(fn, loop_vars):
    return fn(*loop_vars) if isinstance(loop_vars, (list, tuple)) else fn(loop_vars)


def repack_body_output(loop_vars, out):
    """As TF: one loop variable may come back bare or as a 1-tuple, whatever its form."""
    if isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 1 and \
            not isinstance(out, (list, tuple, dict)):
        return type(loop_vars)([out]) if type(loop_vars) in (list, tuple) else [out]
    if not isinstance(loop_vars, (list, tuple, dict)) and isinstance(out, (list, tuple)) and \
            len(out) == 1:
        return out[0]
    return out


def _eager_while(cond, body, loop_vars, limit):
    i = 0
    while limit is None or i < limit:
        c = _call(cond, loop_vars)
        if not (c._value if isinstance(c, Tensor) else c):
            break
        out = repack_body_output(loop_vars, _call(body, loop_vars))
        if len(nest.flatten(out)) != len(nest.flatten(loop_vars)) or \
                isinstance(out, (list, tuple)) != isinstance(loop_vars, (list, tuple)):
            raise ValueError(f"while_loop: body must return the same structure as loop_vars "
                             f"({len(nest.flatten(loop_vars))} values), got {out!r:.200}")
        loop_vars = nest.pack_like(loop_vars, [_as_loop_var(v) for v in nest.flatten(out)])
        i += 1
    return loop_vars
