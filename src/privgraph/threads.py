"""Keep BLAS single-threaded around the small solves of privgraph (MRF fitting, ridge regressions).

scipy's L-BFGS-B calls BLAS on vectors of a few hundred entries. With OpenBLAS's thread
pool on a busy machine each call can cost milliseconds of thread wake-ups; measured here,
one CGM-EM E-step ran 20x slower with the default pool than with one thread. If
``threadpoolctl`` is importable, :func:`single_threaded_blas` limits BLAS to one thread;
otherwise it does nothing (set ``OPENBLAS_NUM_THREADS=1`` yourself).
"""

from __future__ import annotations

import contextlib


def single_threaded_blas():
    """A context manager limiting BLAS to one thread (a no-op without threadpoolctl).

    >>> with single_threaded_blas():
    ...     pass
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # declared, but keep working if it is missing
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
