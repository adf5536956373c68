"""Mean and variance from the moments of batches, merged so that the result does not
depend on how a runner split or combined the data (the statistics and tf.Transform's
`tft.mean`/`tft.var` both need this).

Example:
    >>> merged_moments([batch_moments([1.0, 2.0]), batch_moments([3.0])])
    (2.0, 0.6666666666666666)
"""
import numpy as np


def batch_moments(values):
    """(n, mean, sum of squared deviations) of one batch's numbers, in float64 (NumPy's
    pairwise sum: the same for the same batch)."""
    v = np.asarray(values, np.float64)
    mean = float(np.sum(v)) / len(v)
    return (len(v), mean, float(np.sum((v - mean) ** 2)))


def merged_moments(moments):
    """(mean, population variance) by Chan's pairwise update over the sorted batches'
    moments, the same whatever order the batches were merged in."""
    n, mean, m2 = 0, 0.0, 0.0
    for nb, mb, m2b in sorted(moments):
        total = n + nb
        delta = mb - mean
        mean += delta * nb / total
        m2 += m2b + delta * delta * n * nb / total
        n = total
    return (mean, m2 / n) if n else (0.0, 0.0)
