"""tf.Transform's text mappers: `tft.ngrams`, `tft.bag_of_words` and `tft.tfidf`, with the
semantics of tf.Transform's documentation (quoted in each docstring).

They take a 2-D SparseTensor (as tf.Transform; its entries in row-major order, as
tf.strings.split(...).to_sparse() and tf.sparse.reorder give them) or RaggedTensor of tokens
/ term ids, one row per document, and return SparseTensors whose indices are [row, position
in the row's output]. They are written in tensor ops only, so the same code runs eagerly,
in the analysis pass on Beam (tfidf's document frequencies are a full-pass analyzer, summed
exactly over the workers) and inside the transform graph, where every size follows the
batch: row ids (RaggedValueRowIds), per-row positions (RaggedTensorToSparse), distinct
values (Unique) and segment reductions whose number of segments is a tensor.
"""
import numpy as np

import tensorlite as tf
from tensorlite.framework import errors
from tensorlite.transform import analyzers, context


def _token_bytes(token):
    return token if isinstance(token, bytes) else str(token).encode("utf-8")


def _flat(x, what):
    """(values, int64 row id of each value, int64 number of rows) of a 2-D SparseTensor /
    RaggedTensor."""
    if isinstance(x, tf.SparseTensor):
        if x.indices.shape[-1] is not None and x.indices.shape[-1] != 2:
            raise ValueError(f"tft.{what}: the input must be a 2-D SparseTensor, got rank "
                             f"{x.indices.shape[-1]}")
        if tf.executing_eagerly():  # (a graph trusts the order, as tf.Transform's)
            _check_row_major(x.indices.numpy(), what)
        return x.values, x.indices[:, 0], x.dense_shape[0]
    if isinstance(x, tf.RaggedTensor):
        if x.ragged_rank != 1 or x.flat_values.shape.rank != 1:
            raise ValueError(f"tft.{what}: the input must be a 2-D RaggedTensor [rows, "
                             "(tokens)]")
        return x.values, x.value_rowids(), x.nrows()
    raise ValueError(f"tft.{what}: the input must be a 2-D SparseTensor (or RaggedTensor), "
                     f"got {type(x).__name__}")


def _check_row_major(indices, what):
    rows, cols = indices[:, 0], indices[:, 1]
    step_ok = (np.diff(rows) > 0) | ((np.diff(rows) == 0) & (np.diff(cols) > 0))
    if not step_ok.all():
        k = int(np.argmin(step_ok)) + 1
        raise errors.InvalidArgumentError(
            None, None, f"tft.{what}: the SparseTensor's indices must be in row-major order "
            f"(indices[{k}] = {indices[k].tolist()} follows {indices[k - 1].tolist()}); "
            f"call tf.sparse.reorder first")


def _sparse(values, rowids, nrows):
    """A 2-D SparseTensor [nrows, longest row] of values in row order (rowids sorted)."""
    return tf.RaggedTensor.from_value_rowids(values, rowids, nrows=nrows,
                                             validate=False).to_sparse()


def _windows(values, rowids, lo, hi, separator):
    """Every ngram (width lo..hi) starting at each value, in order of the start, shorter
    first, with the row id of its start and whether it stays inside that row."""
    n = tf.size(values, out_type=tf.int64)
    pad = hi - 1
    padded = tf.concat([values, tf.fill([pad], tf.constant("", values.dtype))], 0)
    padded_rows = tf.concat([rowids, tf.fill([pad], tf.constant(-1, tf.int64))], 0)
    start = tf.range(n, dtype=tf.int64)
    pieces, same_row, grams, valid = [], [], [], []
    for i in range(hi):
        pieces.append(tf.gather(padded, start + i))
        same_row.append(tf.equal(tf.gather(padded_rows, start + i), rowids))
        if i + 1 >= lo:
            grams.append(pieces[0] if i == 0 else
                         tf.strings.join(pieces, separator=separator))
            valid.append(same_row[0] if i == 0 else
                         tf.reduce_all(tf.stack(same_row, axis=1), axis=1))
    width = hi - lo + 1
    # (stack, not expand_dims + tile: the graph keeps no size of the traced batch)
    rows = tf.reshape(tf.stack([rowids] * width, axis=1), [-1])
    return (tf.reshape(tf.stack(grams, axis=1), [-1]), rows,
            tf.reshape(tf.stack(valid, axis=1), [-1]))


