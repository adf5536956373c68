"""`tf.random.log_uniform_candidate_sampler` and `tf.random.uniform_candidate_sampler`: the
negative classes of sampled losses (the word2vec tutorial draws its negative contexts with
the first).

Each returns `(sampled_candidates, true_expected_count, sampled_expected_count)` as
TensorFlow documents them: `num_sampled` int64 classes in [0, range_max), and, for the true
classes and for each sampled one, the number of times it is expected among the draws. For a
class of probability p: `num_sampled * p` when sampling with replacement; with `unique=True`
(draws repeated until `num_sampled` distinct classes came out, after `num_tries` draws)
`1 - (1 - p) ** num_tries` (`num_sampled * p` when no draw repeated, as TF's kernel). The
log-uniform (Zipfian) distribution gives class k the probability `(log(k + 2) - log(k + 1)) / log(range_max + 1)`, so small ids (frequent words
in a vocabulary sorted by frequency) come out most often.

Example:
    >>> ids, _, _ = tf.random.log_uniform_candidate_sampler(
    ...     true_classes=[[1]], num_true=1, num_sampled=4, unique=True, range_max=10, seed=1)
    >>> ids.shape
    TensorShape([4])
"""
import collections

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops import random_ops
from tensorlite.ops.common import to_tensor


_SAMPLED_FIELDS = ["sampled_candidates", "true_expected_count", "sampled_expected_count"]


def _result(op, outputs, fields=_SAMPLED_FIELDS):
    """The op's outputs as TF's generated wrappers return them: a namedtuple named after the
    op, with TF's field names (it unpacks as the plain triple)."""
    return collections.namedtuple(op.name, fields)(*outputs)


def _log_uniform_probability(classes, range_max):
    classes = np.asarray(classes, np.float64)
    return (np.log(classes + 2.0) - np.log(classes + 1.0)) / np.log(range_max + 1.0)


def _log_uniform_draws(rng, n, range_max):
    """Classes drawn log-uniformly: exp(u * log(range_max + 1)) - 1, floored, for uniform
    u in [0, 1) (the inverse of the distribution's CDF)."""
    values = np.exp(rng.random(n) * np.log(range_max + 1.0)) - 1.0
    return np.minimum(values.astype(np.int64), range_max - 1)


def _uniform_draws(rng, n, range_max):
    return rng.integers(0, range_max, n, dtype=np.int64)


_DISTRIBUTIONS = {
    "LogUniformCandidateSampler": (_log_uniform_draws, _log_uniform_probability),
    "UniformCandidateSampler": (_uniform_draws,
                                lambda c, r: np.full(np.shape(c), 1.0 / r, np.float64)),
}


def _sample(draw, probability, rng, true_classes, *, num_true, num_sampled, unique,
            range_max):
    if not unique:
        sampled = draw(rng, num_sampled, range_max)

        def expected(c):
            return num_sampled * probability(c, range_max)
    else:
        seen, sampled, tries = set(), [], 0
        while len(sampled) < num_sampled:
            batch = draw(rng, max(2 * (num_sampled - len(sampled)), 8), range_max)
            for c in batch.tolist():
                tries += 1
                if c not in seen:
                    seen.add(c)
                    sampled.append(c)
                    if len(sampled) == num_sampled:
                        break
        sampled = np.asarray(sampled, np.int64)

        def expected(c):
            # TF's ExpectedCountHelper: with no repeat drawn, num_tries == num_sampled and
            # the count is num_sampled * p, as without `unique`
            if tries == num_sampled:
                return num_sampled * probability(c, range_max)
            return -np.expm1(tries * np.log1p(-probability(c, range_max)))
    return (sampled, expected(true_classes).astype(np.float32),
            expected(sampled).astype(np.float32))


def _shape(true_classes, *, num_true, num_sampled, unique, range_max, rng=None):
    return (Spec((num_sampled,), dtypes.int64), Spec(true_classes.shape, dtypes.float32),
            Spec((num_sampled,), dtypes.float32))


def _register(name):
    draw, probability = _DISTRIBUTIONS[name]

    def forward(true_classes, rng, **attrs):
        return _sample(draw, probability, rng, true_classes, **attrs)
    # stateful draws, as the other random ops: not exported (no inference graph holds one)
    return register(name, forward, grad=NOT_DIFFERENTIABLE, shape=_shape, multi_output=True,
                    effects="state", unsupported="tf onnx tflite batch tf_import")


LOG_UNIFORM = _register("LogUniformCandidateSampler")
UNIFORM = _register("UniformCandidateSampler")


