"""`tf.data.experimental.assert_cardinality`: declares a dataset's number of elements (so
`cardinality()` and Keras see it) and checks the declaration while iterating: too few or
too many elements raise FailedPreconditionError with TF's message.

Example (the TF API doc's):
    >>> dataset = tf.data.TFRecordDataset("examples.tfrecord")
    >>> dataset = dataset.apply(tf.data.experimental.assert_cardinality(42))
    >>> int(dataset.cardinality())
    42
"""
from tensorlite.data.dataset import INFINITE
from tensorlite.data.transforms import CountedDataset, PassThroughIterator
from tensorlite.framework import errors


def _count(n):
    return "infinite" if n == INFINITE else str(n)


class _AssertIterator(PassThroughIterator):
    _position = "_n"  # saved beside the input's state

    def __init__(self, inner, expected):
        super().__init__(inner)
        self._expected, self._n = expected, 0

    def next(self):
        try:
            element = self._in.next()
        except StopIteration:
            if self._n != self._expected:
                raise errors.FailedPreconditionError(
                    None, None, f"Input dataset was expected to contain "
                    f"{_count(self._expected)} elements but contained only {self._n} "
                    f"elements.") from None
            raise
        self._n += 1
        if self._expected != INFINITE and self._n > self._expected:
            raise errors.FailedPreconditionError(
                None, None, f"Input dataset was expected to contain {self._expected} elements "
                f"but contained at least {self._n} elements.")
        return element


class AssertCardinalityDataset(CountedDataset):
    _name = "AssertCardinality"
    _iterator = _AssertIterator

    def __init__(self, input_dataset, expected_cardinality):
        super().__init__(input_dataset, expected_cardinality)
        if self._count < 0 and self._count != INFINITE:
            raise errors.InvalidArgumentError(
                None, None, f"assert_cardinality: expected_cardinality must be >= 0 or "
                f"tf.data.INFINITE_CARDINALITY, got {self._count}")

    def _cardinality(self):
        return self._count

    def _describe(self):
        return f"expected_cardinality={_count(self._count)}"


def assert_cardinality(expected_cardinality):
    """For `dataset.apply`: the dataset, declared (and checked) to have
    `expected_cardinality` elements."""
    return lambda dataset: AssertCardinalityDataset(dataset, expected_cardinality)
