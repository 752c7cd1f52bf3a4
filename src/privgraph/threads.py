"""Keep BLAS single-threaded around the small solves of privgraph (MRF fitting, ridge regressions).

scipy's L-BFGS-B calls BLAS on vectors of a few hundred entries. With OpenBLAS's thread
pool on a busy machine each call can cost milliseconds of thread wake-ups; measured here,
one CGM-EM E-step ran 20x slower with the default pool than with one thread. If
``threadpoolctl`` is importable, :func:`single_threaded_blas` limits BLAS to one thread;
otherwise it does nothing (set ``OPENBLAS_NUM_THREADS=1`` yourself).

threadpoolctl finds the loaded BLAS libraries by reading the process's library list, which
costs milliseconds; a controller is built on first use and kept, so entering the limit is
cheap enough for inner loops (a ridge fit, a batch of tests), and a limit entered inside another
is free: PC holds one limit around its whole run, where entering one per batch of tests (each
entry reads every library's thread count, about 0.3 ms) was a large share of the CPU time
of alarm at 1e4 rows. scipy ships its own BLAS,
loaded with ``scipy.linalg``: the controller is rebuilt once when that (or another package
bringing its own BLAS) has been imported since, so it never misses the library L-BFGS-B uses.
"""

from __future__ import annotations

import contextlib
import sys

import privgraph.caches as caches

_CONTROLLER: dict = {}  # {which BLAS-bringing packages were loaded: ThreadpoolController}
caches.register(f"{__name__}.controller", "1 controller (of the BLAS libraries loaded now)", _CONTROLLER.clear,
                _CONTROLLER)
_HELD: list = []  # the `loaded` keys of the limits entered and not yet left, outermost first
_BLAS_PACKAGES = ("numpy", "scipy.linalg", "sklearn")


def single_threaded_blas():
    """A context manager limiting BLAS to one thread (a no-op without threadpoolctl, and
    inside another such limit taken with the same BLAS libraries loaded).

    >>> with single_threaded_blas():
    ...     with single_threaded_blas():  # nested: nothing to do
    ...         pass
    """
    try:
        from threadpoolctl import ThreadpoolController  # lazy: optional at run time (see except)
    except ImportError:  # declared, but keep working if it is missing
        return contextlib.nullcontext()
    loaded = tuple(name in sys.modules for name in _BLAS_PACKAGES)
    if _HELD and _HELD[-1] == loaded:
        return contextlib.nullcontext()
    if loaded not in _CONTROLLER:
        _CONTROLLER.clear()
        _CONTROLLER[loaded] = ThreadpoolController()
    return _held(_CONTROLLER[loaded].limit(limits=1, user_api="blas"), loaded)


@contextlib.contextmanager
def _held(limit, loaded: tuple):
    """Enter ``limit`` and record it as held until it is left."""
    with limit:
        _HELD.append(loaded)
        try:
            yield
        finally:
            _HELD.pop()
