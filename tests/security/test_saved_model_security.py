"""Issue 29, SavedModel: a loaded graph touches only the SavedModel's own assets/ and
variables/, and a crafted saved_model.pb never makes the loader allocate what its bytes do
not hold or fail with a raw Python exception.

Every crafted model is a normal one written by tf.saved_model.save, then edited through the
SavedModel proto; each edit is checked to load (or run) before the edit where that proves the
test could fail."""
import os

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors, size_limits
from tensorlite.saved_model.file_access import Roots
from tensorlite.saved_model.function_runner import Runner
from tensorlite.saved_model.load import read_saved_model
from tests.saved_model_helpers import AssetReader, Scorer, Tables, write_vocab_file
from tests.security.conftest import tree_state

SECRET = b"root:x:0:0:the secret line\n"
DT_FLOAT, DT_STRING = 1, 7


# -- helpers ----------------------------------------------------------------------------------
@pytest.fixture
def secret(tmp_path):
    """A file outside every SavedModel, standing in for /etc/passwd."""
    path = tmp_path / "secret.txt"
    path.write_bytes(SECRET)
    return path


def _tables(tmp_path):
    vocab = write_vocab_file(tmp_path / "vocab.txt")
    export = tmp_path / "tables"
    tf.saved_model.save(Tables(vocab), str(export))
    return export


def _reader(tmp_path):
    export = tmp_path / "reader"
    tf.saved_model.save(AssetReader(write_vocab_file(tmp_path / "words.txt")), str(export))
    return export


def _scorer(tmp_path):
    export = tmp_path / "scorer"
    tf.saved_model.save(Scorer(), str(export))
    return export


def _edit(export, change):
    """Rewrites export/saved_model.pb after `change(meta)` edits its MetaGraphDef."""
    model = read_saved_model(str(export))
    change(model.meta_graphs[0])
    (export / "saved_model.pb").write_bytes(model.SerializeToString())


def _function(meta, part):
    (fdef,) = [f for f in meta.graph_def.library.function if part in f.signature.name]
    return fdef


def _node(fdef, op):
    (node,) = [n for n in fdef.node_def if n.op == op]
    return node


def _string_const(fdef, name, value):
    node = fdef.node_def.add(name=name, op="Const")
    node.attr["dtype"].type = DT_STRING
    tensor = node.attr["value"].tensor
    tensor.dtype = DT_STRING
    tensor.string_val.append(os.fsencode(value))
    return f"{name}:output:0"


def _load_refused(export, error, match):
    with pytest.raises(error, match=match) as info:
        tf.saved_model.load(str(export))
    assert SECRET.decode() not in str(info.value)
    return info.value


# -- item 2: file ops may only touch the SavedModel's own files -------------------------------
def test_a_table_initializer_reading_a_constant_path_is_refused_at_load(tmp_path, secret):
    export = _tables(tmp_path)
    assert tf.saved_model.load(str(export))(tf.constant([b"cat"]))["text"].numpy() == [1]

    def point_at_secret(meta):
        init = _function(meta, "initializer_9")
        node = _node(init, "InitializeTableFromTextFileV2")
        node.input[1] = _string_const(init, "evil", secret)
    _edit(export, point_at_secret)
    _load_refused(export, errors.PermissionDeniedError, "InitializeTableFromTextFileV2")


def test_the_model_server_refuses_to_load_it(tmp_path, secret):
    from tensorlite.serving.servable import load_servable
    export = _tables(tmp_path)
    assert load_servable(str(export)).signatures["serving_default"].run(
        {"words": np.array([b"sat"])})["text"].tolist() == [2]

    def point_at_secret(meta):
        init = _function(meta, "initializer_9")
        _node(init, "InitializeTableFromTextFileV2").input[1] = _string_const(
            init, "evil", secret)
    _edit(export, point_at_secret)
    with pytest.raises(errors.PermissionDeniedError, match="text_file_init") as info:
        load_servable(str(export))
    assert SECRET.decode() not in str(info.value)


