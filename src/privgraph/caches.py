"""The process-wide caches: one owner, each cache with its name and its bound, and one clear.

A module that keeps something across calls (a memo of a pure function of public parameters,
a structure built once per model) registers it here when it is defined: a function through
:func:`lru` (``functools.lru_cache`` with its ``maxsize``), any other store through
:func:`register` (its name, its documented bound, how to clear it, and the object that
holds it). :func:`clear_caches` clears them all, or those under a name (a module's, say);
:func:`caches` lists them. ``tests/test_caches.py`` holds every module-level cache of the
package registered. No cache here holds data values outside a mechanism: the memos are of
public parameters, and the model structures are released post-processing.

The bottom layer: it imports nothing from privgraph.

>>> @lru(8)
... def square(x):
...     return x * x
>>> square(3), caches()[f"{__name__}.square"].bound
(9, '8 entries')
>>> clear_caches(f"{__name__}.square"); square.cache_info().currsize
0
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Cache:
    """One registered cache: its ``name`` (the module's dotted path and the store's name), its
    ``bound`` (what limits it, in words), how to ``clear`` it, and the object that ``holds`` it
    (the cached function, or the module-level store)."""

    name: str
    bound: str
    clear: Callable[[], None]
    holds: object


_CACHES: dict[str, Cache] = {}  # the registry itself (this module owns it)


def register(name: str, bound: str, clear: Callable[[], None], holds: object) -> None:
    """Register the cache ``name`` (a dotted name under its module's) with its documented
    ``bound``; ``clear()`` empties it; ``holds`` is the object that keeps it."""
    _CACHES[name] = Cache(name, bound, clear, holds)


def lru(maxsize: int, *, bound: str | None = None):
    """``functools.lru_cache(maxsize)``, registered as ``module.function`` with its bound
    (default ``"<maxsize> entries"``)."""

    def wrap(function):
        cached = functools.lru_cache(maxsize=maxsize)(function)
        register(f"{function.__module__}.{function.__qualname__}", bound or f"{maxsize} entries",
                 cached.cache_clear, cached)
        return cached

    return wrap


def clear_caches(*names: str) -> None:
    """Clear every registered cache, or (given ``names``) those named so or under those names
    (``clear_caches("privgraph.mrf")``: the MRF's)."""
    for cache in list(_CACHES.values()):
        if not names or any(cache.name == n or cache.name.startswith(n + ".") for n in names):
            cache.clear()


def caches() -> dict[str, Cache]:
    """The registered caches by name (a copy)."""
    return dict(_CACHES)


__all__ = ["Cache", "caches", "clear_caches", "lru", "register"]