def ngrams(tokens, ngram_range, separator, name=None):
    """`tft.ngrams`: "Given a SparseTensor of tokens, returns a SparseTensor containing the
    ngrams that can be constructed from each row", each row's ngrams in order of their first
    token, shorter first; `separator` goes between tokens; an ngram appearing several times
    in a row appears that many times. ValueError "if tokens is not 2D" or "if ngram_range[0]
    < 1 or ngram_range[1] < ngram_range[0]"."""
    lo, hi = (int(n) for n in ngram_range)
    if lo < 1 or hi < lo:
        raise ValueError(f"tft.ngrams: ngram_range must satisfy 1 <= ngram_range[0] <= "
                         f"ngram_range[1], got {tuple(ngram_range)}")
    values, rowids, nrows = _flat(tokens, "ngrams")
    sep = _token_bytes(separator).decode("utf-8", "surrogateescape")
    grams, rows, valid = _windows(values, rowids, lo, hi, sep)
    return _sparse(tf.boolean_mask(grams, valid), tf.boolean_mask(rows, valid), nrows)


def _first_per_row(values, rowids):
    """Positions of the first appearance of each distinct value in its row, ascending."""
    _, value_id = tf.unique(values, out_idx=tf.int64)
    distinct = tf.reduce_max(tf.concat([value_id, tf.constant([-1], tf.int64)], 0)) + 1
    _, key_id = tf.unique(rowids * distinct + value_id, out_idx=tf.int64)
    count = tf.reduce_max(tf.concat([key_id, tf.constant([-1], tf.int64)], 0)) + 1
    position = tf.range(tf.size(values, out_type=tf.int64), dtype=tf.int64)
    return tf.math.unsorted_segment_min(position, key_id, count)


def bag_of_words(tokens, ngram_range, separator, name=None):
    """`tft.bag_of_words`: the ngrams of each row (tft.ngrams) with "set semantics per
    row": each distinct ngram once, in order of first appearance."""
    grams = ngrams(tokens, ngram_range, separator)
    first = _first_per_row(grams.values, grams.indices[:, 0])
    return _sparse(tf.gather(grams.values, first), tf.gather(grams.indices[:, 0], first),
                   grams.dense_shape[0])


def _idf(num_docs, doc_freq, smooth):
    """tft's inverse document frequency: "1 + log((corpus size + 1) / (count of documents
    containing term + 1))", or unsmoothed "1 + log((corpus size) / (document frequency of
    term))" (infinite for a term in no document, tft's "division by zero")."""
    df = np.asarray(doc_freq, np.float64)
    with np.errstate(divide="ignore"):
        if smooth:
            return 1.0 + np.log((num_docs + 1.0) / (df + 1.0))
        return 1.0 + np.log(float(num_docs) / df)


def _term_counts(x, vocab_size):
    """[rows, vocab_size] counts of each term id (taken modulo vocab_size) in each row."""
    values, rowids, nrows = _flat(x, "tfidf")
    ids = tf.math.floormod(tf.cast(values, tf.int64), vocab_size)
    flat = tf.math.unsorted_segment_sum(tf.ones_like(ids), rowids * vocab_size + ids,
                                        nrows * vocab_size)
    return tf.reshape(flat, [-1, vocab_size])


def tfidf(x, vocab_size, smooth=True, name=None):
    """`tft.tfidf`: each row's distinct term ids (ascending) and their term frequency times
    inverse document frequency, as two SparseTensors with indices [row, index in the row's
    bag of words]. The term frequency is "(count of term in document) / (document size)";
    the inverse document frequency is computed over the whole dataset (see `_idf`; the
    corpus size counts every row, empty ones too). x: a 2-D SparseTensor of int64 term
    ids, taken modulo vocab_size (as tft); weights are float32."""
    vocab_size = int(vocab_size)
    if vocab_size < 1:
        raise ValueError(f"tft.tfidf: vocab_size must be >= 1, got {vocab_size}")
    counts = _term_counts(x, vocab_size)
    run = context.peek()
    # the analyzer reads its input only while analyzing (concrete values, never a trace)
    docs = [np.flatnonzero(row) for row in counts.numpy()] \
        if run is None or run.mode == "analyze" else None
    _, (num_docs, doc_freq) = analyzers.call("doc_freq", docs, vocab_size=vocab_size)
    idf = tf.constant(_idf(num_docs, doc_freq, smooth), tf.float64)
    sizes = tf.maximum(tf.reduce_sum(counts, axis=1), 1)
    where = tf.where(counts > 0)  # row-major: each row's term ids ascending
    rows, terms = where[:, 0], where[:, 1]
    count = tf.gather(tf.reshape(counts, [-1]), rows * vocab_size + terms)
    weight = tf.cast(count, tf.float64) / tf.cast(tf.gather(sizes, rows), tf.float64) * \
        tf.gather(idf, terms)
    nrows = tf.shape(counts, out_type=tf.int64)[0]
    return _sparse(terms, rows, nrows), _sparse(tf.cast(weight, tf.float32), rows, nrows)
