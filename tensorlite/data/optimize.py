"""Static rewrites of the pipeline graph before iteration (tf.data's optimisations), and
`explain()`, which prints the rewritten pipeline with what each stage runs and measured.

Each rewrite is a small function with a switch in `options.experimental_optimization`:
  noop_elimination      take(-1), skip(0), repeat(1), shard(1, 0) vanish        (default on)
  map_fusion            map(f).map(g) -> map(g . f)                             (default off)
  filter_fusion         filter(p).filter(q) -> filter(p and q)                  (default off)
  map_parallelization   sequential map -> map(num_parallel_calls=AUTOTUNE)      (default off)
  map_vectorization     map(f).batch(n) -> batch(n).map(f) for functions
                        declared batch-safe with tf.data.experimental.batch_safe (default off)
  map_and_batch_fusion  map(f).batch(n) -> one MapAndBatch stage                (default on)
Rewrites copy nodes; the user's dataset is never modified.
"""
import copy

from tensorlite.data.batching import BatchDataset
from tensorlite.data.options import OptionsDataset, resolved
from tensorlite.data.transforms import (FilterDataset, MapDataset, RepeatDataset, ShardDataset,
                                        SkipDataset, TakeDataset)
from tensorlite.data.dataset import AUTOTUNE
from tensorlite.framework import nest
from tensorlite.ops import array_ops

DEFAULTS = {"noop_elimination": True, "map_fusion": False, "filter_fusion": False,
            "map_parallelization": False, "map_vectorization": False,
            "map_and_batch_fusion": True}


def _with_input(node, new_input):
    out = copy.copy(node)
    out.__dict__.pop("_spec", None)
    out._inputs = (new_input,)
    return out


def _is_noop(node):
    return (isinstance(node, TakeDataset) and node._count < 0) or \
        (isinstance(node, SkipDataset) and node._count == 0) or \
        (isinstance(node, RepeatDataset) and node._count == 1) or \
        (isinstance(node, ShardDataset) and node._n == 1) or isinstance(node, OptionsDataset)


def _compose(f, g):
    from tensorlite.data.structure import call_with_element  # noqa: PLC0415

    def fused(*args):
        mid = f(*args)
        return call_with_element(g, mid)
    fused.__name__ = f"{getattr(g, '__name__', 'g')}.{getattr(f, '__name__', 'f')}"
    return fused


def _both(p, q):
    from tensorlite.data.functions import check_predicate  # noqa: PLC0415
    from tensorlite.data.structure import call_with_element  # noqa: PLC0415

    def fused(*args):
        element = args[0] if len(args) == 1 else args
        return check_predicate(call_with_element(p, element), "Filter", -1) and \
            check_predicate(call_with_element(q, element), "Filter", -1)
    fused.__name__ = f"{getattr(p, '__name__', 'p')}&{getattr(q, '__name__', 'q')}"
    return fused


class MapAndBatchDataset(BatchDataset):
    """map(f) then batch(n) as one stage (f may run in parallel)."""

    _name = "MapAndBatch"

    def __init__(self, map_node, batch_node):
        self.__dict__.update(batch_node.__dict__)
        self.__dict__.pop("_spec", None)
        self._map = map_node
        self._inputs = map_node._inputs

    def _describe(self):
        return f"{self._map._describe()}; {super()._describe()}"

    def _label(self):  # the map reports as its own stage
        return f"Batch({self._batch})"

    def _make_iterator(self, ctx):
        from tensorlite.data.batching import _BatchIterator, _stack_component  # noqa: PLC0415
        return _BatchIterator(self._map._make_iterator(ctx), self._batch, self._drop,
                              _stack_component)

    def _compute_spec(self):
        return BatchDataset._compute_spec(_with_input(self, self._map))