def _candidates(op, true_classes, num_true, num_sampled, unique, range_max, seed):
    classes = to_tensor(true_classes, dtypes.int64)
    if classes.shape.rank != 2 or classes.shape.as_list()[1] != num_true:
        raise invalid(op.name, f"{op.name}: true_classes must be a [batch_size, num_true="
                      f"{num_true}] matrix of int64 class ids, got shape "
                      f"{classes.shape.as_list()}")
    if range_max < 1 or num_sampled < 0:
        raise invalid(op.name, f"{op.name}: range_max must be >= 1 and num_sampled >= 0, "
                      f"got range_max={range_max}, num_sampled={num_sampled}")
    if unique and num_sampled > range_max:
        raise invalid(op.name, f"{op.name}: with unique=True, num_sampled ({num_sampled}) "
                      f"cannot exceed range_max ({range_max})")
    rng = random_ops.next_rng(seed, op.name)
    return _result(op, execute(op, (classes,), {
        "num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
        "range_max": int(range_max), "rng": rng}))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """`tf.random.log_uniform_candidate_sampler`: see the module docstring."""
    return _candidates(LOG_UNIFORM, true_classes, num_true, num_sampled, unique, range_max,
                       seed)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    """`tf.random.uniform_candidate_sampler`: classes drawn uniformly from [0, range_max)."""
    return _candidates(UNIFORM, true_classes, num_true, num_sampled, unique, range_max, seed)


# -- accidental hits --------------------------------------------------------------------------
_FLT_MAX = float(np.finfo(np.float32).max)


def _accidental_hits_fwd(true_classes, sampled_candidates, num_true):
    """TF's kernel: each sampled class's position (the last one, if it repeats), then every
    (row, position) whose row's true classes contain it, in row-major order of the true
    classes."""
    position = {int(c): j for j, c in enumerate(sampled_candidates.tolist())}
    rows, ids = [], []
    for i, row in enumerate(true_classes.tolist()):
        for c in row:
            if c in position:
                rows.append(i)
                ids.append(position[c])
    return (np.asarray(rows, np.int32), np.asarray(ids, np.int64),
            np.full(len(rows), -_FLT_MAX, np.float32))


ACCIDENTAL_HITS = register(
    "ComputeAccidentalHits", _accidental_hits_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda t, s, num_true: (Spec((None,), dtypes.int32), Spec((None,), dtypes.int64),
                                  Spec((None,), dtypes.float32)),
    multi_output=True, unsupported="tf onnx tflite batch tf_import")


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None,
                            name=None):
    """`tf.nn.compute_accidental_hits`: where a sampled candidate is one of a row's true
    classes. Returns `(indices, ids, weights)`: the row (int32), the candidate's position in
    `sampled_candidates` (int64) and -FLT_MAX (float32) for each hit, a sparse matrix to add
    to the sampled logits so those candidates drop out of the loss.

    Example:
        >>> tf.nn.compute_accidental_hits([[1], [4]], [4, 2, 1], num_true=1)[0].numpy()
        array([0, 1], dtype=int32)
    """
    op = ACCIDENTAL_HITS
    classes = to_tensor(true_classes, dtypes.int64)
    sampled = to_tensor(sampled_candidates, dtypes.int64)
    if classes.shape.rank != 2 or classes.shape.as_list()[1] != num_true:
        raise invalid(op.name, f"compute_accidental_hits: true_classes must be a [batch_size, "
                      f"num_true={num_true}] matrix, got shape {classes.shape.as_list()}")
    if sampled.shape.rank != 1:
        raise invalid(op.name, f"compute_accidental_hits: sampled_candidates must be a vector "
                      f"of class ids, got shape {sampled.shape.as_list()}")
    return _result(op, execute(op, (classes, sampled), {"num_true": int(num_true)}),
                   ["indices", "ids", "weights"])


# -- fixed unigram and all-candidate samplers ----------------------------------------------
def _unigram_fwd(true_classes, rng, *, probs, **attrs):
    p = np.asarray(probs, np.float64)

    def draw(r, n, range_max):
        return r.choice(range_max, size=n, p=p).astype(np.int64)

    def probability(c, range_max):
        return p[np.asarray(c, np.int64)]
    return _sample(draw, probability, rng, true_classes, **attrs)


FIXED_UNIGRAM = register(
    "FixedUnigramCandidateSampler", _unigram_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda t, probs, **a: _shape(t, **a), multi_output=True, effects="state",
    unsupported="tf onnx tflite batch tf_import")


