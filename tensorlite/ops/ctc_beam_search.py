"""`tf.nn.ctc_beam_search_decoder` (TF 2's): the `top_paths` most likely label sequences of
each batch entry, by TensorFlow's CTC beam search (its kernel's algorithm, step for step:
a trie of prefixes, each with the log-probabilities of ending in a blank or in its last
label; at each frame every kept prefix is extended by every class, and the best
`beam_width` stay). Blank is the last class; repeated labels are not merged in the
output (TF 2 has no `merge_repeated`).

Example:
    >>> decoded, log_probs = tf.nn.ctc_beam_search_decoder(  # doctest: +SKIP
    ...     logits, sequence_length, beam_width=10, top_paths=2)
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.ops.common import FLOAT, INTEGER, check_kind, to_tensor

_ZERO = -np.inf  # log 0


class _Entry:
    """A prefix: its last label, parent, children, and log P(prefix ending in blank /
    in its label / total), at the previous frame (old) and this one (new)."""
    __slots__ = ("children", "label", "new", "old", "parent")

    def __init__(self, parent, label):
        self.label, self.parent, self.children = label, parent, {}
        self.old = [_ZERO, _ZERO, _ZERO]  # blank, label, total
        self.new = [_ZERO, _ZERO, _ZERO]

    def active(self):
        return self.new[2] != _ZERO

    def labels(self, merge_repeated):
        """The prefix's labels; with `merge_repeated` (TF 1's decoder), a run of equal
        labels comes out once, as the kernel's LabelSeq."""
        out, e, prev = [], self, -1
        while e.parent is not None:
            if not merge_repeated or e.label != prev:
                out.append(e.label)
            prev, e = e.label, e.parent
        return out[::-1]


class _TopN:
    """gtl::TopN's behaviour as the kernel uses it: at most `limit` entries by new total;
    a push beyond that drops the worst (the new one if it is)."""

    def __init__(self, limit):
        self.limit, self.items = limit, []

    def push(self, e):
        self.items.append(e)
        if len(self.items) > self.limit:
            self.items.remove(min(self.items, key=lambda x: x.new[2]))

    def bottom(self):
        return min(self.items, key=lambda x: x.new[2])

    def extract(self):
        out = sorted(self.items, key=lambda x: -x.new[2])
        self.items = []
        return out


def _step(leaves, logits, beam_width, blank):
    m = logits.max()
    x = logits - (m + np.log(np.exp(logits - m).sum()))  # log-softmax, as norm_offset
    branches = leaves.extract()
    for b in branches:
        b.old = list(b.new)
    for b in branches:
        if b.parent is not None:
            if b.parent.active():
                prev = b.parent.old[0] if b.label == b.parent.label else b.parent.old[2]
                b.new[1] = np.logaddexp(b.new[1], prev)
            b.new[1] += x[b.label]
        b.new[0] = b.old[2] + x[blank]
        b.new[2] = np.logaddexp(b.new[0], b.new[1])
        leaves.push(b)

    def candidate(total):
        return total > _ZERO and (len(leaves.items) < beam_width
                                  or total > leaves.bottom().new[2])
    for b in branches:
        if not candidate(b.old[2]):
            continue
        for label in range(len(x) - 1):
            c = b.children.get(label)
            if c is None:
                c = b.children[label] = _Entry(b, label)
            if c.active():
                continue
            prev = b.old[0] if label == b.label else b.old[2]
            c.new = [_ZERO, x[label] + prev, x[label] + prev]
            if candidate(c.new[2]):
                if len(leaves.items) == beam_width:
                    leaves.bottom().new = [_ZERO, _ZERO, _ZERO]
                leaves.push(c)
            else:
                c.old, c.new = [_ZERO] * 3, [_ZERO] * 3


def _decode_one(logits, length, beam_width, top_paths, merge_repeated):
    root = _Entry(None, -1)
    root.new = [0.0, _ZERO, 0.0]
    leaves = _TopN(beam_width)
    leaves.push(root)
    for t in range(length):
        _step(leaves, logits[t], beam_width, logits.shape[1] - 1)
    best = sorted(leaves.items, key=lambda e: -e.new[2])
    if top_paths > len(best):
        raise invalid("CTCBeamSearchDecoder", "Less leaves in the beam search than "
                      "requested.")
    return [(e.labels(merge_repeated), e.new[2]) for e in best[:top_paths]]


def _beam_fwd(inputs, sequence_length, beam_width, top_paths, merge_repeated):
    results = [_decode_one(inputs[:, b].astype(np.float64), int(sequence_length[b]),
                           beam_width, top_paths, merge_repeated)
               for b in range(inputs.shape[1])]
    outs = []
    for p in range(top_paths):
        rows = [(b, i, lab) for b, r in enumerate(results) for i, lab in enumerate(r[p][0])]
        width = max([len(r[p][0]) for r in results], default=0)
        outs += [np.asarray([(b, i) for b, i, _ in rows], np.int64).reshape(-1, 2),
                 np.asarray([lab for *_, lab in rows], np.int64),
                 np.asarray([len(results), width], np.int64)]
    log_probs = np.asarray([[r[p][1] for p in range(top_paths)] for r in results],
                           inputs.dtype)
    return outs + [log_probs]


def _beam_shape(x, s, beam_width, top_paths, merge_repeated):
    per_path = [Spec((None, 2), dtypes.int64), Spec((None,), dtypes.int64),
                Spec((2,), dtypes.int64)]
    return per_path * top_paths + [Spec((x.shape[1], top_paths), x.dtype)]


CTC_BEAM_SEARCH = register(
    "CTCBeamSearchDecoder", _beam_fwd, grad=NOT_DIFFERENTIABLE, shape=_beam_shape,
    multi_output=True, unsupported="tf onnx tflite batch tf_import")


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1):
    """`tf.nn.ctc_beam_search_decoder`: `inputs` [max_time, batch_size, num_classes]
    logits (blank = the last class), `sequence_length` [batch_size]. Returns `(decoded,
    log_probabilities)`: a list of `top_paths` SparseTensors [batch_size, max_decoded_length]
    (the j-th best sequence of each entry) and their log-probabilities
    [batch_size, top_paths]."""
    return beam_search(inputs, sequence_length, beam_width, top_paths, merge_repeated=False)


def beam_search(inputs, sequence_length, beam_width, top_paths, merge_repeated):
    """The decoder with TF 1's `merge_repeated` (Keras 2's ctc_decode passes True)."""
    op = "CTCBeamSearchDecoder"
    x = check_kind(op, to_tensor(inputs), FLOAT, "inputs")
    if x.shape.rank != 3:
        raise invalid(op, f"ctc_beam_search_decoder: inputs must be [max_time, batch_size, "
                      f"num_classes], got shape {x.shape.as_list()}")
    lengths = check_kind(op, to_tensor(sequence_length), INTEGER, "sequence_length")
    if lengths.shape.as_list() != [x.shape[1]]:
        raise invalid(op, f"ctc_beam_search_decoder: sequence_length must be [batch_size="
                      f"{x.shape[1]}], got shape {lengths.shape.as_list()}")
    if not 0 < top_paths <= beam_width:
        raise invalid(op, f"ctc_beam_search_decoder: top_paths ({top_paths}) must be in "
                      f"[1, beam_width={beam_width}]")
    outs = execute(CTC_BEAM_SEARCH, (x, lengths),
                   {"beam_width": int(beam_width), "top_paths": int(top_paths),
                    "merge_repeated": bool(merge_repeated)})
    decoded = [SparseTensor(*outs[3 * p:3 * p + 3]) for p in range(top_paths)]
    return decoded, outs[-1]
