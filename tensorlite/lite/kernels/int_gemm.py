"""Exact integer matrix products C[M, N] int32 = A[M, K] @ W[N, K].T for the int8
interpreter's convolutions and fully-connected layers, written as LLVM IR and compiled for
the host by llvmlite (numba's compiler, the `jit` extra); called through ctypes, which
releases the GIL. Three kinds, the first the host runs is used:

- "vnni" (AVX-512 VNNI): A uint8 (int8 x as x + 128), W int8; `vpdpbusd` sums each group
  of four byte products into 32 bits, 64 multiply-adds an instruction.
- "madd512" (AVX-512BW) and "madd256" (AVX2): A and W int16 (int8/uint8 widened);
  `vpmaddwd` multiplies pairs of 16-bit values and adds each pair into 32 bits, then
  `vpaddd` accumulates: 32 (16) multiply-adds per two instructions, XNNPACK's method on
  AVX2. Products of 8-bit values in 16-bit lanes cannot saturate (|x * w| <= 255 * 128 <
  2**15 * 2), unlike `vpmaddubsw`'s 16-bit pair sums (2 * 255 * 127 > 2**15), so no
  7-bit limit or split is needed. These are compiled with VNNI switched off, so they run
  here the instructions a machine without VNNI runs.

Every int32 sum is exact: |sum| <= K * 255 * 128 < 2**31 for K <= DEPTH_MAX.

Layout: A [M, Kp] (K padded with zeros to the group: 4 bytes or 2 int16, one int32 lane),
W packed by `pack_weights` into [N/(L*T), Kp/g, L*T, g] blocks (L int32 lanes a vector, g
values a lane), C [M, N] int32. Rows go two at a time, each keeping T accumulators of L
channels in registers over the whole depth: one lane of each row is broadcast and
multiplied into the same T weight vectors (2T independent chains hide the latency).

The switch: TENSORLITE_INT8_GEMM=auto (default: vnni, else madd512, else madd256), a kind's
name (used when the host runs it, else none), or "blas" (none: the interpreter's exact
float32 BLAS blocks). TENSORLITE_NUMBA=0 or no llvmlite also means none.

Example:
    >>> kind = choice()                       # None: no compiled kernel here
    >>> gemm = Gemm(weights_nk_int8, kind)
    >>> gemm(rows_padded, out_int32)          # rows: KINDS[kind].dtype, [M, padded_depth]
"""
import ctypes
import os
from collections import namedtuple

import numpy as np

from tensorlite.ops import numba_backend

DEPTH_MAX = ((1 << 31) - 1) // (255 * 128)
# lanes: int32 lanes a vector; dtype: A's and W's element types; needs: host features;
# off: features switched off for the compile
Kind = namedtuple("Kind", "lanes dtype wdtype needs off")
KINDS = {
    "vnni": Kind(16, np.uint8, np.int8, ("avx512vnni",), ()),
    "madd512": Kind(16, np.int16, np.int16, ("avx512bw",), ("avx512vnni", "avxvnni")),
    "madd256": Kind(8, np.int16, np.int16, ("avx2",), ("avx512f", "avx512vnni", "avxvnni")),
}
_INTRINSIC = {"vnni": "llvm.x86.avx512.vpdpbusd.512", "madd512": "llvm.x86.avx512.pmaddw.d.512",
              "madd256": "llvm.x86.avx2.pmadd.wd"}
# (T, R, narrow): narrow madd kernels read int8 weights and widen them as they load them
# (half the bytes: for few rows, whose products stream the weights once, a third faster;
# many rows reuse them from cache and lose the widening instruction's time)
_SHAPES = [(t, r, narrow) for t in (1, 2, 4) for r in (1, 2) for narrow in (False, True)]
NARROW_ROWS = 4  # Gemm's default: narrow weights for at most this many rows
_ENGINE = {}  # kind: {(T, R): ctypes function} or None; "engines": kept alive


