"""Linear algebra ops (`tf.linalg.*`, `tf.eye`, `tf.norm`).

Every op works on the last two dimensions and broadcasts over leading (batch) ones, so its
gradient rule, written with tensorlite ops, takes cotangents with extra leading dimensions.
Complex inputs run forward; the decompositions' own gradient rules are written and tested
for real dtypes only (matmul and the elementwise ops they call follow TensorFlow's complex
convention, see math_ops._conjugating).

Where a decomposition reads only one triangle (cholesky, eigh), the gradient follows
TensorFlow: cholesky's is symmetrised, eigh's is folded onto the lower triangle.
"""
import collections
import functools

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import array_ops, math_ops
from tensorlite.ops.array_ops import reshape, transpose
from tensorlite.ops.common import FLOATC, check_kind, int_list, to_tensor, unbroadcast
from tensorlite.ops.math_ops import add, matmul, multiply, negative, subtract

__all__ = ["eye", "norm"]

_LinAlgError = np.linalg.LinAlgError


# -- helpers ---------------------------------------------------------------------------------
def _mT(x):
    """Swaps the last two dimensions (whatever the rank, so batch-polymorphic)."""
    nd = x._value.ndim
    return transpose(x, list(range(nd - 2)) + [nd - 1, nd - 2])


def _np_mT(a):
    return np.swapaxes(a, -1, -2)


def _expand2(t):
    """[..., ] -> [..., 1, 1]: a per-matrix scalar against matrices."""
    return reshape(t, t._value.shape + (1, 1))


def _const(a, like):
    return wrap(np.asarray(a, dtype=like._value.dtype))


def _matrix_arg(op_name, x, arg="input", square=True):
    t = check_kind(op_name, to_tensor(x), FLOATC, arg)
    shape = t._value.shape
    if len(shape) < 2:
        raise invalid(op_name, f"{op_name}: `{arg}` must be a matrix or a batch of matrices "
                      f"(rank >= 2), got shape {list(shape)}")
    if square and shape[-1] != shape[-2]:
        raise invalid(op_name, f"{op_name}: Input matrix must be square, got shape "
                      f"{list(shape)} (last two dimensions {shape[-2]} x {shape[-1]})")
    return t


def _batch_spec(*specs):
    from tensorlite.ops.math_ops import broadcast_spec  # noqa: PLC0415 - shared shape rule
    out = Spec((), specs[0].dtype)
    for s in specs:
        out = Spec(broadcast_spec(out, Spec(tuple(s.shape[:-2]), s.dtype)), s.dtype)
    return tuple(out.shape)


def _same_spec(x, **_):
    return x


def _tril_mask(n, dtype, k=0):
    return np.tril(np.ones((n, n), dtype=dtype), k)


# -- eye ---------------------------------------------------------------------------------------
def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """`tf.eye`: identity matrix (or a batch of them).

    >>> tf.eye(2, 3).shape
    TensorShape([2, 3])
    """
    dt = dtypes.as_dtype(dtype)
    rows = int(np.asarray(num_rows))
    cols = rows if num_columns is None else int(np.asarray(num_columns))
    if rows < 0 or cols < 0:
        raise invalid("Eye", f"eye: num_rows and num_columns must be nonnegative, got {rows} "
                      f"and {cols}")
    batch = () if batch_shape is None else tuple(int_list(batch_shape, "batch_shape"))
    array_ops.checked_dims(batch + (rows, cols), "Eye", dt)  # the whole result must be allocatable
    m = np.eye(rows, cols, dtype=dt.as_numpy_dtype)
    if batch_shape is not None:
        m = np.broadcast_to(m, batch + m.shape).copy()
    return wrap(m)


# -- band part ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _band_mask(m, n, lower, upper):
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = np.ones((m, n), dtype=bool)
    if lower >= 0:
        keep &= i - j <= lower
    if upper >= 0:
        keep &= j - i <= upper
    return keep


def _band_fwd(x, num_lower, num_upper):
    return np.where(_band_mask(x.shape[-2], x.shape[-1], num_lower, num_upper), x,
                    np.zeros((), x.dtype))


BAND_PART = register(
    "MatrixBandPart", _band_fwd,
    grad=lambda g, ans, x, num_lower, num_upper: _band(g, num_lower, num_upper),
    shape=_same_spec, unsupported="tf onnx tflite batch tf_import")


def _band(x, lower, upper):
    return execute(BAND_PART, (x,), {"num_lower": lower, "num_upper": upper})


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002 - TF's name
    """`tf.linalg.band_part`: keeps `num_lower` sub- and `num_upper` superdiagonals (a
    negative count keeps the whole triangle)."""
    x = to_tensor(input)
    if x._value.ndim < 2:
        raise invalid("MatrixBandPart", f"band_part: input must be at least rank 2, got shape "
                      f"{list(x._value.shape)}")
    lo, up = int(np.asarray(num_lower)), int(np.asarray(num_upper))
    m, n = x._value.shape[-2:]
    if lo > m or up > n:
        raise invalid("MatrixBandPart", f"band_part: num_lower ({lo}) must not exceed the rows "
                      f"({m}) and num_upper ({up}) the columns ({n})")
    return _band(x, lo, up)


