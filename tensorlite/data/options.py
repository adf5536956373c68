"""`tf.data.Options`: determinism, static optimisations, autotuning and threading.

Example:
    >>> options = tf.data.Options()
    >>> options.experimental_optimization.map_fusion = True
    >>> ds = tf.data.Dataset.range(3).with_options(options)
"""
import enum

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.transforms import UnaryDataset


class _OptionGroup:
    _fields = {}

    def __init__(self):
        for k, v in self._fields.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, key, value):
        if key not in self._fields:
            raise AttributeError(f"{type(self).__name__} has no option {key!r}; valid options: "
                                 f"{sorted(self._fields)}")
        object.__setattr__(self, key, value)

    def _merge(self, other):
        for k in self._fields:
            v = getattr(other, k)
            if isinstance(v, _OptionGroup):
                getattr(self, k)._merge(v)
            elif v is not None and v != self._fields[k]:
                object.__setattr__(self, k, v)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self._fields)})"


class OptimizationOptions(_OptionGroup):
    _fields = {"apply_default_optimizations": None, "map_and_batch_fusion": None,
               "map_fusion": None, "map_parallelization": None, "filter_fusion": None,
               "noop_elimination": None, "map_vectorization": None, "parallel_batch": None,
               "shuffle_and_repeat_fusion": None, "inject_prefetch": None}


class MapVectorizationOptions(_OptionGroup):
    """TF 2.1's `options.experimental_optimization.map_vectorization.enabled = True`."""

    _fields = {"enabled": None, "use_choose_fastest": None}


class AutotuneAlgorithm(enum.Enum):
    """`tf.data.experimental.AutotuneAlgorithm` (TF's values), for
    `options.autotune.autotune_algorithm`. tensorlite records the choice; its AUTOTUNE is
    one algorithm whatever the value: each parallel stage measures its first elements and
    picks inline, threads or processes and their number (see parallel_map.py)."""
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class AutotuneOptions(_OptionGroup):
    # ram_budget 0 means: no limit beyond the machine's memory (TF's default is half of RAM)
    _fields = {"enabled": None, "cpu_budget": None, "ram_budget": None,
               "autotune_algorithm": None}


class ThreadingOptions(_OptionGroup):
    # worker_mechanism is tensorlite's own: "auto" (measure), "thread" or "process".
    _fields = {"private_threadpool_size": None, "max_intra_op_parallelism": None,
               "worker_mechanism": None}


def _init_optimization(self):
    _OptionGroup.__init__(self)
    object.__setattr__(self, "map_vectorization", MapVectorizationOptions())


OptimizationOptions.__init__ = _init_optimization


class Options(_OptionGroup):
    _fields = {"deterministic": None, "experimental_deterministic": None,
               "experimental_optimization": None, "autotune": None, "threading": None,
               "experimental_threading": None, "experimental_slack": None,
               "experimental_distribute": None, "experimental_external_state_policy": None}

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "experimental_optimization", OptimizationOptions())
        object.__setattr__(self, "autotune", AutotuneOptions())
        object.__setattr__(self, "threading", ThreadingOptions())
        object.__setattr__(self, "experimental_threading", self.threading)
        from tensorlite.data.distribute_options import DistributeOptions  # noqa: PLC0415
        object.__setattr__(self, "experimental_distribute", DistributeOptions())

    def __setattr__(self, key, value):
        if key == "experimental_deterministic":
            key = "deterministic"
        super().__setattr__(key, value)

    def merge(self, options):
        """A new Options with `options`' set values overriding ours."""
        out = Options()
        out._merge(self)
        out._merge(options)
        return out


class OptionsDataset(UnaryDataset):
    _name = "Options"

    def __init__(self, input_dataset, options):
        super().__init__(input_dataset)
        if not isinstance(options, Options):
            raise TypeError(f"with_options expects a tf.data.Options, got "
                            f"{type(options).__name__}")
        self._options = options

    def _make_iterator(self, ctx):
        return self._input._make_iterator(ctx)


def merged_options(dataset):
    """All options set anywhere upstream, later (outer) settings winning."""
    chain = []

    def walk(d):
        for i in d._inputs:
            walk(i)
        if isinstance(d, OptionsDataset):
            chain.append(d._options)
    walk(dataset)
    out = Options()
    for o in chain:
        out._merge(o)
    return out


def resolved(options, group, name, default):
    v = getattr(getattr(options, group) if group else options, name)
    if isinstance(v, _OptionGroup) and "enabled" in v._fields:  # map_vectorization.enabled
        v = v.enabled
    return default if v is None else v


__all__ = ["Options", "OptionsDataset", "merged_options", "DatasetV2"]
