"""The shared check for batching rules (as op_check.py is for gradients): for an op with a
`batch` rule, running the rule once on a batch equals running the op's forward on each
example and stacking, with every combination of batched and shared inputs."""
import inspect
import itertools
import warnings

import numpy as np

B = 3
_MATMUL_ATTRS = [{"transpose_a": ta, "transpose_b": tb} for ta in (False, True)
                 for tb in (False, True)]


def _arity(forward):
    nin = getattr(forward, "nin", None)
    if nin is not None:
        return nin
    params = inspect.signature(forward).parameters.values()
    return sum(1 for p in params if p.default is p.empty and
               p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _samples(rng, shape):
    yield rng.uniform(0.1, 0.9, size=shape).astype(np.float32)
    yield rng.integers(1, 5, size=shape).astype(np.int32)
    yield rng.integers(0, 2, size=shape).astype(bool)


def cases(op, rng):
    """[(example inputs, attrs)] for the op's rule kind; [] if the kind is unknown."""
    kind = getattr(op.batch, "kind", None)
    if kind == "elementwise" and op.name == "BatchMatMulV2":
        return [([rng.normal(size=(2, 3)).astype(np.float32) if not a["transpose_a"] else
                  rng.normal(size=(3, 2)).astype(np.float32),
                  rng.normal(size=(3, 4)).astype(np.float32) if not a["transpose_b"] else
                  rng.normal(size=(4, 3)).astype(np.float32)], a) for a in _MATMUL_ATTRS]
    if kind == "elementwise":
        n = _arity(op.forward)
        shapes = [(2, 3), (3,)][:n] if n == 2 else [(2, 3)] * n
        for sample in zip(*[_samples(rng, s) for s in shapes]):
            try:
                with warnings.catch_warnings(), np.errstate(all="raise"):
                    warnings.simplefilter("error")
                    op.forward(*sample)
                return [(list(sample), {})]
            except Exception:  # noqa: BLE001 - this dtype is not the op's
                continue
        return []
    if kind == "reduction":
        out = []
        for sample in _samples(rng, (2, 3)):
            for axis, keep in (((1,), False), ((0,), True), (None, False)):
                try:
                    op.forward(sample, axis=axis, keepdims=keep)
                    out.append(([sample], {"axis": axis, "keepdims": keep}))
                except Exception:  # noqa: BLE001
                    pass
            if out:
                return out
        return []
    if kind == "reshape":
        return [([rng.normal(size=(2, 3)).astype(np.float32)], {"shape": (3, -1)})]
    if kind == "transpose":
        return [([rng.normal(size=(2, 3, 4)).astype(np.float32)], {"perm": (2, 0, 1)})]
    return []


def check_batch_rule(op, inputs, attrs, rng):
    """Asserts the rule equals the per-example loop for every batched/shared pattern."""
    for pattern in itertools.product([True, False], repeat=len(inputs)):
        if not any(pattern):
            continue
        batch = [np.stack([x + (rng.uniform(0, 0.05, x.shape).astype(x.dtype)
                                if x.dtype.kind == "f" else 0) for _ in range(B)])
                 if b else x for x, b in zip(inputs, pattern)]
        got = op.batch(batch, list(pattern), **attrs)
        want = np.stack([op.forward(*[a[i] if b else a for a, b in zip(batch, pattern)],
                                    **attrs) for i in range(B)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{op.name} batched={pattern} attrs={attrs}")