def test_the_model_server_reports_the_refusal_and_serves_nothing(tmp_path, secret):
    """Through the server's version manager (what answers :predict): the crafted version
    never becomes available, its status says PERMISSION_DENIED, and no request can reach
    the secret."""
    from tensorlite.serving.config import ModelSpec
    from tensorlite.serving.manager import ServedModel
    from tensorlite.serving.servable import load_servable
    export = _tables(tmp_path)

    def point_at_secret(meta):
        init = _function(meta, "initializer_9")
        _node(init, "InitializeTableFromTextFileV2").input[1] = _string_const(
            init, "evil", secret)
    _edit(export, point_at_secret)
    os.makedirs(tmp_path / "served")
    os.rename(export, tmp_path / "served" / "1")
    model = ServedModel(ModelSpec("m", str(tmp_path / "served")), loader=load_servable)
    model.poll(wait=True)
    model.poll(wait=True)  # (a version loads once its directory is unchanged for a poll)
    (status,) = model.status()["model_version_status"]
    assert status["status"]["error_code"] == "PERMISSION_DENIED", status
    assert SECRET.decode() not in str(status)
    with pytest.raises(errors.NotFoundError, match="Servable not found"):
        model.get()


@pytest.mark.parametrize("filename", ["../../secret.txt", "../vocab_link.txt",
                                      "/etc/passwd"])
def test_an_asset_filename_leaving_assets_is_refused(tmp_path, secret, filename):
    """(NotFoundError, as tests/interop/test_text_savedmodel_interop.py expects: an asset is
    a plain file name in assets/.)"""
    export = _tables(tmp_path)
    os.symlink(secret, tmp_path / "vocab_link.txt")

    def escape(meta):
        meta.asset_file_def[0].filename = filename
    _edit(export, escape)
    _load_refused(export, errors.NotFoundError, "is not a file in .*assets")


def test_an_asset_that_is_a_symlink_out_of_assets_is_refused(tmp_path, secret):
    export = _tables(tmp_path)
    os.remove(export / "assets" / "vocab.txt")
    os.symlink(secret, export / "assets" / "vocab.txt")
    _load_refused(export, errors.PermissionDeniedError, "asset 'vocab.txt' would read")


def test_a_symlinked_assets_directory_is_not_trusted(tmp_path, secret):
    export = _reader(tmp_path)
    outside = tmp_path / "elsewhere"
    os.rename(export / "assets", outside)
    os.symlink(outside, export / "assets")
    _load_refused(export, errors.PermissionDeniedError, "asset 'words.txt' would read")


def test_read_file_of_a_constant_path_is_refused(tmp_path, secret):
    export = _reader(tmp_path)
    assert tf.saved_model.load(str(export)).read()["contents"].numpy() == b"the\ncat\nsat\n"

    def read_secret(meta):
        fdef = _function(meta, "__inference_read")
        _node(fdef, "ReadFile").input[0] = _string_const(
            fdef, "evil", str(export / "assets" / ".." / ".." / "secret.txt"))
    _edit(export, read_secret)
    _load_refused(export, errors.PermissionDeniedError, "'ReadFile'")


def test_a_path_computed_at_run_time_is_refused_at_load(tmp_path, secret):
    export = _reader(tmp_path)

    def computed(meta):
        fdef = _function(meta, "__inference_read")
        read = _node(fdef, "ReadFile")
        join = fdef.node_def.add(name="join", op="StringJoin")
        join.input.extend([read.input[0], _string_const(fdef, "up", "/../../secret.txt")])
        join.attr["N"].i = 2
        read.input[0] = "join:output:0"
    _edit(export, computed)
    _load_refused(export, errors.PermissionDeniedError, "computed at run time")


def test_the_run_time_check_refuses_a_path_outside_and_allows_the_asset(tmp_path, secret):
    export = _reader(tmp_path)
    meta = read_saved_model(str(export)).meta_graphs[0]
    runner = Runner(meta.graph_def.library, Roots(str(export)))
    read = _node(_function(meta, "__inference_read"), "ReadFile")
    inside = tf.constant(os.fsencode(export / "assets" / "words.txt"))
    assert runner.node(read, [inside], "f")[0].numpy() == b"the\ncat\nsat\n"
    for path in (secret, export / "assets" / ".." / ".." / "secret.txt"):
        with pytest.raises(errors.PermissionDeniedError, match="ReadFile"):
            runner.node(read, [tf.constant(os.fsencode(path))], "f")
    with pytest.raises(errors.PermissionDeniedError):  # a runner without a directory
        Runner(meta.graph_def.library).node(read, [inside], "f")


@pytest.mark.parametrize("op,index,n_inputs", [("WriteFile", 0, 2), ("SaveV2", 0, 4),
                                               ("MergeV2Checkpoints", 1, 2),
                                               ("MatchingFiles", 0, 1)])
