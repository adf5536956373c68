"""tf.Transform's text mappers: `tft.ngrams`, `tft.bag_of_words` and `tft.tfidf`, with the
semantics of tf.Transform's documentation (quoted in each docstring).

They take a 2-D SparseTensor (as tf.Transform) or RaggedTensor of tokens / term ids, one row
per document, and return SparseTensors whose indices are [row, position in the row's
output]. They run on concrete values: eagerly, and in the analysis pass on Beam (tfidf's
document frequencies are a full-pass analyzer, summed exactly over the workers). They do not
yet go into a transform graph: tensorlite's SavedModel exporter has no TensorFlow mapping for
the variable-size ops they need (RaggedValueRowIds, RaggedTensorToSparse, and
UnsortedSegmentSum with a batch-dependent number of segments), so tracing one raises
NotImplementedError saying so.
"""
import numpy as np

import tensorlite as tf
from tensorlite.transform import analyzers, context


def _check_eager(what):
    run = context.peek()
    if run is not None and run.mode == "apply":
        raise NotImplementedError(
            f"tft.{what} inside the transform graph is not implemented in tensorlite: its "
            "SavedModel exporter has no TensorFlow mapping for the variable-size ops it needs "
            "(RaggedValueRowIds, RaggedTensorToSparse, UnsortedSegmentSum with a "
            f"batch-dependent number of segments). tft.{what} runs eagerly and in the Beam "
            "analysis only")


def _rows(x, what):
    """The rows of a 2-D SparseTensor / RaggedTensor: a list of 1-D NumPy arrays."""
    if isinstance(x, tf.SparseTensor):
        shape = x.dense_shape.numpy()
        if len(shape) != 2:
            raise ValueError(f"tft.{what}: the input must be a 2-D SparseTensor, got rank "
                             f"{len(shape)}")
        idx, values = x.indices.numpy(), x.values.numpy()
        order = np.lexsort((idx[:, 1], idx[:, 0]))  # row-major, as tf.sparse.reorder
        idx, values = idx[order], values[order]
        bounds = np.searchsorted(idx[:, 0], np.arange(int(shape[0]) + 1))
    elif isinstance(x, tf.RaggedTensor):
        if x.ragged_rank != 1 or x.flat_values.shape.rank != 1:
            raise ValueError(f"tft.{what}: the input must be a 2-D RaggedTensor [rows, "
                             "(tokens)]")
        values, bounds = x.flat_values.numpy(), x.row_splits.numpy()
    else:
        raise ValueError(f"tft.{what}: the input must be a 2-D SparseTensor (or RaggedTensor), "
                         f"got {type(x).__name__}")
    return [values[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]


def _sparse(rows, dtype):
    """A 2-D SparseTensor [len(rows), longest row] of the rows' values."""
    lengths = [len(r) for r in rows]
    indices = np.array([(i, j) for i, n in enumerate(lengths) for j in range(n)],
                       dtype=np.int64).reshape(-1, 2)
    flat = [v for r in rows for v in r]
    values = np.array(flat, dtype=object) if dtype == tf.string else \
        np.asarray(flat, dtype=dtype.as_numpy_dtype)
    return tf.SparseTensor(indices, tf.constant(values, dtype),
                           [len(rows), max(lengths, default=0)])


def _token_bytes(token):
    return token if isinstance(token, bytes) else str(token).encode("utf-8")


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
    _check_eager("ngrams")
    sep = _token_bytes(separator)
    out = []
    for row in _rows(tokens, "ngrams"):
        words = [_token_bytes(t) for t in row.tolist()]
        out.append([sep.join(words[start:start + n]) for start in range(len(words))
                    for n in range(lo, hi + 1) if start + n <= len(words)])
    return _sparse(out, tf.string)


def bag_of_words(tokens, ngram_range, separator, name=None):
    """`tft.bag_of_words`: the ngrams of each row (tft.ngrams) with "set semantics per
    row": each distinct ngram once, in order of first appearance."""
    grams = ngrams(tokens, ngram_range, separator)
    _check_eager("bag_of_words")
    out = [list(dict.fromkeys(row.tolist())) for row in _rows(grams, "bag_of_words")]
    return _sparse(out, tf.string)


def _idf(num_docs, doc_freq, smooth):
    """tft's inverse document frequency: "1 + log((corpus size + 1) / (count of documents
    containing term + 1))", or unsmoothed "1 + log((corpus size) / (document frequency of
    term))" (infinite for a term in no document, tft's "division by zero")."""
    df = np.asarray(doc_freq, np.float64)
    with np.errstate(divide="ignore"):
        if smooth:
            return 1.0 + np.log((num_docs + 1.0) / (df + 1.0))
        return 1.0 + np.log(float(num_docs) / df)


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
    _check_eager("tfidf")
    rows = [np.mod(np.asarray(r, np.int64), vocab_size) for r in _rows(x, "tfidf")]
    _, (num_docs, doc_freq) = analyzers.call("doc_freq", rows, vocab_size=vocab_size)
    idf = _idf(num_docs, doc_freq, smooth)
    ids, weights = [], []
    for row in rows:
        terms, counts = np.unique(row, return_counts=True)
        ids.append(terms.tolist())
        weights.append((counts / max(len(row), 1) * idf[terms]).astype(np.float32).tolist())
    return _sparse(ids, tf.int64), _sparse(weights, tf.float32)
