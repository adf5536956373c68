"""tf.functions with ragged arguments and outputs, written once for tensorlite and real
TensorFlow (`tf` is either module): each side saves `module(tf)`, loads the other's and
reports `run(tf, loaded)`. TensorFlow's side adds a function on a SparseTensor (tensorlite
reads those; it does not write them yet)."""

ROWS = [[1.0, 2.0], [], [3.0, 4.0, 5.0]]
NESTED = [[[1, 2], []], [[3]], []]


def module(tf):
    spec = tf.RaggedTensorSpec([None, None], tf.float32, ragged_rank=1,
                               row_splits_dtype=tf.int64)

    class Ragged(tf.Module):
        @tf.function(input_signature=[spec])
        def double(self, x):
            return x * 2.0

        @tf.function(input_signature=[spec])
        def row_sums(self, x):
            return {"sum": tf.reduce_sum(x, axis=1), "max": tf.reduce_max(x, axis=1),
                    "rows": x.nrows()}

        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None, None], tf.int32,
                                                          ragged_rank=2,
                                                          row_splits_dtype=tf.int64)])
        def nested_plus_one(self, x):
            return x + 1

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def words(self, text):
            return tf.strings.split(text)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def tokens(self, text):
            words = tf.strings.split(text)
            return {"ragged": words, "sparse": words.to_sparse(), "rows": words.nrows()}
    return Ragged()


def signatures(m):
    """The signatures both sides save: ragged components in, a ragged and a sparse out."""
    return {"serving_default": m.row_sums.get_concrete_function(),
            "tokens": m.tokens.get_concrete_function()}


def sparse_module(tf):
    class Sparse(tf.Module):
        @tf.function(input_signature=[tf.SparseTensorSpec([None, 4], tf.float32)])
        def triple(self, s):
            return tf.sparse.map_values(tf.multiply, s, 3.0)
    return Sparse()


def run(tf, loaded):
    """Each function's outputs as lists, on inputs of other sizes than any trace's."""
    ragged = loaded.double(tf.ragged.constant(ROWS))
    sums = loaded.row_sums(tf.ragged.constant(ROWS))
    nested = loaded.nested_plus_one(tf.ragged.constant(NESTED, dtype=tf.int32))
    words = loaded.words(tf.constant(["a bb a", "", "c"]))
    serving = loaded.signatures["serving_default"](
        x=tf.constant([1.0, 2.0, 3.0]), x_1=tf.constant([0, 1, 1, 3], tf.int64))
    texts = tf.constant(["a bb a", "", "c", "d e"])
    tokens = {"function": loaded.tokens(texts),
              "signature": loaded.signatures["tokens"](text=texts)}
    return {"tokens": {k: _tokens(v) for k, v in tokens.items()},
            "double": ragged.to_list(), "double_type": type(ragged).__name__,
            "sum": sums["sum"].numpy().tolist(), "max": sums["max"].numpy().tolist(),
            "rows": int(sums["rows"]), "nested": nested.to_list(),
            "words": [[w.decode() for w in row] for row in words.to_list()],
            "serving": {k: v.numpy().tolist() for k, v in serving.items()}}


def run_sparse(tf, loaded):
    out = loaded.triple(tf.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [3, 4]))
    return {"indices": out.indices.numpy().tolist(), "values": out.values.numpy().tolist(),
            "dense_shape": out.dense_shape.numpy().tolist(), "type": type(out).__name__}


def _tokens(out):
    sparse = out["sparse"]
    return {"ragged": [[w.decode() for w in row] for row in out["ragged"].to_list()],
            "types": [type(out["ragged"]).__name__, type(sparse).__name__],
            "indices": sparse.indices.numpy().tolist(),
            "values": [v.decode() for v in sparse.values.numpy().tolist()],
            "dense_shape": sparse.dense_shape.numpy().tolist(), "rows": int(out["rows"])}
