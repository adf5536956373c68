"""`RecordBatch`, the element type of tensorlite's Beam PCollections of record batches
(`{feature name: NumPy array}`), and its Beam coder.

Beam encodes the first ten elements of every PCollection, and a sample of the rest, only to
estimate their size for its metrics. With one element per 64k-100k rows, that is nearly
every element, and pickling a batch's strings costs more than computing on them. The coder
estimates a batch's size from its arrays' byte counts instead, and pickles (protocol 5)
only where the runner really moves a batch between stages or processes.
"""
import pickle

import numpy as np

from tensorlite.data_validation import beam_util

beam = beam_util.import_beam()


class RecordBatch(dict):
    """A record batch: feature name -> NumPy array (a dict, typed for its Beam coder)."""


def estimated_bytes(batch):
    """About how many bytes a batch holds (an object array's strings at 24 bytes each)."""
    total = 0
    for value in batch.values():
        array = np.asarray(value)
        total += array.size * 24 if array.dtype == object else array.nbytes
    return total


class RecordBatchCoder(beam.coders.Coder):
    """Encodes a RecordBatch by pickle; estimates its size without encoding it."""

    def encode(self, value):
        return pickle.dumps(dict(value), protocol=pickle.HIGHEST_PROTOCOL)

    def decode(self, encoded):
        return RecordBatch(pickle.loads(encoded))

    def estimate_size(self, value):
        return estimated_bytes(value)

    def is_deterministic(self):
        return False

    def to_type_hint(self):
        return RecordBatch


beam.coders.registry.register_coder(RecordBatch, RecordBatchCoder)
