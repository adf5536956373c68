"""The profiler's one installation point in tf.data (data/tracing.py): iterators run their
plain `next` while no profiler runs, and report "data" spans as soon as one starts, also
iterators made before it started (Keras's TensorBoard starts profiling at a later batch)."""
import tensorlite as tf
from tensorlite.data import tracing
from tensorlite.data.iterator import OwnedIterator, RawIterator
from tensorlite.profiler import collector


def _iterator_classes():
    todo, seen = [RawIterator], []
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in seen if "next" in c.__dict__ and c is not RawIterator]


def _spans(c, kind):
    return [e for buf in c.buffers for e in buf.events if e[0] == kind]


def _pipeline():
    return (tf.data.Dataset.range(12).map(lambda x: x + 1).filter(lambda x: x % 2 == 0)
            .batch(2))


def test_no_profiler_means_plain_next_on_every_iterator_class():
    list(_pipeline())  # imports the lazily loaded stages too
    classes = _iterator_classes()
    assert len(classes) > 20
    for cls in classes:
        assert not hasattr(cls.__dict__["next"], "__wrapped__"), cls
    assert OwnedIterator.__dict__["__next__"] is not OwnedIterator.__dict__["_traced_next"]


def test_profiler_swaps_traced_next_in_and_back_out():
    list(_pipeline())
    c = collector.install()
    try:
        for cls in _iterator_classes():
            traced = hasattr(cls.__dict__["next"], "__wrapped__")
            assert traced == getattr(cls, "_profiled", True), cls
        assert OwnedIterator.__next__ is OwnedIterator._traced_next
    finally:
        collector.uninstall()
    for cls in _iterator_classes():
        assert not hasattr(cls.__dict__["next"], "__wrapped__"), cls
    assert c is not None


def test_iterator_made_before_the_profiler_started_reports_spans():
    it = iter(_pipeline())
    first = next(it)  # iterating before the profiler starts
    c = collector.install()
    try:
        rest = list(it)
    finally:
        collector.uninstall()
    assert [b.numpy().tolist() for b in [first, *rest]] == [[2, 4], [6, 8], [10, 12]]
    stages = {e[1] for e in _spans(c, "data")}
    assert {"Range", "Batch(2)"} <= stages and any(s.startswith("Map(") for s in stages)
    # the consumer's waits: one per element taken while profiling, plus the end
    assert len(_spans(c, "input")) == len(rest) + 1
    after = len(_spans(c, "data"))
    list(_pipeline())  # the profiler stopped: nothing more is recorded
    assert len(_spans(c, "data")) == after


def test_a_stage_span_nests_its_upstream_stages_on_the_same_thread():
    c = collector.install()
    try:
        list(tf.data.Dataset.range(3).map(lambda x: x * 2))
    finally:
        collector.uninstall()
    spans = _spans(c, "data")
    maps = [e for e in spans if e[1].startswith("Map(")]
    ranges = [e for e in spans if e[1] == "Range"]
    assert len(maps) == 4 and len(ranges) == 4  # three elements and the end of sequence
    for m, r in zip(maps, ranges):
        assert m[2] <= r[2] and r[2] + r[3] <= m[2] + m[3]
    assert maps[-1][5].get("end_of_sequence") is True


def test_collector_reads_the_running_collector():
    assert tracing.collector() is None
    c = collector.install()
    try:
        assert tracing.collector() is c
    finally:
        collector.uninstall()
    assert tracing.collector() is None


def test_a_class_made_while_profiling_is_traced_and_then_untraced():
    c = collector.install()
    try:
        class Late(RawIterator):
            def next(self):
                raise StopIteration

        assert hasattr(Late.__dict__["next"], "__wrapped__")
    finally:
        collector.uninstall()
    assert not hasattr(Late.__dict__["next"], "__wrapped__")
    assert c is not None
