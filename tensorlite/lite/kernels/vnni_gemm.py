"""An exact uint8 x int8 -> int32 matrix product on AVX-512 VNNI (`vpdpbusd`: 64
multiply-adds of unsigned by signed bytes per instruction, four times float32's FMA on the
same core), for the int8 interpreter's convolutions. Written as LLVM IR and compiled for the
host by llvmlite (numba's compiler, the `jit` extra); called through ctypes, which releases
the GIL. `vpdpbusd` sums each group of four byte products into 32 bits without saturation,
so every sum is exact (|sum| <= K * 255 * 128 < 2**31 for K <= DEPTH_MAX).

Layout: rows A [M, K4] uint8 (K padded with zeros to a multiple of 4), weights packed by
`pack_weights` into [N/(16T), K4/4, 16T, 4] int8 blocks, result C [M, N] int32. Rows go
two at a time, each keeping T accumulators of 16 channels in registers over the whole
depth: a 4-byte group of each row is broadcast and multiplied into the same T weight
vectors (2T independent chains hide the instruction's latency; an odd last row goes
alone).

`available()` is False without llvmlite, with TENSORLITE_NUMBA=0, or on a CPU without
avx512vnni; the interpreter then keeps its float32 BLAS products.

Example:
    >>> gemm = Gemm(weights_nk_int8, rows=900)     # None-safe: check available() first
    >>> gemm(rows_uint8_padded, out_int32)
"""
import ctypes

import numpy as np

from tensorlite.ops import numba_backend

DEPTH_MAX = ((1 << 31) - 1) // (255 * 128)
_ENGINE = {}  # "engine": the llvmlite execution engine, "fn": {T: ctypes function}


