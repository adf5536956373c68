"""Issue 29's bounded fuzz target for the SavedModel reader: a small valid SavedModel (a
variable, a table read from an asset, one signature) whose `saved_model.pb` is mutated byte
by byte and field by field, then loaded and, when it loads, called. Only tensorlite's errors
(errors.OpError subclasses) or the ValueError/TypeError TensorFlow raises for bad arguments
may come out, and no input may allocate past the decompression cap (measured with
tracemalloc, under a cap lowered for the run).

Each target has a fixed example count and no per-example deadline (a few seconds in all);
the number of inputs tried is printed (`pytest -s`) and is part of every failure message.
Examples are derandomized, so CI runs the same inputs every time; TENSORLITE_FUZZ_EXAMPLES=N
runs N random ones per target instead.
"""
import os
import shutil
import traceback
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlite as tf
from tensorlite.framework import errors, size_limits
from tensorlite.saved_model.load import read_saved_model

CAP = 16 << 20  # the decompression cap during the run: no input may allocate more
# A longer, random run outside CI: TENSORLITE_FUZZ_EXAMPLES=5000 pytest -s this file.
_LONG = os.environ.get("TENSORLITE_FUZZ_EXAMPLES")
EXAMPLES = int(_LONG) if _LONG else 200
_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                     derandomize=not _LONG, suppress_health_check=list(HealthCheck))
FILE_OPS = ["ReadFile", "WriteFile", "InitializeTableFromTextFileV2", "MatchingFiles",
            "SaveV2", "RestoreV2", "MergeV2Checkpoints"]
OPS = FILE_OPS + ["StatefulPartitionedCall", "PartitionedCall", "Const", "Identity", "MatMul",
                  "NoOp", "LookupTableFindV2", "HashTableV2", "NoSuchOp", ""]


class Small(tf.Module):
    """A variable, a table initialized from an asset file, and a signature using both."""

    def __init__(self, vocab):
        super().__init__()
        self.w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        self.table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), default_value=-1)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                  tf.TensorSpec([None], tf.string, name="words")])
    def __call__(self, x, words):
        return {"y": tf.matmul(x, self.w), "ids": self.table.lookup(words)}


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """(directory of the valid SavedModel, its saved_model.pb bytes)."""
    root = tmp_path_factory.mktemp("fuzz_saved_model")
    (root / "vocab.txt").write_text("a\nb\n")
    tf.saved_model.save(Small(str(root / "vocab.txt")), str(root / "valid"))
    return root / "valid", (root / "valid" / "saved_model.pb").read_bytes()


@pytest.fixture
def target(original, tmp_path):
    """A copy of the valid SavedModel whose saved_model.pb each example overwrites."""
    shutil.copytree(original[0], tmp_path / "m")
    return tmp_path / "m"


def _allowed(exc):
    if isinstance(exc, (errors.OpError, ValueError, TypeError)):
        return True
    # TensorFlow's own error for a MetaGraphDef without the requested tags
    return isinstance(exc, RuntimeError) and "MetaGraphDef associated with tags" in str(exc)


def _load_and_call(directory):
    loaded = tf.saved_model.load(str(directory))
    for fn in getattr(loaded, "signatures", {}).values():
        fn(x=tf.ones([2, 3]), words=tf.constant(["a", "zz"]))


class Harness:
    """Runs one input under the lowered cap and tracemalloc; counts the inputs."""

    def __init__(self, directory, call=None):
        self.directory, self.count = directory, 0
        self.call = call or _load_and_call

    def run(self, data):
        self.count += 1
        (self.directory / "saved_model.pb").write_bytes(data)
        before = tracemalloc.get_traced_memory()[0]  # (hypothesis's own data stays out)
        tracemalloc.reset_peak()
        try:
            self.call(self.directory)
        except Exception as e:  # noqa: BLE001 - the test is which exceptions come out
            if not _allowed(e):
                where = "".join(traceback.format_exception(e)[-3:])
                raise AssertionError(f"input {self.count} ({len(data)} bytes) raised a raw "
                                     f"{type(e).__name__}: {e}\n{where}") from e
        peak = tracemalloc.get_traced_memory()[1] - before
        assert peak < 2 * CAP, f"input {self.count} allocated {peak} bytes, past the cap {CAP}"


@pytest.fixture
def harness(target):
    _load_and_call(target)  # first-use imports and caches stay out of the measure
    size_limits.set_decompression_cap(CAP)
    tracemalloc.start()
    try:
        yield Harness(target)
    finally:
        tracemalloc.stop()
        size_limits.set_decompression_cap(None)