# -- diagonals ---------------------------------------------------------------------------------
_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _diag_len(m, n, d):
    return min(m + min(d, 0), n - max(d, 0))


@functools.lru_cache(maxsize=256)
def _diag_layout(m, n, k0, k1, align):
    """Index arrays (rows, cols, packed_row, packed_pos) linking matrix cells of diagonals
    k1 down to k0 to their places in the packed [num_diags, max_len] array."""
    max_len = min(m + min(k1, 0), n - max(k0, 0))
    sup_left, sub_left = align.startswith("LEFT"), align.endswith("LEFT")
    parts = []
    for i, d in enumerate(range(k1, k0 - 1, -1)):
        length = max(_diag_len(m, n, d), 0)
        left = sup_left if d >= 0 else sub_left
        t = np.arange(length)
        parts.append((t + max(-d, 0), t + max(d, 0), np.full(length, i),
                      t + (0 if left else max_len - length)))
    idx = tuple(np.concatenate([p[j] for p in parts]) for j in range(4))
    return idx, max(max_len, 0)


def _diag_part_fwd(x, k, padding_value, align):
    m, n = x.shape[-2:]
    (rows, cols, di, pos), max_len = _diag_layout(m, n, k[0], k[1], align)
    out = np.full(x.shape[:-2] + (k[1] - k[0] + 1, max_len), padding_value, dtype=x.dtype)
    out[..., di, pos] = x[..., rows, cols]
    return out[..., 0, :] if k[0] == k[1] else out


def _diag_fwd(d, k, num_rows, num_cols, padding_value, align):
    if k[0] == k[1]:
        d = d[..., None, :]
    (rows, cols, di, pos), _ = _diag_layout(num_rows, num_cols, k[0], k[1], align)
    out = np.full(d.shape[:-2] + (num_rows, num_cols), padding_value, dtype=d.dtype)
    out[..., rows, cols] = d[..., di, pos]
    return out


def _set_diag_fwd(x, d, k, align):
    if k[0] == k[1]:
        d = d[..., None, :]
    m, n = x.shape[-2:]
    (rows, cols, di, pos), _ = _diag_layout(m, n, k[0], k[1], align)
    batch = np.broadcast_shapes(x.shape[:-2], d.shape[:-2])
    out = np.array(np.broadcast_to(x, batch + (m, n)))
    out[..., rows, cols] = d[..., di, pos]
    return out


def _diag_part_shape(x, k, padding_value, align):
    m, n = x.shape[-2:]
    max_len = None if m is None or n is None else _diag_layout(m, n, k[0], k[1], align)[1]
    tail = (max_len,) if k[0] == k[1] else (k[1] - k[0] + 1, max_len)
    return Spec(tuple(x.shape[:-2]) + tail, x.dtype)


def _diag_shape(d, k, num_rows, num_cols, padding_value, align):
    lead = d.shape[:-1] if k[0] == k[1] else d.shape[:-2]
    return Spec(tuple(lead) + (num_rows, num_cols), d.dtype)


def _diag_part_grad(g, ans, x, k, padding_value, align):
    m, n = x._value.shape[-2:]
    return execute(MATRIX_DIAG, (g,), {"k": k, "num_rows": m, "num_cols": n,
                                       "padding_value": 0, "align": align})


def _diag_grad(g, ans, d, k, num_rows, num_cols, padding_value, align):
    return execute(MATRIX_DIAG_PART, (g,), {"k": k, "padding_value": 0, "align": align})


def _set_diag_grad(g, ans, x, d, k, align):
    m, n = x._value.shape[-2:]
    (rows, cols, _, _), _ = _diag_layout(m, n, k[0], k[1], align)
    off = np.ones((m, n), dtype=g._value.dtype)
    off[rows, cols] = 0
    gx = unbroadcast(multiply(g, wrap(off)), x, ans)
    gd = execute(MATRIX_DIAG_PART, (g,), {"k": k, "padding_value": 0, "align": align})
    return gx, gd


MATRIX_DIAG_PART = register("MatrixDiagPartV3", _diag_part_fwd, grad=_diag_part_grad,
                            shape=_diag_part_shape, unsupported="tf onnx tflite batch tf_import")
MATRIX_DIAG = register(
    "MatrixDiagV3", _diag_fwd, grad=_diag_grad, shape=_diag_shape,
    unsupported="tf onnx tflite batch tf_import")
def _set_diag_shape(x, d, k, align):
    lead = d.shape[:-1] if k[0] == k[1] else d.shape[:-2]
    return Spec(_batch_spec(x, Spec(tuple(lead) + (1, 1), d.dtype)) + tuple(x.shape[-2:]),
                x.dtype)


MATRIX_SET_DIAG = register("MatrixSetDiagV3", _set_diag_fwd, grad=_set_diag_grad,
                           shape=_set_diag_shape, unsupported="tf onnx tflite batch tf_import")


