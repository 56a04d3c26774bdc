"""Numba's threading layer, started before a kernel that links a parallel loop runs.

A kernel compiled with ``parallel=True`` records in its cache entry that loading it must start
numba's threading layer. A kernel that *links* such a kernel (calls it, directly or through
other kernels) inherits that record only from kernels compiled in the same process: when a
linked kernel came from the on-disk cache, the caller's new cache entry lacks the record
(numba 0.68 copies it from the linked libraries, and a library loaded from the cache does not
carry it). A later process that loads that caller first then runs the parallel loop with no
threading layer and dies of a segmentation fault.

Hedgerow met this with GossipSub: its event loop (serial, cached) links the parallel score
pass (:mod:`hedgerow.protocols.gossipsub._scorekernel`) through cached kernels, and a run of one
test alone, after the whole suite had cached the kernels, crashed. Any user's sequence of runs
can write such an entry (a new world shape, a new parameter type), so the Python functions
that call a kernel linking a parallel loop call :func:`launch_threads` first
(``tests/test_kernel_cache.py`` checks every such call in the package and replays the crash on
a small probe). Starting the layer when a module is imported instead would be wrong: the
default layer here is GNU OpenMP, and a process that has started it cannot fork workers that
run parallel loops, so the layer starts only when such a kernel is about to run, as a correct
cache entry would start it when loaded.

Examples
--------
>>> launch_threads() >= 1
True
"""

from __future__ import annotations

import numba

__all__ = ["launch_threads"]


def launch_threads() -> int:
    """Start numba's threading layer (once per process; later calls only read the count).

    Returns
    -------
    int
        The number of threads parallel loops use now.
    """
    # numba starts the layer before it answers (numba.np.ufunc.parallel._launch_threads)
    return int(numba.get_num_threads())