def _rewrite(node, opts, log):
    inputs = tuple(_rewrite(i, opts, log) for i in node._inputs)
    if inputs != node._inputs:
        node = copy.copy(node)
        node.__dict__.pop("_spec", None)
        node._inputs = inputs
    if opts["noop_elimination"] and _is_noop(node):
        log.append(f"noop_elimination: removed {node._name}({node._describe()})")
        return node._inputs[0]
    if isinstance(node, MapDataset) and isinstance(node._input, MapDataset) and \
            opts["map_fusion"] and node._parallel == node._input._parallel:
        inner = node._input
        fused = _with_input(node, inner._input)
        fused._fn = _compose(inner._fn, node._fn)
        log.append(f"map_fusion: fused map({getattr(inner._fn, '__name__', 'f')}) and "
                   f"map({getattr(node._fn, '__name__', 'g')})")
        node = fused
    if isinstance(node, FilterDataset) and isinstance(node._input, FilterDataset) and \
            opts["filter_fusion"]:
        inner = node._input
        fused = _with_input(node, inner._input)
        fused._fn = _both(inner._fn, node._fn)
        log.append("filter_fusion: fused two filters")
        node = fused
    if isinstance(node, MapDataset) and node._parallel is None and opts["map_parallelization"]:
        node = copy.copy(node)
        node._parallel = AUTOTUNE
        log.append(f"map_parallelization: map({getattr(node._fn, '__name__', 'f')}) now runs "
                   f"with num_parallel_calls=AUTOTUNE")
    if isinstance(node, BatchDataset) and type(node) is BatchDataset and \
            isinstance(node._input, MapDataset):
        m = node._input
        if opts["map_vectorization"]:
            safe = getattr(m._fn, "_tensorlite_batch_safe", False)
            batch = _with_input(node, m._input)
            node = _with_input(m, batch)
            if not safe:
                node._fn = _vectorized(m._fn)
            log.append(f"map_vectorization: batch({node._input._batch}) moved before "
                       f"map({getattr(m._fn, '__name__', 'f')}), which now runs once per batch"
                       + ("" if safe else " through tf.vectorized_map"))
        elif opts["map_and_batch_fusion"]:
            node = MapAndBatchDataset(m, node)
            log.append("map_and_batch_fusion: map and batch fused into MapAndBatch")
    return node


def optimize_pipeline(dataset, options, log=None):
    opts = {k: resolved(options, "experimental_optimization", k, v) for k, v in DEFAULTS.items()}
    if resolved(options, "experimental_optimization", "apply_default_optimizations",
                True) is False:
        for k in ("noop_elimination", "map_and_batch_fusion"):
            if getattr(options.experimental_optimization, k) is None:
                opts[k] = False
    return _rewrite(dataset, opts, log if log is not None else [])


def _vectorized(fn):
    """fn over a batch: tf.vectorized_map (one run for the whole batch by the ops' batching
    rules) when fn is stateless; a function with random draws or Python callbacks runs per
    element, so every element keeps its own draws."""
    from tensorlite.graph.vectorize import StatefulFunction, vectorized_map  # noqa: PLC0415
    state = {"stateless": True}

    def per_element(*batch):
        n = int(nest.flatten(batch)[0].shape[0])
        outs = [fn(*nest.map_structure(lambda t: t[i], batch)) for i in range(n)]
        return nest.map_structure(lambda *xs: array_ops.stack(xs), *outs)

    def run(*batch):
        if state["stateless"]:
            try:
                return vectorized_map(lambda e: fn(*e), batch, warn=False,
                                      stateless_only=True)
            except StatefulFunction:
                state["stateless"] = False
        return per_element(*batch)
    run.__name__ = getattr(fn, "__name__", "f")
    return run


def batch_safe(fn):
    """Declares that `fn` gives the same result on a batch as on each element stacked, so
    map_vectorization runs it on the batch directly (without tf.vectorized_map)."""
    fn._tensorlite_batch_safe = True
    return fn


def explain(dataset):
    from tensorlite.data.options import merged_options  # noqa: PLC0415
    options = merged_options(dataset)
    log = []
    root = optimize_pipeline(dataset, options, log)
    ctx = dataset.__dict__.get("_last_ctx")
    lines = ["Optimised pipeline (output first):"]
    rows = []

    def walk(node, depth):
        key = getattr(getattr(node, "_map", node), "_key", None)  # MapAndBatch: the map's
        stats = ctx.stats.stages.get(key) if ctx else None
        desc = node._describe()
        line = f"{'  ' * depth}{node._name}({desc})"
        if stats is not None and stats.count:
            rate = stats.parallelism / stats.mean if stats.mean else float("inf")
            rows.append((rate, node._name))
            line += (f"  [{stats.count} elements, mean {stats.mean * 1e3:.3f} ms, max "
                     f"{stats.max * 1e3:.3f} ms, consumer waited {stats.wait * 1e3:.1f} ms"
                     f"{'; ' + stats.choice if stats.choice else ''}]")
        elif stats is not None and stats.choice:
            line += f"  [{stats.choice}]"
        lines.append(line)
        for i in node._inputs:
            walk(i, depth + 1)
    walk(root, 1)
    lines.append("Rewrites applied: " + ("; ".join(log) if log else "none"))
    if rows:
        rate, name = min(rows)
        lines.append(f"Bottleneck: {name} (about {rate:.0f} elements/s at its parallelism)")
    elif ctx is None:
        lines.append("No measurements yet: iterate the dataset, then call explain() again.")
    return "\n".join(lines)