def group(kind):
    """Values of A in one int32 lane (4 bytes or 2 int16)."""
    return 4 // np.dtype(KINDS[kind].dtype).itemsize


def padded_depth(k, kind):
    g = group(kind)
    return -(-k // g) * g


def _product(kind, lanes, pairs, t, r, narrow):
    """IR of the multiply-adds of one depth step: %nacc{q}_{i} from %acc, %bc{q}, %wv{i}."""
    vec = f"<{lanes} x i32>"
    if kind == "vnni":
        return "\n".join(f"  %nacc{q}_{i} = call {vec} @{_INTRINSIC[kind]}({vec} %acc{q}_{i}, "
                         f"{vec} %bc{q}, {vec} %wv{i})" for q, i in pairs)
    half = f"<{2 * lanes} x i16>"
    casts = [f"  %x{q} = bitcast {vec} %bc{q} to {half}" for q in range(r)] + \
        [f"  %y{i} = sext <{2 * lanes} x i8> %wv{i} to {half}" if narrow else
         f"  %y{i} = bitcast {vec} %wv{i} to {half}" for i in range(t)]
    return "\n".join(casts + [f"  %p{q}_{i} = call {vec} @{_INTRINSIC[kind]}({half} %x{q}, "
                              f"{half} %y{i})\n  %nacc{q}_{i} = add {vec} %acc{q}_{i}, "
                              f"%p{q}_{i}" for q, i in pairs])


def _ir(kind, t, r, narrow):
    """LLVM IR of the kernel with T accumulators (L int32 channels each) for each of R rows
    computed together (they share each weight load). M must be a multiple of R."""
    lanes = KINDS[kind].lanes
    vec, wbytes = f"<{lanes} x i32>", lanes * (group(kind) if narrow else 4)
    wvec = f"<{2 * lanes} x i8>" if narrow else vec
    pairs = [(q, i) for q in range(r) for i in range(t)]
    acc_phis = "\n".join(f"  %acc{q}_{i} = phi {vec} [zeroinitializer, %row], "
                         f"[%nacc{q}_{i}, %k_body]" for q, i in pairs)
    rows = "\n".join(f"  %m{q} = add i64 %m, {q}\n"
                     f"  %aoff{q} = mul i64 %m{q}, %lda\n"
                     f"  %Arow{q} = getelementptr i8, i8* %A, i64 %aoff{q}\n"
                     f"  %Arow32_{q} = bitcast i8* %Arow{q} to i32*" for q in range(r))
    loads = "\n".join(f"  %ap{q} = getelementptr i32, i32* %Arow32_{q}, i64 %kb\n"
                      f"  %a{q} = load i32, i32* %ap{q}, align 1\n"
                      f"  %b0_{q} = insertelement {vec} undef, i32 %a{q}, i32 0\n"
                      f"  %bc{q} = shufflevector {vec} %b0_{q}, {vec} undef, "
                      f"<{lanes} x i32> zeroinitializer" for q in range(r))
    weights = "\n".join(f"  %wp{i}.i = add i64 %wbase, {i * wbytes}\n"
                        f"  %wp{i} = getelementptr i8, i8* %Wn, i64 %wp{i}.i\n"
                        f"  %wv{i}.p = bitcast i8* %wp{i} to {wvec}*\n"
                        f"  %wv{i} = load {wvec}, {wvec}* %wv{i}.p, align 1" for i in range(t))
    stores = "\n".join(f"  %crow{q} = mul i64 %m{q}, %ldc" for q in range(r)) + "\n" + \
        "\n".join(f"  %cp{q}_{i}.i = add i64 %crow{q}, %ncol{i}\n"
                  f"  %cp{q}_{i} = getelementptr i32, i32* %C, i64 %cp{q}_{i}.i\n"
                  f"  %cv{q}_{i}.p = bitcast i32* %cp{q}_{i} to {vec}*\n"
                  f"  store {vec} %acc{q}_{i}, {vec}* %cv{q}_{i}.p, align 4" for q, i in pairs)
    cols = "\n".join(f"  %ncol{i} = add i64 %ncol, {i * lanes}" for i in range(t))
    return f"""
define void @{_name(t, r, narrow)}(i8* noalias %A, i64 %lda, i8* noalias %W, i32* noalias %C,
                         i64 %ldc, i64 %M, i64 %KB, i64 %NB) {{
entry:
  %wblock = mul i64 %KB, {wbytes * t}
  br label %n_head
n_head:
  %nb = phi i64 [0, %entry], [%nb.next, %n_tail]
  %n_done = icmp sge i64 %nb, %NB
  br i1 %n_done, label %exit, label %n_body
n_body:
  %woff = mul i64 %nb, %wblock
  %Wn = getelementptr i8, i8* %W, i64 %woff
  br label %m_head
m_head:
  %m = phi i64 [0, %n_body], [%m.next, %m_tail]
  %m_done = icmp sge i64 %m, %M
  br i1 %m_done, label %n_tail, label %row
row:
{rows}
  br label %k_head
k_head:
  %kb = phi i64 [0, %row], [%kb.next, %k_body]
{acc_phis}
  %k_done = icmp sge i64 %kb, %KB
  br i1 %k_done, label %m_tail, label %k_body
k_body:
{loads}
  %wbase = mul i64 %kb, {wbytes * t}
{weights}
{_product(kind, lanes, pairs, t, r, narrow)}
  %kb.next = add i64 %kb, 1
  br label %k_head
m_tail:
  %ncol = mul i64 %nb, {lanes * t}
{cols}
{stores}
  %m.next = add i64 %m, {r}
  br label %m_head
n_tail:
  %nb.next = add i64 %nb, 1
  br label %n_head
exit:
  ret void
}}
"""


def _name(t, r, narrow):
    return f"gemm{t}_{r}{'n' if narrow else ''}"


def _declare(kind):
    lanes = KINDS[kind].lanes
    vec, half = f"<{lanes} x i32>", f"<{2 * lanes} x i16>"
    args = f"{vec}, {vec}, {vec}" if kind == "vnni" else f"{half}, {half}"
    return f"declare {vec} @{_INTRINSIC[kind]}({args})\n"


def _compile(kind):
    """{(T, R): ctypes function} of `kind`, compiled once per process; None when the host
    cannot run it (or llvmlite is missing)."""
    if kind in _ENGINE:
        return _ENGINE[kind]
    _ENGINE[kind] = None
    if not numba_backend.available():
        return None
    try:
        import llvmlite.binding as llvm  # noqa: PLC0415 - optional (numba's compiler)
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        features = llvm.get_host_cpu_features()
        if not all(features.get(f) for f in KINDS[kind].needs):
            return None
        flags = features.flatten() + "".join(f",-{f}" for f in KINDS[kind].off)
        machine = llvm.Target.from_default_triple().create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=flags, opt=3)
        shapes = [s for s in _SHAPES if kind != "vnni" or not s[2]]  # VNNI: bytes already
        module = llvm.parse_assembly(_declare(kind) + "".join(_ir(kind, *shape)
                                                              for shape in shapes))
        module.verify()
        engine = llvm.create_mcjit_compiler(module, machine)
        engine.finalize_object()
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                 ctypes.c_int64, ctypes.c_int64)
        _ENGINE.setdefault("engines", []).append(engine)  # keeps the machine code alive
        _ENGINE[kind] = {shape: proto(engine.get_function_address(_name(*shape)))
                         for shape in shapes}
    except Exception:  # noqa: BLE001 - an llvmlite without these APIs: BLAS carries on
        _ENGINE[kind] = None
    return _ENGINE[kind]