def _k_arg(op_name, k, align):
    if align not in _ALIGNS:
        raise ValueError(f"{op_name}: align must be one of {list(_ALIGNS)}, got {align!r}")
    ks = np.asarray(k._value if isinstance(k, Tensor) else k).reshape(-1)
    if ks.size not in (1, 2) or ks.dtype.kind not in "iu":
        raise invalid(op_name, f"{op_name}: k must be an integer or a pair of integers, got "
                      f"{k!r}")
    k0, k1 = int(ks[0]), int(ks[-1])
    if k0 > k1:
        raise invalid(op_name, f"{op_name}: lower diagonal index k[0]={k0} must not exceed the "
                      f"upper one k[1]={k1}")
    return k0, k1


def _check_k_in_matrix(op_name, k, m, n):
    if m and n and not (-m < k[0] and k[1] < n):
        raise invalid(op_name, f"{op_name}: diagonal index k={list(k)} is out of bounds for a "
                      f"{m} x {n} matrix; use k in ({-m}, {n})")


def _scalar(v, op_name, what):
    v = np.asarray(v._value if isinstance(v, Tensor) else v)
    if v.ndim:
        raise invalid(op_name, f"{op_name}: {what} must be a scalar, got shape {list(v.shape)}")
    item = v[()]
    return item.item() if isinstance(item, np.generic) else item  # bytes stay bytes


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """`tf.linalg.diag_part`: the k-th diagonal ([..., min(M, N)] for k=0), or the band
    k=(k0, k1) packed as [..., k1 - k0 + 1, max_len] with TF's `align`."""
    x = to_tensor(input)
    if x._value.ndim < 2:
        raise invalid("MatrixDiagPartV3", f"diag_part: input must be at least rank 2, got "
                      f"shape {list(x._value.shape)}")
    ks = _k_arg("MatrixDiagPartV3", k, align)
    _check_k_in_matrix("MatrixDiagPartV3", ks, *x._value.shape[-2:])
    return execute(MATRIX_DIAG_PART, (x,), {
        "k": ks, "padding_value": _scalar(padding_value, "MatrixDiagPartV3", "padding_value"),
        "align": align})


def _diag_dims(ks, max_len, num_rows, num_cols):
    min_rows = max_len - min(ks[1], 0)
    min_cols = max_len + max(ks[0], 0)
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = max(min_rows, min_cols)
    elif num_rows == -1:
        num_rows = min_rows
    elif num_cols == -1:
        num_cols = min_cols
    if num_rows < min_rows or num_cols < min_cols or \
            (num_rows != min_rows and num_cols != min_cols):
        raise invalid("MatrixDiagV3", f"diag: num_rows={num_rows}, num_cols={num_cols} do not fit "
                      f"diagonals of length {max_len} at k={list(ks)}; need num_rows >= "
                      f"{min_rows} and num_cols >= {min_cols} with one of them exact")
    return num_rows, num_cols


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """`tf.linalg.diag`: a (batch of) matrix with `diagonal` on the k-th diagonal(s)."""
    d = to_tensor(diagonal)
    ks = _k_arg("MatrixDiagV3", k, align)
    need = 1 if ks[0] == ks[1] else 2
    if d._value.ndim < need or (need == 2 and d._value.shape[-2] != ks[1] - ks[0] + 1):
        raise invalid("MatrixDiagV3", f"diag: for k={list(ks)} the diagonal must have shape "
                      f"[..., {'' if need == 1 else f'{ks[1] - ks[0] + 1}, '}max_len], got "
                      f"{list(d._value.shape)}")
    rows, cols = _diag_dims(ks, d._value.shape[-1], int(np.asarray(num_rows)),
                            int(np.asarray(num_cols)))
    return execute(MATRIX_DIAG, (d,), {
        "k": ks, "num_rows": rows, "num_cols": cols,
        "padding_value": _scalar(padding_value, "MatrixDiagV3", "padding_value"),
        "align": align})


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """`tf.linalg.set_diag`: `input` with its k-th diagonal(s) replaced."""
    x, d = to_tensor(input), to_tensor(diagonal)
    if x._value.ndim < 2:
        raise invalid("MatrixSetDiagV3", f"set_diag: input must be at least rank 2, got shape "
                      f"{list(x._value.shape)}")
    if d._dtype is not x._dtype:
        d = to_tensor(diagonal, x._dtype) if not isinstance(diagonal, Tensor) else d
    if d._dtype is not x._dtype:
        raise invalid("MatrixSetDiagV3", f"set_diag: diagonal has dtype {d._dtype.name} but "
                      f"input has {x._dtype.name}")
    ks = _k_arg("MatrixSetDiagV3", k, align)
    m, n = x._value.shape[-2:]
    _check_k_in_matrix("MatrixSetDiagV3", ks, m, n)
    _, max_len = _diag_layout(m, n, ks[0], ks[1], align)
    tail = (max_len,) if ks[0] == ks[1] else (ks[1] - ks[0] + 1, max_len)
    want = x._value.shape[:-2] + tail
    if d._value.shape != want:
        raise invalid("MatrixSetDiagV3", f"set_diag: diagonal must have shape {list(want)} for "
                      f"input {list(x._value.shape)} and k={list(ks)}, got "
                      f"{list(d._value.shape)}")
    return execute(MATRIX_SET_DIAG, (x, d), {"k": ks, "align": align})


