"""Numba's threading layer, started before any compiled kernel can run a parallel loop.

A kernel compiled with ``parallel=True`` records in its cache entry that loading it must
start numba's threading layer. A serial kernel that *calls* such a kernel inherits that record
only when the callee was compiled in the same process. When the callee came from the on-disk
cache, the caller's new cache entry lacks it (numba 0.68 copies the record from the libraries
it links, and a library loaded from the cache does not carry it). A later process that loads
that caller first runs the parallel loop with no threading layer and dies of a segmentation
fault.

Hedgerow met this with GossipSub: its event kernel (serial) calls the parallel score pass
(:mod:`hedgerow.protocols.gossipsub._scorekernel`). The event kernel was compiled for a new
signature in a process that had loaded the score pass from the cache, and the next process
that ran that signature crashed. Any user's sequence of runs can produce such an entry (a new
world shape, a new parameter type), so the guard is not left to the order of calls: every
module that defines ``parallel=True`` kernels calls :func:`launch_threads` when it is
imported, and a kernel that links one imports that module before it can run
(``tests/model/test_parallel.py`` holds both).

Examples
--------
>>> launch_threads() >= 1
True
"""

from __future__ import annotations

import numba

__all__ = ["launch_threads"]


def launch_threads() -> int:
    """Start numba's threading layer (once per process; later calls do nothing more).

    Returns
    -------
    int
        The number of threads parallel loops use now.
    """
    # numba starts the layer before it answers (numba.np.ufunc.parallel._launch_threads)
    return int(numba.get_num_threads())
