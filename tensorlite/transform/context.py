"""How an analyzer call inside a `preprocessing_fn` behaves, by the mode of the current run.

A `preprocessing_fn` runs several times, always calling its analyzers in the same order, so
the n-th call is the same analyzer every time:
- `analyze` (on each record batch in a Beam worker): an analyzer whose result is known
  returns it; one not yet known adds its input batch to a partial accumulator and returns a
  placeholder (`variant` 0 or 1 picks one of two different placeholders: running both on a
  sample shows which analyzers' inputs depend on placeholders, i.e. on other analyzers);
- `apply` (eagerly, or while tracing the transform graph): every result is known and becomes
  a constant of the graph (a vocabulary: a lookup table whose file is a SavedModel asset).
"""
import threading

_STATE = threading.local()


class Run:
    """The state of one run of a preprocessing_fn."""

    def __init__(self, mode, known=None, variant=0, tables=None, asset_paths=None):
        self.mode = mode
        self.known = dict(known or {})
        self.variant = variant
        self.tables = tables or {}  # analyzer index -> lookup table (apply mode)
        self.asset_paths = asset_paths or {}  # analyzer index -> asset path tensor
        self.partials = {}  # analyzer index -> partial accumulator (analyze mode)
        self.inputs = {}  # analyzer index -> the input values seen (discovery)
        self.vocab_of = {}  # id(returned vocabulary tensor) -> analyzer index
        self.kinds = {}  # analyzer index -> (kind, params)
        self.counter = 0

    def __enter__(self):
        if getattr(_STATE, "run", None) is not None:
            raise RuntimeError("a preprocessing_fn is already running in this thread")
        _STATE.run = self
        return self

    def __exit__(self, *exc):
        _STATE.run = None
        return False

    def next_index(self):
        index, self.counter = self.counter, self.counter + 1
        return index


def peek():
    """The Run in progress, or None (an eager call outside any preprocessing_fn run)."""
    return getattr(_STATE, "run", None)


def current():
    """The Run in progress; a clear error when an analyzer is called outside one."""
    run = getattr(_STATE, "run", None)
    if run is None:
        raise RuntimeError(
            "tft analyzers (tft.mean, tft.vocabulary, tft.scale_to_z_score, ...) can only be "
            "called inside a preprocessing_fn run by tensorlite.transform.beam "
            "(AnalyzeDataset / AnalyzeAndTransformDataset)")
    return run