def trace(x, name=None):
    """`tf.linalg.trace`: sum of the main diagonal of each matrix."""
    return math_ops.reduce_sum(diag_part(x), axis=-1)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """`tf.linalg.matrix_transpose`: swaps the last two dimensions."""
    a = to_tensor(a)
    if a._value.ndim < 2:
        raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2. Received "
                         f"`a` = {a!r} with shape: {list(a._value.shape)}")
    out = _mT(a)
    return math_ops.conj(out) if conjugate and a._dtype.is_complex else out


def adjoint(matrix, name=None):
    """`tf.linalg.adjoint`: conjugate transpose of the last two dimensions."""
    return matrix_transpose(matrix, conjugate=True)


def tensor_diag(diagonal, name=None):
    """`tf.linalg.tensor_diag`: output[i..., i...] = diagonal[i...]."""
    d = to_tensor(diagonal)
    shape = d._value.shape
    flat = diag(reshape(d, [-1]))
    return reshape(flat, shape + shape)


def tensor_diag_part(input, name=None):  # noqa: A002
    """`tf.linalg.tensor_diag_part`: the inverse of tensor_diag."""
    x = to_tensor(input)
    shape = x._value.shape
    half = shape[:len(shape) // 2]
    if len(shape) % 2 or shape[len(shape) // 2:] != half:
        raise invalid("DiagPart", f"tensor_diag_part: input must have shape [D1..Dk, D1..Dk], "
                      f"got {list(shape)}")
    n = int(np.prod(half))
    return reshape(diag_part(reshape(x, [n, n])), half)


# -- inverse, determinants ---------------------------------------------------------------------
def _inv_fwd(x, adjoint):
    a = np.conj(_np_mT(x)) if adjoint else x
    try:
        return np.linalg.inv(a)
    except _LinAlgError:
        raise invalid("MatrixInverse", f"Input is not invertible. (a singular {x.shape[-2]}x"
                      f"{x.shape[-1]} {x.dtype} matrix in input of shape {list(x.shape)}; "
                      f"use tf.linalg.pinv for a pseudo-inverse)") from None


def _inv_grad(g, ans, x, adjoint):
    if adjoint:
        return negative(matmul(ans, matmul(g, ans, transpose_a=True)))
    return negative(matmul(ans, matmul(g, ans, transpose_b=True), transpose_a=True))


MATRIX_INVERSE = register(
    "MatrixInverse", _inv_fwd, grad=_inv_grad, shape=_same_spec,
    unsupported="tf onnx tflite batch tf_import")


def _inv(x, adjoint=False):
    return execute(MATRIX_INVERSE, (x,), {"adjoint": bool(adjoint)})


def inv(input, adjoint=False, name=None):  # noqa: A002
    """`tf.linalg.inv`: inverse of each square matrix (InvalidArgumentError if singular)."""
    return _inv(_matrix_arg("MatrixInverse", input), adjoint)


def _det_fwd(x):
    return np.asarray(np.linalg.det(x), dtype=x.dtype)


def _det_grad(g, ans, x):
    return multiply(_expand2(multiply(g, ans)), _inv(x, adjoint=True))


MATRIX_DET = register(
    "MatrixDeterminant", _det_fwd, grad=_det_grad,
    shape=lambda x: Spec(tuple(x.shape[:-2]), x.dtype),
    unsupported="tf onnx tflite batch tf_import")


def det(input, name=None):  # noqa: A002
    """`tf.linalg.det`: determinant of each square matrix."""
    return execute(MATRIX_DET, (_matrix_arg("MatrixDeterminant", input),), None)


def _slogdet_fwd(x):
    sign, logabs = np.linalg.slogdet(x)
    real = np.finfo(x.dtype).dtype if x.dtype.kind == "c" else x.dtype
    return [np.asarray(sign, dtype=x.dtype), np.asarray(logabs, dtype=real).astype(x.dtype)]


def _slogdet_grad(g, ans, x):
    return multiply(_expand2(g[1]), _inv(x, adjoint=True))


SLOGDET = register(
    "LogMatrixDeterminant", _slogdet_fwd, grad=_slogdet_grad,
    shape=lambda x: [Spec(tuple(x.shape[:-2]), x.dtype)] * 2, multi_output=True,
    unsupported="tf onnx tflite batch tf_import")


def slogdet(input, name=None):  # noqa: A002
    """`tf.linalg.slogdet`: (sign, log|det|) of each square matrix, so large determinants
    do not overflow."""
    return execute(SLOGDET, (_matrix_arg("LogMatrixDeterminant", input),), None)


def logdet(matrix, name=None):
    """`tf.linalg.logdet`: log-determinant of Hermitian positive definite matrices, via
    Cholesky."""
    chol = cholesky(matrix)
    d = diag_part(chol)
    if d._dtype.is_complex:
        d = math_ops.real(d)
    return multiply(math_ops.reduce_sum(math_ops.log(d), axis=-1), 2.0)


# -- solves ------------------------------------------------------------------------------------
def _solve_core(a, b, op_name):
    try:
        return np.linalg.solve(a, b)
    except _LinAlgError:
        raise invalid(op_name, f"Input matrix is not invertible. (a singular matrix in "
                      f"{a.dtype}{list(a.shape)}; use tf.linalg.lstsq for a least-squares "
                      f"solution)") from None


def _solve_fwd(a, b, adjoint):
    return _solve_core(np.conj(_np_mT(a)) if adjoint else a, b, "MatrixSolve")


def _solve_back(g, ans, a, b, gb, adjoint, tri=None):
    """Shared adjoint of x = op(A)^-1 b: gb = op(A)^-T g, gA = -gb x^T (or its transpose)."""
    ga = negative(matmul(ans, gb, transpose_b=True) if adjoint
                  else matmul(gb, ans, transpose_b=True))
    if tri is not None:
        ga = _band(ga, -1, 0) if tri else _band(ga, 0, -1)
    return unbroadcast(ga, a, ans), unbroadcast(gb, b, ans)


def _solve_grad(g, ans, a, b, adjoint):
    gb = execute(MATRIX_SOLVE, (a, g), {"adjoint": not adjoint})
    return _solve_back(g, ans, a, b, gb, adjoint)


def _solve_shape(a, b, **_):
    return Spec(_batch_spec(a, b) + tuple(b.shape[-2:]), b.dtype)


MATRIX_SOLVE = register(
    "MatrixSolve", _solve_fwd, grad=_solve_grad, shape=_solve_shape,
    unsupported="tf onnx tflite batch tf_import")


def _rhs_arg(op_name, matrix, rhs, same_batch):
    a = _matrix_arg(op_name, matrix, "matrix")
    b = _matrix_arg(op_name, rhs if isinstance(rhs, Tensor) else to_tensor(rhs, a._dtype),
                    "rhs", square=False)
    if b._dtype is not a._dtype:
        raise invalid(op_name, f"{op_name}: matrix is {a._dtype.name} but rhs is "
                      f"{b._dtype.name}; tf.cast one of them")
    sa, sb = a._value.shape, b._value.shape
    if sa[-1] != sb[-2]:
        raise invalid(op_name, f"{op_name}: Input matrix and right-hand side must have the "
                      f"same number of rows: matrix {list(sa)} vs rhs {list(sb)}")
    try:
        ok = not same_batch or sa[:-2] == sb[:-2]
        np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        ok = False
    if not ok:
        raise invalid(op_name, f"{op_name}: batch dimensions of matrix {list(sa)} and rhs "
                      f"{list(sb)} must {'be equal' if same_batch else 'broadcast'}")
    return a, b


def solve(matrix, rhs, adjoint=False, name=None):
    """`tf.linalg.solve`: X with matrix @ X = rhs (adjoint(matrix) @ X = rhs if `adjoint`)."""
    a, b = _rhs_arg("MatrixSolve", matrix, rhs, same_batch=True)
    return execute(MATRIX_SOLVE, (a, b), {"adjoint": bool(adjoint)})


def _tri_fwd(a, b, lower, adjoint):
    a = np.tril(a) if lower else np.triu(a)
    return _solve_core(np.conj(_np_mT(a)) if adjoint else a, b, "MatrixTriangularSolve")


def _tri_grad(g, ans, a, b, lower, adjoint):
    gb = execute(TRIANGULAR_SOLVE, (a, g), {"lower": lower, "adjoint": not adjoint})
    return _solve_back(g, ans, a, b, gb, adjoint, tri=lower)


TRIANGULAR_SOLVE = register("MatrixTriangularSolve", _tri_fwd, grad=_tri_grad,
                            shape=_solve_shape, unsupported="tf onnx tflite batch tf_import")


def _tri_solve(a, b, lower=True, adjoint=False):
    return execute(TRIANGULAR_SOLVE, (a, b), {"lower": bool(lower), "adjoint": bool(adjoint)})


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """`tf.linalg.triangular_solve`: solves with the lower (or upper) triangle of `matrix`
    only; batch dimensions broadcast."""
    a, b = _rhs_arg("MatrixTriangularSolve", matrix, rhs, same_batch=False)
    return _tri_solve(a, b, lower, adjoint)


# -- cholesky ----------------------------------------------------------------------------------
def _cholesky_fwd(x):
    try:
        return np.linalg.cholesky(x)
    except _LinAlgError:
        raise invalid("Cholesky", "Cholesky decomposition was not successful. The input might "
                      "not be valid (it must be symmetric positive definite).") from None


def _cholesky_grad(g, ans, x):
    # A-bar = sym(L^-T Phi(L^T L-bar) L^-1), Phi = lower triangle with half the diagonal.
    n = ans._value.shape[-1]
    phi = _tril_mask(n, ans._value.dtype) - 0.5 * np.eye(n, dtype=ans._value.dtype)
    p = multiply(matmul(ans, g, transpose_a=True), wrap(phi))
    s = _tri_solve(ans, _mT(_tri_solve(ans, p, adjoint=True)), adjoint=True)
    return multiply(add(s, _mT(s)), 0.5)


CHOLESKY = register(
    "Cholesky", _cholesky_fwd, grad=_cholesky_grad, shape=_same_spec,
    unsupported="tf onnx tflite batch tf_import")


def cholesky(input, name=None):  # noqa: A002
    """`tf.linalg.cholesky`: lower-triangular L with L @ L^H = input (only the lower
    triangle of `input` is read)."""
    return execute(CHOLESKY, (_matrix_arg("Cholesky", input),), None)


def cholesky_solve(chol, rhs, name=None):
    """`tf.linalg.cholesky_solve`: solves A X = rhs given chol = cholesky(A)."""
    a, b = _rhs_arg("MatrixTriangularSolve", chol, rhs, same_batch=False)
    return _tri_solve(a, _tri_solve(a, b), adjoint=True)


# -- qr ----------------------------------------------------------------------------------------
QrResult = collections.namedtuple("Qr", ["q", "r"])


def _qr_fwd(x, full_matrices):
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q, r]


def _copyltu(m):
    """Lower triangle of m mirrored onto the upper one."""
    n = m._value.shape[-1]
    low = multiply(m, wrap(_tril_mask(n, m._value.dtype, -1)))
    return add(add(low, _mT(low)), multiply(m, wrap(np.eye(n, dtype=m._value.dtype))))


def _qr_grad(g, ans, x, full_matrices):
    gq, gr = g
    q, r = ans
    m, n = x._value.shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(f"QR gradient is implemented for inputs with rows >= "
                                  f"columns (reduced mode); got shape {list(x._value.shape)} "
                                  f"with full_matrices={full_matrices}")
    mm = subtract(matmul(r, gr, transpose_b=True), matmul(gq, q, transpose_a=True))
    b = add(gq, matmul(q, _copyltu(mm)))
    return _mT(_tri_solve(r, _mT(b), lower=False))


def _qr_shape(x, full_matrices):
    m, n = x.shape[-2:]
    k = m if full_matrices or m is None or n is None else min(m, n)
    lead = tuple(x.shape[:-2])
    return [Spec(lead + (m, k), x.dtype), Spec(lead + (k, n), x.dtype)]


QR = register(
    "Qr", _qr_fwd, grad=_qr_grad, shape=_qr_shape, multi_output=True,
    unsupported="tf onnx tflite batch tf_import")


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """`tf.linalg.qr`: (q, r) with q orthonormal columns and r upper triangular; the
    gradient is defined for rows >= columns."""
    x = _matrix_arg("Qr", input, square=False)
    return QrResult(*execute(QR, (x,), {"full_matrices": bool(full_matrices)}))


# -- eigh / svd --------------------------------------------------------------------------------
def _offdiag_inverse(diff):
    """1 / diff off the diagonal, 0 on it (diff's diagonal is 0)."""
    n = diff._value.shape[-1]
    eye_mask = wrap(np.eye(n, dtype=bool))
    safe = math_ops.where(eye_mask, math_ops.ones_like_t(diff), diff)
    return math_ops.where(eye_mask, math_ops.zeros_like_t(diff), math_ops.reciprocal(safe))


def _eigh_fwd(x):
    e, v = np.linalg.eigh(x)
    return [e.astype(x.dtype), v]


def _eigh_grad(g, ans, x):
    ge, gv = g
    e, v = ans
    f = _offdiag_inverse(subtract(array_ops.expand_dims(e, -2), array_ops.expand_dims(e, -1)))
    inner = add(diag(ge), multiply(f, matmul(v, gv, transpose_a=True)))
    ga = matmul(v, matmul(inner, v, transpose_b=True))
    # eigh reads only the lower triangle: fold the symmetric gradient onto it, as TF.
    n = ga._value.shape[-1]
    low = _band(add(ga, _mT(ga)), -1, 0)
    return subtract(low, multiply(ga, wrap(np.eye(n, dtype=ga._value.dtype))))


EIGH = register(
    "SelfAdjointEigV2", _eigh_fwd, grad=_eigh_grad, multi_output=True,
    shape=lambda x: [Spec(tuple(x.shape[:-1]), x.dtype), x],
    unsupported="tf onnx tflite batch tf_import")


def eigh(tensor, name=None):
    """`tf.linalg.eigh`: (eigenvalues ascending, eigenvectors as columns) of self-adjoint
    matrices; only the lower triangle is read."""
    return tuple(execute(EIGH, (_matrix_arg("SelfAdjointEigV2", tensor, "tensor"),), None))


def eigvalsh(tensor, name=None):
    """`tf.linalg.eigvalsh`: eigenvalues of self-adjoint matrices, ascending."""
    return eigh(tensor)[0]


def _svd_fwd(x, full_matrices, compute_uv):
    if not compute_uv:
        return [np.linalg.svd(x, compute_uv=False)]
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return [s, u, np.conj(_np_mT(vh))]


def _svd_values_grad(gs, x):
    s, u, v = execute(SVD, (x,), {"full_matrices": False, "compute_uv": True})
    return matmul(multiply(u, array_ops.expand_dims(gs, -2)), v, transpose_b=True)


def _svd_grad(g, ans, x, full_matrices, compute_uv):
    if not compute_uv:
        return _svd_values_grad(g[0], x)
    m, n = x._value.shape[-2:]
    if full_matrices and m != n:
        raise NotImplementedError("SVD gradient with full_matrices=True is defined only for "
                                  "square matrices; use full_matrices=False")
    gs, gu, gv = g
    s, u, v = ans
    s2 = math_ops.square(s)
    f = _offdiag_inverse(subtract(array_ops.expand_dims(s2, -2), array_ops.expand_dims(s2, -1)))
    utgu, vtgv = matmul(u, gu, transpose_a=True), matmul(v, gv, transpose_a=True)
    sr = array_ops.expand_dims(s, -2)  # s along columns: X * sr scales column j by s_j
    jj = multiply(f, subtract(utgu, _mT(utgu)))
    kk = multiply(f, subtract(vtgv, _mT(vtgv)))
    core = add(add(multiply(jj, sr), diag(gs)), multiply(_mT(sr), kk))
    ga = matmul(u, matmul(core, v, transpose_b=True))
    inv_s = math_ops.reciprocal(sr)
    if m > n:  # the part of gu outside span(u)
        gu_perp = subtract(gu, matmul(u, utgu))
        ga = add(ga, matmul(multiply(gu_perp, inv_s), v, transpose_b=True))
    if n > m:
        gv_perp = subtract(gv, matmul(v, vtgv))
        ga = add(ga, matmul(multiply(u, inv_s), gv_perp, transpose_b=True))
    return ga


def _svd_shape(x, full_matrices, compute_uv):
    m, n = x.shape[-2:]
    k = None if m is None or n is None else min(m, n)
    lead = tuple(x.shape[:-2])
    s = Spec(lead + (k,), x.dtype)
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, Spec(lead + (m, ku), x.dtype), Spec(lead + (n, kv), x.dtype)]