def _report(name, harness, capsys):
    with capsys.disabled():  # shown in CI's log, not only with pytest -s
        print(f"\nfuzz {name}: {harness.count} inputs tried")
    assert harness.count >= EXAMPLES // 2, f"{name}: only {harness.count} inputs tried"


# -- target 1: the bytes ---------------------------------------------------------------------
def test_fuzz_saved_model_pb_bytes(original, harness, capsys):
    data = original[1]

    @_SETTINGS
    @given(flips=st.lists(st.tuples(st.integers(0, len(data) - 1), st.integers(0, 255)),
                          max_size=8),
           cut=st.integers(0, len(data)), insert=st.binary(max_size=16),
           at=st.integers(0, len(data)))
    def run(flips, cut, insert, at):
        mutated = bytearray(data)
        for position, value in flips:
            mutated[position] = value
        mutated = mutated[:at] + insert + mutated[at:]
        harness.run(bytes(mutated[:max(cut, len(mutated) // 2)]))
    try:
        run()
    except AssertionError as e:
        raise AssertionError(f"{e} (after {harness.count} inputs tried)") from None
    _report("saved_model.pb bytes", harness, capsys)


# -- target 2: the parsed proto's fields -----------------------------------------------------
def _pick(draw, items):
    return items[draw(st.integers(0, len(items) - 1))] if len(items) else None


def _mutate(draw, meta):
    """One field-level mutation of a MetaGraphDef (ids, inputs, ops, shapes, dtypes, calls,
    asset names), as a crafted file would make it."""
    graph, library = meta.object_graph_def, meta.graph_def.library.function
    fdef = _pick(draw, library)
    node = _pick(draw, fdef.node_def) if fdef is not None else None
    kind = draw(st.sampled_from(["child", "bound", "input", "op", "shape", "dtype", "call",
                                 "asset", "variable", "delete", "signature", "fname"]))
    ints = st.integers(-3, 40) | st.integers(-(1 << 31), (1 << 31) - 1)  # int32 fields
    dims = st.integers(-3, 40) | st.integers(-(1 << 40), 1 << 40)  # int64 fields
    if kind == "child" and len(graph.nodes) and graph.nodes[0].children:
        child = _pick(draw, _pick(draw, graph.nodes).children) or graph.nodes[0].children[0]
        child.node_id = draw(ints)
        child.local_name = draw(st.sampled_from([child.local_name, "__class__", "__dict__",
                                                 "signatures", "_trackable_children", ""]))
    elif kind == "bound" and graph.concrete_functions:
        saved = graph.concrete_functions[_pick(draw, sorted(graph.concrete_functions))]
        saved.bound_inputs.append(draw(ints))
    elif kind == "input" and node is not None:
        refs = [n.name + ":output:0" for n in fdef.node_def] + [
            a.name for a in fdef.signature.input_arg] + ["nope:output:0", "x:y:z", "", "^",
                                                          ":", "a:-1", node.name + ":out:99"]
        node.input.append(_pick(draw, refs))
    elif kind == "op" and node is not None:
        node.op = draw(st.sampled_from(OPS))
    elif kind in ("shape", "dtype") and node is not None and "value" in node.attr:
        tensor = node.attr["value"].tensor
        if kind == "shape":
            del tensor.tensor_shape.dim[:]
            for d in draw(st.lists(dims, max_size=4)):
                tensor.tensor_shape.dim.add(size=d)
            if draw(st.booleans()):
                tensor.tensor_content = draw(st.binary(max_size=24))
        else:
            tensor.dtype = draw(st.integers(0, 30))
    elif kind == "call" and node is not None:
        node.attr["f"].func.name = _pick(draw, [f.signature.name for f in library] + ["none"])
    elif kind == "asset" and meta.asset_file_def:
        meta.asset_file_def[0].filename = draw(st.sampled_from(
            ["../vocab.txt", "/etc/passwd", "", "a/b", ".", "..", "vocab.txt"]))
    elif kind == "variable":
        for obj in graph.nodes:
            if obj.WhichOneof("kind") == "variable":
                obj.variable.dtype = draw(st.integers(0, 30))
                obj.variable.shape.dim.add(size=draw(dims))
    elif kind == "delete" and node is not None:
        fdef.node_def.remove(node)
    elif kind == "signature" and graph.concrete_functions:
        saved = graph.concrete_functions[_pick(draw, sorted(graph.concrete_functions))]
        saved.canonicalized_input_signature.tuple_value.values.add().list_value.SetInParent()
    elif kind == "fname" and fdef is not None:
        fdef.signature.name = _pick(draw, [f.signature.name for f in library] + ["x"])


def test_fuzz_saved_model_proto_fields(original, harness, capsys):
    model = read_saved_model(str(original[0]))

    @_SETTINGS
    @given(data=st.data())
    def run(data):
        mutated = type(model)()
        mutated.CopyFrom(model)
        for _ in range(data.draw(st.integers(1, 4))):
            _mutate(data.draw, mutated.meta_graphs[0])
        harness.run(mutated.SerializeToString())
    try:
        run()
    except AssertionError as e:
        raise AssertionError(f"{e} (after {harness.count} inputs tried)") from None
    _report("SavedModel proto fields", harness, capsys)


def test_the_harness_reports_a_raw_exception(target, monkeypatch):
    """The harness is no catch-all: a loader failing with a raw KeyError fails it."""
    def broken(path):
        raise KeyError("a raw lookup failure")
    monkeypatch.setattr(tf.saved_model, "load", broken)
    harness = Harness(target)
    tracemalloc.start()
    try:
        with pytest.raises(AssertionError, match="input 1 .* raw KeyError"):
            harness.run(b"")
    finally:
        tracemalloc.stop()
    assert not _allowed(RecursionError()) and _allowed(errors.DataLossError(None, None, "x"))


# -- target 3: a TF1 SavedModel's graph (no object graph; signatures over tensors) -----------
TF1 = os.path.join(os.path.dirname(__file__), "..", "fixtures", "serving", "tf1", "linear",
                   "1")


def _tf1_example():
    from tensorlite.train import example as ex
    feats = ex.Features()
    feats.feature["x"].float_list.value.extend([1.0, 2.0, 3.0])
    feats.feature["k"].int64_list.value.extend([1])
    return ex.Example(features=feats).SerializeToString()


def _call_tf1(directory):
    loaded = tf.saved_model.load(str(directory))
    batch = tf.constant(np.array([_tf1_example()], object))
    for fn in loaded.signatures.values():
        fn(**{key: batch for key in fn.structured_input_signature[1]})


def _mutate_tf1(draw, meta):
    """One field-level mutation of a TF1 MetaGraphDef: a node's input, op or constant
    shape, or a signature's tensor name."""
    nodes = meta.graph_def.node
    node = nodes[draw(st.integers(0, len(nodes) - 1))]
    kind = draw(st.sampled_from(["input", "op", "shape", "signature"]))
    if kind == "input":
        names = [n.name for n in nodes] + ["nope", "x:y", "a:-1", ""]
        ref = names[draw(st.integers(0, len(names) - 1))]
        node.input.append(ref + draw(st.sampled_from(["", ":0", ":7"])))
    elif kind == "op":
        node.op = draw(st.sampled_from(OPS + ["Placeholder", "VarHandleOp", "ParseExampleV2"]))
    elif kind == "shape" and "value" in node.attr:
        tensor = node.attr["value"].tensor
        tensor.tensor_shape.dim.add(size=draw(st.integers(-3, 1 << 40)))
    elif kind == "signature":
        sig = meta.signature_def[sorted(meta.signature_def)[0]]
        info = sig.outputs[sorted(sig.outputs)[0]] if draw(st.booleans()) else \
            sig.inputs[sorted(sig.inputs)[0]]
        info.name = draw(st.sampled_from([n.name for n in nodes][:20] + ["x:y", "", ":", "q:1"]))


def test_fuzz_tf1_saved_model_graph(tmp_path, capsys):
    shutil.copytree(TF1, tmp_path / "tf1")
    model = read_saved_model(str(tmp_path / "tf1"))
    harness = Harness(tmp_path / "tf1", _call_tf1)
    _call_tf1(tmp_path / "tf1")  # first-use imports and caches stay out of the measure
    size_limits.set_decompression_cap(CAP)
    tracemalloc.start()

    @_SETTINGS
    @given(data=st.data())
    def run(data):
        mutated = type(model)()
        mutated.CopyFrom(model)
        for _ in range(data.draw(st.integers(1, 3))):
            _mutate_tf1(data.draw, mutated.meta_graphs[0])
        harness.run(mutated.SerializeToString())
    try:
        run()
    except AssertionError as e:
        raise AssertionError(f"{e} (after {harness.count} inputs tried)") from None
    finally:
        tracemalloc.stop()
        size_limits.set_decompression_cap(None)
    _report("TF1 SavedModel graph", harness, capsys)