def available(kind):
    """Whether `kind` runs on this machine (llvmlite, numba not switched off, its CPU
    features)."""
    return numba_backend.available() and _compile(kind) is not None


def choice():
    """The kind TENSORLITE_INT8_GEMM selects on this machine (read on each call), or None
    for the float32 BLAS path."""
    wanted = os.environ.get("TENSORLITE_INT8_GEMM", "auto")
    if wanted not in ("auto", "blas", *KINDS):
        raise ValueError(f"TENSORLITE_INT8_GEMM={wanted!r} is not one of auto, blas, "
                         f"{', '.join(KINDS)}")
    kinds = list(KINDS) if wanted == "auto" else [] if wanted == "blas" else [wanted]
    return next((k for k in kinds if available(k)), None)


def pack_weights(w_nk, t, kind, narrow=False):
    """int8 weights [N, K] as `kind`'s blocks [N/(L*t), Kp/g, L*t, g] (K zero-padded), of
    the kind's weight type (int8 where `narrow`)."""
    n, k = w_nk.shape
    kp, g, lanes = padded_depth(k, kind), group(kind), KINDS[kind].lanes
    w = np.zeros((n, kp), np.int8 if narrow else KINDS[kind].wdtype)
    w[:, :k] = w_nk
    blocks = w.reshape(n // (lanes * t), lanes * t, kp // g, g).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks)


def fits(n, k, kind):
    """Whether `kind` (None: none) takes N channels of depth K: N in whole vectors, K within
    exact int32 sums."""
    return kind is not None and n % KINDS[kind].lanes == 0 and 0 < k <= DEPTH_MAX and \
        available(kind)


class Gemm:
    """C[M, N] int32 = A[M, Kp] @ W[N, K].T, exactly, bound to its weights; A is `kind`'s
    dtype (uint8 for vnni, int16 for madd). Usable where `fits(N, K, kind)`; `rows` (the
    M it will see) picks the madd weights' width (see _SHAPES)."""

    def __init__(self, w_nk, kind, rows=None):
        n, k = w_nk.shape
        lanes = KINDS[kind].lanes
        narrow = rows is not None and rows <= NARROW_ROWS and kind != "vnni"
        self.t = 4 if n % (4 * lanes) == 0 else (2 if n % (2 * lanes) == 0 else 1)
        self.packed = pack_weights(w_nk, self.t, kind, narrow)
        self.n, self.kp, self.dtype = n, padded_depth(k, kind), np.dtype(KINDS[kind].dtype)
        self.lanes, self.group = lanes, group(kind)
        fns = _compile(kind)
        self.pairs, self.single = fns[(self.t, 2, narrow)], fns[(self.t, 1, narrow)]

    def __call__(self, a, c):
        """c[...] = a @ W.T; a: [M, Kp] C-contiguous, c: [M, N] int32 C-contiguous (checked:
        the machine code trusts these shapes)."""
        if a.dtype != self.dtype or c.dtype != np.int32 or a.shape[1] != self.kp or \
                c.shape != (a.shape[0], self.n) or not (a.flags.c_contiguous and
                                                        c.flags.c_contiguous):
            raise ValueError(f"int_gemm.Gemm needs {self.dtype.name} rows [M, {self.kp}] and "
                             f"an int32 result [M, {self.n}], both C-contiguous; got "
                             f"{a.dtype} {a.shape} and {c.dtype} {c.shape}")
        m, even = a.shape[0], a.shape[0] - a.shape[0] % 2
        lda = self.kp * self.dtype.itemsize
        w, depth = self.packed.ctypes.data, self.kp // self.group
        blocks = self.n // (self.lanes * self.t)
        if even:  # rows two at a time, then the odd last one alone
            self.pairs(a.ctypes.data, lda, w, c.ctypes.data, self.n, even, depth, blocks)
        if m > even:
            self.single(a.ctypes.data + even * lda, lda, w, c.ctypes.data + even * self.n * 4,
                        self.n, 1, depth, blocks)