def test_file_ops_naming_paths_outside_are_refused_and_write_nothing(tmp_path, canary, op,
                                                                     index, n_inputs):
    export = _reader(tmp_path)
    before = tree_state(tmp_path)

    def add_op(meta):
        fdef = _function(meta, "__inference_read")
        node = fdef.node_def.add(name="evil_op", op=op)
        args = [_string_const(fdef, f"arg{i}", export / "variables" / "x")
                for i in range(n_inputs)]
        args[index] = _string_const(fdef, "target", canary)
        node.input.extend(args)
    _edit(export, add_op)
    before[os.path.relpath(export / "saved_model.pb", tmp_path)] = tree_state(export)[
        "saved_model.pb"]
    _load_refused(export, errors.PermissionDeniedError, f"'evil_op' \\({op}\\)")
    assert tree_state(tmp_path) == before


def test_a_write_into_variables_passes_the_load_check(tmp_path):
    """The saver's own writes (into variables/) are not refused at load; tensorlite has no
    WriteFile import rule, so running it is UnimplementedError, never a write elsewhere."""
    export = _reader(tmp_path)

    def add_write(meta):
        fdef = _function(meta, "__inference_read")
        node = fdef.node_def.add(name="save_op", op="WriteFile")
        node.input.extend([_string_const(fdef, "p", export / "variables" / "x"),
                           _string_const(fdef, "c", "data")])
    _edit(export, add_write)
    tf.saved_model.load(str(export))


def test_a_file_op_reached_through_a_call_is_checked_with_the_callers_constant(tmp_path,
                                                                              secret):
    export = _reader(tmp_path)

    def through_call(meta):
        wrapper = _function(meta, "signature_wrapper")
        call = _node(wrapper, "StatefulPartitionedCall")
        call.input[0] = _string_const(wrapper, "evil", secret)
    _edit(export, through_call)
    _load_refused(export, errors.PermissionDeniedError, "ReadFile")


# -- item 5: allocation bombs -----------------------------------------------------------------
def _add_const(meta, setup):
    fdef = _function(meta, "__inference_read")
    node = fdef.node_def.add(name="bomb", op="Const")
    tensor = node.attr["value"].tensor
    setup(tensor)
    node.attr["dtype"].type = tensor.dtype


def _shape(tensor, dims, dtype=DT_FLOAT):
    tensor.dtype = dtype
    for d in dims:
        tensor.tensor_shape.dim.add(size=d)


def test_a_60_byte_constant_claiming_80000_by_80000_floats_is_data_loss(tmp_path):
    export = _reader(tmp_path)

    def bomb(tensor):
        _shape(tensor, [80000, 80000])
        tensor.tensor_content = b"\0" * 60
    _edit(export, lambda meta: _add_const(meta, bomb))
    _load_refused(export, errors.DataLossError, "saved_model.pb.*bomb.*60 bytes")


def test_a_splat_constant_expanding_past_the_cap_is_resource_exhausted(tmp_path):
    export = _reader(tmp_path)

    def bomb(tensor):
        _shape(tensor, [80000, 80000])
        tensor.float_val.append(1.0)
    _edit(export, lambda meta: _add_const(meta, bomb))
    _load_refused(export, errors.ResourceExhaustedError, "saved_model.pb.*bomb")


def test_a_string_splat_past_the_cap_is_resource_exhausted(tmp_path):
    export = _reader(tmp_path)

    def bomb(tensor):
        _shape(tensor, [1 << 20, 1 << 20], DT_STRING)
        tensor.string_val.append(b"x")
    _edit(export, lambda meta: _add_const(meta, bomb))
    _load_refused(export, errors.ResourceExhaustedError, "bomb")


def test_the_splat_cap_is_the_configured_one(tmp_path):
    export = _reader(tmp_path)

    def splat(tensor):
        _shape(tensor, [1000, 1000])  # 4 MB of one repeated float
        tensor.float_val.append(2.0)
    _edit(export, lambda meta: _add_const(meta, splat))
    tf.saved_model.load(str(export))  # under the default cap: loads
    size_limits.set_decompression_cap(1 << 20)
    try:
        _load_refused(export, errors.ResourceExhaustedError, "TENSORLITE_MAX_DECOMPRESSED")
    finally:
        size_limits.set_decompression_cap(None)