def _ir(t, r):
    """LLVM IR of the kernel with T accumulators (16 int32 channels each) for each of R
    rows computed together (they share each weight load; R * T independent chains keep
    vpdpbusd's latency hidden). M must be a multiple of R."""
    pairs = [(q, i) for q in range(r) for i in range(t)]
    acc_phis = "\n".join(f"  %acc{q}_{i} = phi <16 x i32> [zeroinitializer, %row], "
                         f"[%nacc{q}_{i}, %k_body]" for q, i in pairs)
    rows = "\n".join(f"  %m{q} = add i64 %m, {q}\n"
                     f"  %aoff{q} = mul i64 %m{q}, %lda\n"
                     f"  %Arow{q} = getelementptr i8, i8* %A, i64 %aoff{q}\n"
                     f"  %Arow32_{q} = bitcast i8* %Arow{q} to i32*" for q in range(r))
    loads = "\n".join(f"  %ap{q} = getelementptr i32, i32* %Arow32_{q}, i64 %kb\n"
                      f"  %a{q} = load i32, i32* %ap{q}, align 1\n"
                      f"  %b0_{q} = insertelement <16 x i32> undef, i32 %a{q}, i32 0\n"
                      f"  %bc{q} = shufflevector <16 x i32> %b0_{q}, <16 x i32> undef, "
                      f"<16 x i32> zeroinitializer" for q in range(r))
    weights = "\n".join(f"  %wp{i}.i = add i64 %wbase, {i * 64}\n"
                        f"  %wp{i} = getelementptr i8, i8* %Wn, i64 %wp{i}.i\n"
                        f"  %wv{i}.p = bitcast i8* %wp{i} to <16 x i32>*\n"
                        f"  %wv{i} = load <16 x i32>, <16 x i32>* %wv{i}.p, align 1"
                        for i in range(t))
    products = "\n".join(f"  %nacc{q}_{i} = call <16 x i32> @llvm.x86.avx512.vpdpbusd.512("
                         f"<16 x i32> %acc{q}_{i}, <16 x i32> %bc{q}, <16 x i32> %wv{i})"
                         for q, i in pairs)
    stores = "\n".join(f"  %crow{q} = mul i64 %m{q}, %ldc" for q in range(r)) + "\n" + \
        "\n".join(f"  %cp{q}_{i}.i = add i64 %crow{q}, %ncol{i}\n"
                       f"  %cp{q}_{i} = getelementptr i32, i32* %C, i64 %cp{q}_{i}.i\n"
                       f"  %cv{q}_{i}.p = bitcast i32* %cp{q}_{i} to <16 x i32>*\n"
                       f"  store <16 x i32> %acc{q}_{i}, <16 x i32>* %cv{q}_{i}.p, align 4"
                       for q, i in pairs)
    cols = "\n".join(f"  %ncol{i} = add i64 %ncol, {i * 16}" for i in range(t))
    return f"""
define void @qgemm{t}_{r}(i8* noalias %A, i64 %lda, i8* noalias %W, i32* noalias %C,
                         i64 %ldc, i64 %M, i64 %KB, i64 %NB) {{
entry:
  %wblock = mul i64 %KB, {64 * t}
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
  %wbase = mul i64 %kb, {64 * t}
{weights}
{products}
  %kb.next = add i64 %kb, 1
  br label %k_head
m_tail:
  %ncol = mul i64 %nb, {16 * t}
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


_DECLARE = "declare <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32>, <16 x i32>, " \
    "<16 x i32>)\n"
_SHAPES = [(t, r) for t in (1, 2, 4) for r in (1, 2)]


def _compile():
    """{T: ctypes function} for T in 1, 2, 4, compiled once per process; None when the
    kernel cannot run here."""
    if "fn" in _ENGINE:
        return _ENGINE["fn"]
    _ENGINE["fn"] = None
    if not numba_backend.available():
        return None
    try:
        import llvmlite.binding as llvm  # noqa: PLC0415 - optional (numba's compiler)
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        if not llvm.get_host_cpu_features().get("avx512vnni"):
            return None
        target = llvm.Target.from_default_triple()
        machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                               features=llvm.get_host_cpu_features().flatten(),
                                               opt=3)
        module = llvm.parse_assembly(_DECLARE + "".join(_ir(t, r) for t, r in _SHAPES))
        module.verify()
        engine = llvm.create_mcjit_compiler(module, machine)
        engine.finalize_object()
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                 ctypes.c_int64, ctypes.c_int64)
        _ENGINE["engine"] = engine  # keeps the machine code alive
        _ENGINE["fn"] = {(t, r): proto(engine.get_function_address(f"qgemm{t}_{r}"))
                         for t, r in _SHAPES}
    except Exception:  # noqa: BLE001 - an llvmlite without these APIs: BLAS carries on
        _ENGINE["fn"] = None
    return _ENGINE["fn"]


def available():
    """Whether the VNNI kernel runs on this machine (llvmlite, numba not switched off,
    avx512vnni)."""
    return numba_backend.available() and _compile() is not None  # the switch, each time


def padded_depth(k):
    return -(-k // 4) * 4


def pack_weights(w_nk, t):
    """int8 weights [N, K] as the kernel's blocks [N/(16t), K4/4, 16t, 4] (K zero-padded)."""
    n, k = w_nk.shape
    k4 = padded_depth(k)
    w = np.zeros((n, k4), np.int8)
    w[:, :k] = w_nk
    blocks = w.reshape(n // (16 * t), 16 * t, k4 // 4, 4).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks)


class Gemm:
    """C[M, N] int32 = A[M, K4] uint8 @ W[N, K].T int8, exactly, bound to its weights.
    Usable when available(), N is a multiple of 16 and K <= DEPTH_MAX (see `fits`)."""

    @staticmethod
    def fits(n, k):
        return n % 16 == 0 and 0 < k <= DEPTH_MAX and available()

    def __init__(self, w_nk):
        n, k = w_nk.shape
        self.t = 4 if n % 64 == 0 else (2 if n % 32 == 0 else 1)
        self.packed = pack_weights(w_nk, self.t)
        self.n, self.k4 = n, padded_depth(k)
        fns = _compile()
        self.pairs, self.single = fns[(self.t, 2)], fns[(self.t, 1)]

    def __call__(self, a, c):
        """c[...] = a @ W.T; a: [M, K4] uint8 C-contiguous, c: [M, N] int32 C-contiguous
        (checked: the machine code trusts these shapes)."""
        if a.dtype != np.uint8 or c.dtype != np.int32 or a.shape[1] != self.k4 or \
                c.shape != (a.shape[0], self.n) or not (a.flags.c_contiguous and
                                                        c.flags.c_contiguous):
            raise ValueError(f"vnni_gemm.Gemm needs uint8 rows [M, {self.k4}] and an int32 "
                             f"result [M, {self.n}], both C-contiguous; got {a.dtype} "
                             f"{a.shape} and {c.dtype} {c.shape}")
        m, even = a.shape[0], a.shape[0] - a.shape[0] % 2
        w, depth, blocks = self.packed.ctypes.data, self.k4 // 4, self.n // (16 * self.t)
        if even:  # rows two at a time, then the odd last one alone
            self.pairs(a.ctypes.data, self.k4, w, c.ctypes.data, self.n, even, depth, blocks)
        if m > even:
            self.single(a.ctypes.data + even * self.k4, self.k4, w,
                        c.ctypes.data + even * self.n * 4, self.n, 1, depth, blocks)