SVD = register(
    "Svd", _svd_fwd, grad=_svd_grad, shape=_svd_shape, multi_output=True,
    unsupported="tf onnx tflite batch tf_import")


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """`tf.linalg.svd`: (s, u, v) with tensor = u @ diag(s) @ adjoint(v), singular values
    descending; only s when compute_uv=False. Note v, not its adjoint, as TF."""
    x = _matrix_arg("Svd", tensor, "tensor", square=False)
    out = execute(SVD, (x,), {"full_matrices": bool(full_matrices),
                              "compute_uv": bool(compute_uv)})
    return tuple(out) if compute_uv else out[0]


# -- composites --------------------------------------------------------------------------------
def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """`tf.linalg.matvec`: a @ b for a (batch of) matrix and vector."""
    b = to_tensor(b)
    out = matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return array_ops.squeeze(out, -1)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """`tf.linalg.lstsq`: least-squares solution by the regularised normal equations (TF's
    fast path; `fast=False` takes the same path)."""
    a = _matrix_arg("MatrixSolveLs", matrix, "matrix", square=False)
    b = _matrix_arg("MatrixSolveLs", rhs if isinstance(rhs, Tensor) else
                    to_tensor(rhs, a._dtype), "rhs", square=False)
    m, n = a._value.shape[-2:]
    if b._value.shape[-2] != m or b._dtype is not a._dtype:
        raise invalid("MatrixSolveLs", f"lstsq: matrix {a._dtype.name}{list(a._value.shape)} "
                      f"and rhs {b._dtype.name}{list(b._value.shape)} must share dtype and "
                      f"row count")
    lam = to_tensor(l2_regularizer, a._dtype)
    if m >= n:
        gram = matmul(a, a, transpose_a=True)
        gram = add(gram, multiply(lam, _const(np.eye(n), a)))
        return cholesky_solve(cholesky(gram), matmul(a, b, transpose_a=True))
    gram = add(matmul(a, a, transpose_b=True), multiply(lam, _const(np.eye(m), a)))
    return matmul(a, cholesky_solve(cholesky(gram), b), transpose_a=True)