def test_a_constant_with_a_negative_dimension_is_data_loss(tmp_path):
    export = _reader(tmp_path)
    _edit(export, lambda meta: _add_const(meta, lambda t: _shape(t, [-5, 3])))
    _load_refused(export, errors.DataLossError, "negative dimension")


def test_a_variable_claiming_more_than_its_saved_bytes_is_data_loss(tmp_path):
    export = _scorer(tmp_path)
    tf.saved_model.load(str(export))

    def huge(meta):
        (var,) = [n.variable for n in meta.object_graph_def.nodes
                  if n.WhichOneof("kind") == "variable" and n.variable.name == "w"]
        del var.shape.dim[:]
        var.shape.dim.add(size=80000)
        var.shape.dim.add(size=80000)
    _edit(export, huge)
    _load_refused(export, errors.DataLossError, "variable 'w'.*80000")


# -- item 5: structural corruption ------------------------------------------------------------
def _corrupt_child(node_id):
    def change(meta):
        meta.object_graph_def.nodes[0].children[0].node_id = node_id
    return change


def _corrupt_bound(meta):
    name = next(iter(meta.object_graph_def.concrete_functions))
    meta.object_graph_def.concrete_functions[name].bound_inputs.append(10_000)


def _dangling_input(meta):
    fdef = _function(meta, "__inference_call_")
    fdef.node_def[0].input.append("no_such_node:output:0")


def _self_call(meta):
    fdef = _function(meta, "__inference_call_")
    call = fdef.node_def.add(name="again", op="StatefulPartitionedCall")
    call.attr["f"].func.name = fdef.signature.name


def _mutual_call(meta):
    first = _function(meta, "__inference_call_")
    second = _function(meta, "__inference_features")
    for a, b in ((first, second), (second, first)):
        call = a.node_def.add(name="other", op="PartitionedCall")
        call.attr["f"].func.name = b.signature.name


def _node_cycle(meta):
    fdef = _function(meta, "__inference_call_")
    a = fdef.node_def.add(name="cyc_a", op="Identity", input=["cyc_b:output:0"])
    fdef.node_def.add(name="cyc_b", op="Identity", input=[f"{a.name}:output:0"])


def _deep_calls(meta):
    """A chain of 100 functions, each calling the next (no cycle, but deeper than any walk
    of the library may recurse)."""
    first = _function(meta, "__inference_call_")
    previous = first
    for i in range(100):
        fdef = meta.graph_def.library.function.add()
        fdef.signature.name = f"chain_{i}"
        call = previous.node_def.add(name=f"to_chain_{i}", op="PartitionedCall")
        call.attr["f"].func.name = fdef.signature.name
        previous = fdef


def _missing_function(meta):
    for node in meta.object_graph_def.nodes:
        if node.WhichOneof("kind") == "function":
            node.function.concrete_functions.append("__inference_nowhere_99")
            return


def _dunder_child(meta):
    meta.object_graph_def.nodes[0].children[0].local_name = "__class__"


@pytest.mark.parametrize("change,match", [
    (_corrupt_child(10_000), "node id 10000"), (_corrupt_child(-1), "node id -1"),
    (_corrupt_bound, "binds node 10000"), (_dangling_input, "no_such_node"),
    (_self_call, "cycle"), (_mutual_call, "cycle"), (_node_cycle, "cyc_a"),
    (_deep_calls, "101 deep"),
    (_missing_function, "__inference_nowhere_99"), (_dunder_child, "__class__")],
    ids=["child-id-high", "child-id-negative", "bound-input", "dangling-input", "self-call",
         "mutual-call", "node-cycle", "deep-calls", "missing-function", "dunder-child"])
def test_structural_corruption_is_data_loss(tmp_path, change, match):
    export = _scorer(tmp_path)
    tf.saved_model.load(str(export))
    _edit(export, change)
    _load_refused(export, errors.DataLossError, match)


def test_missing_and_garbage_saved_model_pb(tmp_path):
    export = _scorer(tmp_path)
    os.remove(export / "saved_model.pb")
    _load_refused(export, errors.NotFoundError, "saved_model.pb")
    (export / "saved_model.pb").write_bytes(b"\xff\xfe garbage \x00" * 7)
    _load_refused(export, errors.DataLossError, "saved_model.pb")
    os.remove(export / "saved_model.pb")
    os.mkdir(export / "saved_model.pb")
    _load_refused(export, errors.DataLossError, "saved_model.pb")