def _read_unigrams(vocab_file):
    """The counts of a vocabulary file: the last comma-separated value of each line."""
    try:
        with open(vocab_file, encoding="utf-8") as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
    except OSError as e:
        raise errors.NotFoundError(None, None, f"fixed_unigram_candidate_sampler: cannot "
                                   f"read vocab_file {vocab_file!r}: {e}") from None
    try:
        return [float(line.rsplit(",", 1)[-1]) for line in lines]
    except ValueError as e:
        raise invalid("FixedUnigramCandidateSampler", f"fixed_unigram_candidate_sampler: "
                      f"each line of {vocab_file!r} must end with a count after its last "
                      f"comma ({e})") from None


def _unigram_probs(op, range_max, vocab_file, unigrams, distortion, num_reserved_ids,
                   num_shards, shard):
    if bool(vocab_file) == bool(len(unigrams)):
        raise invalid(op, f"{op}: give exactly one of vocab_file and unigrams")
    counts = _read_unigrams(vocab_file) if vocab_file else [float(u) for u in unigrams]
    if num_reserved_ids + len(counts) != range_max:
        raise invalid(op, f"{op}: range_max ({range_max}) must be num_reserved_ids "
                      f"({num_reserved_ids}) plus the number of unigrams ({len(counts)})")
    if not 0 <= shard < num_shards:
        raise invalid(op, f"{op}: shard must be in [0, num_shards={num_shards}), got {shard}")
    weights = np.zeros(range_max, np.float64)
    weights[num_reserved_ids:] = np.power(np.asarray(counts, np.float64), distortion)
    weights[np.arange(range_max) % num_shards != shard] = 0.0  # the shard's ids only
    if not weights.sum() > 0:
        raise invalid(op, f"{op}: the unigram counts give no class a positive probability")
    return weights / weights.sum()


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """`tf.random.fixed_unigram_candidate_sampler`: classes drawn with probabilities
    proportional to `unigrams ** distortion` (counts from `unigrams`, or the last
    comma-separated value of each line of `vocab_file`), after `num_reserved_ids` classes
    of probability 0; with `num_shards`, only ids with `id % num_shards == shard`. Returns
    (sampled_candidates, true_expected_count, sampled_expected_count) as the others."""
    op = FIXED_UNIGRAM
    probs = _unigram_probs(op.name, int(range_max), vocab_file, unigrams, float(distortion),
                           int(num_reserved_ids), int(num_shards), int(shard))
    classes = to_tensor(true_classes, dtypes.int64)
    if unique and num_sampled > np.count_nonzero(probs):
        raise invalid(op.name, f"{op.name}: with unique=True, num_sampled ({num_sampled}) "
                      f"cannot exceed the {np.count_nonzero(probs)} classes of probability > 0")
    attrs = _sampler_attrs(op, classes, num_true, num_sampled, unique, range_max, seed)
    return _result(op, execute(op, (classes,), dict(attrs, probs=tuple(probs.tolist()))))


def _sampler_attrs(op, classes, num_true, num_sampled, unique, range_max, seed):
    if classes.shape.rank != 2 or classes.shape.as_list()[1] != num_true:
        raise invalid(op.name, f"{op.name}: true_classes must be a [batch_size, num_true="
                      f"{num_true}] matrix of int64 class ids, got shape "
                      f"{classes.shape.as_list()}")
    return {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
            "range_max": int(range_max), "rng": random_ops.next_rng(seed, op.name)}


def _all_candidates_fwd(true_classes, *, num_sampled):
    return (np.arange(num_sampled, dtype=np.int64),
            np.ones(true_classes.shape, np.float32), np.ones(num_sampled, np.float32))


ALL_CANDIDATES = register(
    "AllCandidateSampler", _all_candidates_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda t, num_sampled: (Spec((num_sampled,), dtypes.int64),
                                  Spec(t.shape, dtypes.float32),
                                  Spec((num_sampled,), dtypes.float32)),
    multi_output=True, unsupported="tf onnx tflite batch tf_import")


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """`tf.random.all_candidate_sampler`: every class, [0, num_sampled), each expected once
    (for testing a sampled loss against the full one)."""
    classes = to_tensor(true_classes, dtypes.int64)
    _sampler_attrs(ALL_CANDIDATES, classes, num_true, num_sampled, unique, num_sampled, seed)
    return _result(ALL_CANDIDATES,
                   execute(ALL_CANDIDATES, (classes,), {"num_sampled": int(num_sampled)}))