def pinv(a, rcond=None, validate_args=False, name=None):
    """`tf.linalg.pinv`: Moore-Penrose pseudo-inverse via the SVD; singular values below
    rcond * max(s) are dropped (rcond defaults to 10 * max(m, n) * eps)."""
    x = _matrix_arg("Svd", a, "a", square=False)
    m, n = x._value.shape[-2:]
    if rcond is None:
        rcond = 10.0 * max(m, n) * float(np.finfo(x._value.dtype).eps)
    s, u, v = svd(x)
    cutoff = multiply(math_ops.reduce_max(s, axis=-1, keepdims=True), float(rcond))
    keep = math_ops.greater(s, cutoff)
    s_safe = math_ops.where(keep, s, math_ops.ones_like_t(s))
    s_inv = math_ops.where(keep, math_ops.reciprocal(s_safe), math_ops.zeros_like_t(s))
    return matmul(multiply(v, array_ops.expand_dims(s_inv, -2)), u, transpose_b=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """`tf.linalg.matrix_rank` (int32): singular values above `tol` (default
    max(s) * max(m, n) * eps)."""
    x = _matrix_arg("Svd", a, "a", square=False)
    s = svd(x, compute_uv=False)
    if tol is None:
        m, n = x._value.shape[-2:]
        tol = multiply(math_ops.reduce_max(s, axis=-1, keepdims=True),
                       float(max(m, n) * np.finfo(x._value.dtype).eps))
    return math_ops.reduce_sum(math_ops.cast(math_ops.greater(s, tol), dtypes.int32), axis=-1)


def cross(a, b, name=None):
    """`tf.linalg.cross`: pairwise cross product of 3-vectors in the last dimension."""
    a = to_tensor(a)
    b = to_tensor(b) if isinstance(b, Tensor) else to_tensor(b, a._dtype)
    if a._value.shape[-1:] != (3,) or b._value.shape[-1:] != (3,):
        raise invalid("Cross", f"cross: inputs must have 3 elements in their last dimension, "
                      f"got {list(a._value.shape)} and {list(b._value.shape)}")
    a1, a2, a3 = array_ops.unstack(a, axis=-1)
    b1, b2, b3 = array_ops.unstack(b, axis=-1)
    return array_ops.stack([subtract(multiply(a2, b3), multiply(a3, b2)),
                            subtract(multiply(a3, b1), multiply(a1, b3)),
                            subtract(multiply(a1, b2), multiply(a2, b1))], axis=-1)


# -- norms -------------------------------------------------------------------------------------
_VECTOR_ORDS = ("euclidean", 1, 2, np.inf)
_MATRIX_ORDS = ("euclidean", "fro", 1, 2, np.inf)


def _check_ord(ord, is_matrix):  # noqa: A002
    if is_matrix:
        if isinstance(ord, bool) or ord not in _MATRIX_ORDS:
            raise ValueError(f"'ord' must be a supported matrix norm in {list(_MATRIX_ORDS)}, "
                             f"got {ord!r}")
        return
    if isinstance(ord, str):
        if ord != "euclidean":
            raise ValueError(f"'ord' must be a supported vector norm ('euclidean', 1, 2, "
                             f"np.inf or any positive real number), got {ord!r}")
    elif not isinstance(ord, (int, float, np.number)) or not ord > 0:
        raise ValueError(f"'ord' must be a supported vector norm ('euclidean', 1, 2, np.inf or "
                         f"any positive real number), got {ord!r}")


def _abs(x):
    return math_ops.abs(x) if not x._dtype.is_complex else \
        math_ops.sqrt(math_ops.real(multiply(x, math_ops.conj(x))))


def _sqsum(x, axes):
    if x._dtype.is_complex:
        return math_ops.reduce_sum(math_ops.real(multiply(x, math_ops.conj(x))), axes, True)
    return math_ops.reduce_sum(math_ops.square(x), axes, True)


def _vector_norm(x, ord, axes):  # noqa: A002
    if ord in ("euclidean", 2):
        return math_ops.sqrt(_sqsum(x, axes))
    if ord == 1:
        return math_ops.reduce_sum(_abs(x), axes, True)
    if ord == np.inf:
        return math_ops.reduce_max(_abs(x), axes, True)
    p = float(ord)
    return math_ops.pow(math_ops.reduce_sum(math_ops.pow(_abs(x), p), axes, True), 1.0 / p)


def _matrix_norm(x, ord, axes):  # noqa: A002
    r, c = axes
    if ord in ("euclidean", "fro"):
        return math_ops.sqrt(_sqsum(x, list(axes)))
    if ord == 1:
        return math_ops.reduce_max(math_ops.reduce_sum(_abs(x), r, True), c, True)
    if ord == np.inf:
        return math_ops.reduce_max(math_ops.reduce_sum(_abs(x), c, True), r, True)
    nd = x._value.ndim
    rest = [i for i in range(nd) if i not in axes]
    moved = transpose(x, rest + [r, c])
    top = math_ops.reduce_max(svd(moved, compute_uv=False), axis=-1)
    keep_shape = [1 if i in axes else d for i, d in enumerate(x._value.shape)]
    return reshape(top, keep_shape)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """`tf.norm` / `tf.linalg.norm`: vector norms ('euclidean', 1, 2, np.inf, p > 0) over
    all values or one axis, matrix norms ('fro', 'euclidean', 1, 2, np.inf) over a pair of
    axes."""
    x = check_kind("Norm", to_tensor(tensor), FLOATC, "tensor")
    nd = x._value.ndim
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if axis is not None and not is_matrix and not isinstance(axis, (int, np.integer)):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                         f"got {axis!r}")
    _check_ord(ord, is_matrix)
    if is_matrix:
        axes = tuple(int(a) % nd if -nd <= int(a) < nd else None for a in axis)
        if None in axes or axes[0] == axes[1]:
            raise ValueError(f"'axis' must be a tuple of 2 unique in-range integers for a "
                             f"tensor of rank {nd}, got {axis!r}")
        out = _matrix_norm(x, ord, axes)
    else:
        if axis is not None and not -nd <= int(axis) < max(nd, 1):
            raise ValueError(f"'axis' {axis} is out of range for a tensor of rank {nd}")
        axes = tuple(range(nd)) if axis is None else (int(axis) % nd,)
        out = _vector_norm(x, ord, list(axes))
    if not keepdims:
        out = reshape(out, [d for i, d in enumerate(out._value.shape) if i not in axes])
    return out


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """`tf.linalg.normalize`: (tensor / norm, norm) with the norm's dimensions kept."""
    x = to_tensor(tensor)
    n = norm(x, ord=ord, axis=axis, keepdims=True)
    return math_ops.divide(x, n), n