def test_missing_variables_index_is_data_loss(tmp_path):
    export = _scorer(tmp_path)
    os.remove(export / "variables" / "variables.index")
    _load_refused(export, errors.DataLossError, "variables.index")


def test_a_variables_file_that_is_a_symlink_out_is_refused(tmp_path, secret):
    export = _scorer(tmp_path)
    data = export / "variables" / "variables.data-00000-of-00001"
    os.rename(data, tmp_path / "moved.data")
    os.symlink(tmp_path / "moved.data", data)
    _load_refused(export, errors.PermissionDeniedError, "variables.data")


# -- TF1 SavedModels (no object graph: signatures over the main graph) -----------------------
TF1_FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "serving", "tf1",
                           "linear", "1")


def test_a_tf1_signature_reading_a_constant_path_is_refused_at_load(tmp_path, secret):
    import shutil
    export = tmp_path / "tf1"
    shutil.copytree(TF1_FIXTURE, export)
    loaded = tf.saved_model.load(str(export))
    key = sorted(loaded.signatures)[0]

    def leak(meta):
        path = meta.graph_def.node.add(name="evil_path", op="Const")
        path.attr["dtype"].type = DT_STRING
        path.attr["value"].tensor.dtype = DT_STRING
        path.attr["value"].tensor.string_val.append(os.fsencode(secret))
        read = meta.graph_def.node.add(name="evil_read", op="ReadFile", input=["evil_path"])
        assert read.name == "evil_read"
        out = meta.signature_def[key].outputs["leak"]
        out.name, out.dtype = "evil_read:0", DT_STRING
    _edit(export, leak)
    _load_refused(export, errors.PermissionDeniedError, "'evil_read' \\(ReadFile\\)")


def test_a_tf1_asset_constant_reads_the_saved_models_copy(tmp_path, secret):
    """TensorFlow feeds a TF1 asset constant with its file's path in assets/: the constant's
    own value (the path at export time, here the secret) is never read."""
    import shutil
    export = tmp_path / "tf1"
    shutil.copytree(TF1_FIXTURE, export)
    os.mkdir(export / "assets")
    (export / "assets" / "vocab.txt").write_bytes(b"own copy\n")

    def with_asset(meta):
        path = meta.graph_def.node.add(name="asset_path", op="Const")
        path.attr["dtype"].type = DT_STRING
        path.attr["value"].tensor.dtype = DT_STRING
        path.attr["value"].tensor.string_val.append(os.fsencode(secret))
        meta.graph_def.node.add(name="read_asset", op="ReadFile", input=["asset_path"])
        asset = meta.asset_file_def.add(filename="vocab.txt")
        asset.tensor_info.name, asset.tensor_info.dtype = "asset_path:0", DT_STRING
        out = meta.signature_def["read_asset"].outputs["contents"]
        out.name, out.dtype = "read_asset:0", DT_STRING
    _edit(export, with_asset)
    fn = tf.saved_model.load(str(export)).signatures["read_asset"]
    assert fn()["contents"].numpy() == b"own copy\n"


def test_a_constant_path_inside_assets_is_allowed(tmp_path):
    """The check refuses paths outside, not constants: a Const naming the SavedModel's own
    asset loads and reads it."""
    export = _reader(tmp_path)

    def own_file(meta):
        fdef = _function(meta, "__inference_read")
        _node(fdef, "ReadFile").input[0] = _string_const(
            fdef, "own", export / "assets" / "words.txt")
    _edit(export, own_file)
    assert tf.saved_model.load(str(export)).read()["contents"].numpy() == b"the\ncat\nsat\n"


def test_the_runner_stops_a_recursive_call_chain_without_recursion_error(tmp_path):
    """Defence in depth behind the load check: a runner given a self-calling function
    (bypassing load) stops it with DataLossError, not Python's RecursionError."""
    meta = read_saved_model(str(_scorer(tmp_path))).meta_graphs[0]
    fdef = meta.graph_def.library.function.add()
    fdef.signature.name = "loop"
    call = fdef.node_def.add(name="again", op="PartitionedCall")
    call.attr["f"].func.name = "loop"
    fdef.signature.output_arg.add(name="out", type=DT_FLOAT)
    fdef.ret["out"] = "again:output:0"
    with pytest.raises(errors.DataLossError, match="deeper than"):
        Runner(meta.graph_def.library).run("loop", [])
