"""The ops tf.Transform's text mappers trace to, in one tf.function written once for both
tensorlite and real TensorFlow (`tf` is either module): each side saves it, loads the
other's, and reports `run(tf, loaded)`. Sizes follow the batch: the function is called on
other batches than any trace saw, with empty documents."""

TEXTS = ["b a b c", "", "c c", "a b c d e", ""]
IDS = [3, 0, 7, 1, 2, 9]


def module(tf):
    class Ops(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string),
                                      tf.TensorSpec([None], tf.int64)])
        def ops(self, text, ids):
            words = tf.strings.split(text)
            st = words.to_sparse()  # RaggedTensorToSparse
            rowids = words.value_rowids()  # RaggedValueRowIds (a composition in TF)
            nrows = words.nrows()
            uniq, idx = tf.unique(st.values)
            n = tf.size(rowids, out_type=tf.int64)
            where = tf.where(ids > 2)
            return {
                "indices": st.indices, "dense_shape": st.dense_shape, "rowids": rowids,
                "unique": uniq, "idx": idx,
                "joined": tf.strings.join([st.values, tf.gather(uniq, idx)], separator="+"),
                "per_row": tf.math.unsorted_segment_sum(tf.ones_like(rowids), rowids, nrows),
                "first": tf.math.unsorted_segment_min(tf.range(n), rowids, nrows),
                "where": where,
                "dense": tf.sparse.to_dense(tf.SparseTensor(st.indices, idx, st.dense_shape)),
                "picked": tf.gather_nd(tf.reshape(ids, [-1, 1]), where[:, :1]),
                "range": tf.range(tf.size(ids)),
            }
    return Ops()


def run(tf, loaded):
    """Each output as a list (bytes decoded), on two batches."""
    out = {}
    for k, (texts, ids) in enumerate([(TEXTS, IDS), (TEXTS[1:4], IDS[:2])]):
        got = loaded.ops(tf.constant(texts), tf.constant(ids, tf.int64))
        for name, value in got.items():
            v = value.numpy().tolist()
            out[f"{name}_{k}"] = _decoded(v)
    return out


def _decoded(v):
    if isinstance(v, list):
        return [_decoded(x) for x in v]
    return v.decode() if isinstance(v, bytes) else v
