"""The static memory plan: every computed tensor gets an offset in one arena, chosen once
from when it is first written and last read, so that tensors whose lifetimes do not overlap
share memory (the "static memory plan" of the Google I/O 2018 talk "TensorFlow Lite for
mobile developers"; the greedy-by-size placement TFLite's arena
planner uses).

Example:
    >>> offsets, size = plan({0: 400, 1: 400, 2: 400}, {0: (0, 1), 1: (1, 2), 2: (2, 3)})
    >>> offsets[0] == offsets[2], size   # 0 is dead when 2 is born
    (True, 896)
"""
ALIGNMENT = 64


def _aligned(n):
    return -(-n // ALIGNMENT) * ALIGNMENT


def lifetimes(n_ops, op_inputs, op_outputs, inputs, outputs, preserve=()):
    """{tensor: (first step, last step)} for the computed tensors of an execution plan.
    Model inputs live from step 0, outputs (and `preserve`d tensors) to the last step."""
    life = {}
    for t in inputs:
        life[t] = (0, 0)
    for step in range(n_ops):
        for t in op_outputs[step]:
            first = life.get(t, (step, step))[0]
            life[t] = (min(first, step), step)
        for t in op_inputs[step]:
            if t in life:
                life[t] = (life[t][0], step)
    end = max(n_ops - 1, 0)
    for t in list(outputs) + list(inputs) + list(preserve):
        if t in life:
            life[t] = (life[t][0], end)
    return life


def plan(sizes, life):
    """(offsets, arena size): the largest tensors are placed first, each at the lowest
    offset that overlaps no placed tensor alive at the same time."""
    offsets, placed = {}, []
    for t in sorted(sizes, key=lambda t: (-sizes[t], t)):
        first, last = life[t]
        need = _aligned(max(sizes[t], 1))
        busy = sorted((off, off + size) for (off, size, f, l) in placed
                      if f <= last and first <= l)
        offset = 0
        for start, stop in busy:
            if offset + need <= start:
                break
            offset = max(offset, stop)
        offsets[t] = offset
        placed.append((offset, need, first, last))
    size = max((off + n for off, n, _, _ in placed), default=0)
    return offsets, size
