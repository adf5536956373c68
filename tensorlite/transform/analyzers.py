"""tf.Transform's analyzers: full-pass reductions of a feature over the whole dataset
(`tft.mean`, `var`, `min`, `max`, `quantiles`, `vocabulary`, and the document frequencies of
`tfidf`). Each kind says how to accumulate one batch, merge partial accumulators from Beam
workers, finalize the result, and what placeholder stands for it before it is known.

Every finalized result is independent of how the batches were spread over workers: partial
accumulators are merged in a canonical order (sorted), quantiles and vocabularies are
exact. (Batches themselves are fixed by the input: CSV byte ranges, DataFrame chunks.)
"""
import numpy as np

from tensorlite.data_validation.moments import batch_moments, merged_moments
from tensorlite.transform import context


def _values(x):
    """The NumPy values of an analyzer input (a Tensor, RaggedTensor or SparseTensor)."""
    for attr in ("flat_values", "values"):
        inner = getattr(x, attr, None)
        if inner is not None and not callable(inner):
            x = inner
    value = x.numpy() if hasattr(x, "numpy") else np.asarray(x)
    return np.asarray(value).reshape(-1)


# -- kinds: accumulate(values, params) / merge(parts) / finalize(acc, params) / placeholder --
def _mean_var_acc(values, params):
    return [batch_moments(values)] if len(values) else []


def _mean_var_final(parts, params):
    return merged_moments(parts)


def _min_max_acc(values, params):
    if len(values) == 0:
        return []
    return [(values.min().item(), values.max().item())]


def _min_max_final(parts, params):
    if not parts:
        return (0.0, 0.0)
    return (min(p[0] for p in parts), max(p[1] for p in parts))


def _quantiles_acc(values, params):
    return [values.astype(np.float64)]


def _quantiles_final(parts, params):
    """Exact 'lower' quantiles: order statistics, the same in whatever order the parts
    come (np.quantile selects them by partition, without sorting everything)."""
    values = np.concatenate(parts) if parts else np.zeros(0)
    k = params["num_buckets"]
    if len(values) == 0:
        return np.zeros(k - 1)
    return np.quantile(values, np.arange(1, k) / k, method="lower")


def _token(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _vocab_acc(values, params):
    """{token: count} of one batch (pandas' hash-based value_counts; tokens decoded once)."""
    import pandas as pd  # noqa: PLC0415 - Beam depends on pandas
    out = {}
    for value, count in pd.Series(values, dtype=object).value_counts(sort=False).items():
        token = _token(value)
        out[token] = out.get(token, 0) + int(count)
    return [out]


def _vocab_final(parts, params):
    """Tokens by frequency, most frequent first (ties: the larger token first, as tft)."""
    counts = {}
    for part in parts:
        for token, count in part.items():
            counts[token] = counts.get(token, 0) + count
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    threshold = params.get("frequency_threshold") or 0
    ranked = [kv for kv in ranked if kv[1] >= threshold]
    if params.get("top_k") is not None:
        ranked = ranked[:params["top_k"]]
    return [token for token, _ in ranked]


def _doc_freq_acc(rows, params):
    """rows: a list of arrays of term ids, one per document."""
    counts = {}
    for ids in rows:
        for i in np.unique(ids).tolist():
            counts[i] = counts.get(i, 0) + 1
    return [(len(rows), counts)]


def _doc_freq_final(parts, params):
    docs, counts = 0, np.zeros(params["vocab_size"], np.int64)
    for n, part in parts:
        docs += n
        for i, c in part.items():
            if 0 <= i < len(counts):
                counts[i] += c
    return (docs, counts)


KINDS = {
    "mean_var": (_mean_var_acc, _mean_var_final, ((0.0, 1.0), (12345.5, 777.0))),
    "min_max": (_min_max_acc, _min_max_final, ((0.0, 1.0), (-5000.0, 9000.0))),
    "quantiles": (_quantiles_acc, _quantiles_final, None),
    "vocabulary": (_vocab_acc, _vocab_final, ([], ["\x00placeholder"])),
    "doc_freq": (_doc_freq_acc, _doc_freq_final, None),
}


def placeholder(kind, params, variant):
    """A stand-in result (two different ones, by variant) while the real one is unknown."""
    if kind == "quantiles":
        return np.full(params["num_buckets"] - 1, 1e30 if variant == 0 else -1e30)
    if kind == "doc_freq":
        counts = np.full(params["vocab_size"], 1 + 2 * variant, np.int64)
        return (3 + 4 * variant, counts)
    return KINDS[kind][2][variant]


def accumulate(kind, values, params):
    """The partial accumulator (a list of parts) of one batch."""
    return KINDS[kind][0](values, params)


def finalize(kind, parts, params):
    """The analyzer's result from all parts."""
    return KINDS[kind][1](parts, params)


def call(kind, x, **params):
    """Runs analyzer `kind` on input x in the current Run: its result (known, or a
    placeholder while analyzing)."""
    run = context.current()
    index = run.next_index()
    run.kinds[index] = (kind, params)
    if index in run.known:
        return index, run.known[index]
    if run.mode != "analyze":
        raise RuntimeError(f"analyzer #{index} ({kind}) has no result: the transform graph "
                           "must be built after the analysis")
    values = x if kind == "doc_freq" else _values(x)
    run.inputs[index] = values
    run.partials[index] = accumulate(kind, values, params)
    return index, placeholder(kind, params, run.variant)
