"""A software prefetch for the gossip kernels: ask for a row before it is read.

At 100,000 nodes the views, caches and stamps (8-16 MB each) no longer fit the
per-core caches, and an exchange reads rows of random nodes.  The cycles know
which rows a later exchange reads (a batch's pairs, the Newscast order), so
they can ask for them a few exchanges early, and the loads of several
exchanges overlap.  A prefetch is only a hint to the processor: it never
faults, writes nothing and changes no result.
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
from numba.np.numpy_support import as_dtype


@intrinsic
def _prefetch(typingctx, arr, i):  # pragma: no cover - compiled
    """Prefetch (for reading, into every cache level) the line holding ``arr.flat[i]``
    of a C-contiguous array."""
    if not isinstance(arr, types.Array) or not isinstance(i, types.Integer):
        return None
    sig = types.void(arr, i)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(  # named for the pointer type (p0i8 or p0)
            "llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
        # address, read (0), locality 3 (keep in every level), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _line_elems(typingctx, arr):  # pragma: no cover - compiled
    """The number of ``arr``'s elements in a 64-byte cache line (at least 1), a constant of
    the compiled code: the array's own ``itemsize`` is read at run time, and a stride
    computed from it costs the loops below a division per row."""
    if not isinstance(arr, types.Array):
        return None
    step = max(1, 64 // as_dtype(arr.dtype).itemsize)

    def codegen(context, builder, signature, args):
        return context.get_constant(types.intp, step)

    return types.intp(arr), codegen


@numba.njit(cache=True, inline="always")
def prefetch_row(a, r):  # pragma: no cover - compiled
    """Prefetch every cache line of row ``r`` of the C-contiguous 2-D array ``a``."""
    c = a.shape[1]
    step = _line_elems(a)
    base = r * c
    for j in range(0, c, step):
        _prefetch(a, base + j)
    _prefetch(a, base + c - 1)
