"""Open sets of variants: a declaration's choices that the registry implementing them extends.

A variant (an MRF fit, say) is an object in a registry, by name; a parameter declaration
(:mod:`privgraph.declarations`, light: read by ``--help`` before numpy is imported) names the
same choices. So that registering a new variant is one line, the declaration holds a
:class:`Names` (the built-in names, written out) and the registry is a :class:`Registry` over
that same Names: adding an entry to the registry adds its name to the declaration's choices
(and so to the command line's accepted values), removing it removes the name.

The bottom layer: it imports nothing.

>>> names = Names("a", "b")
>>> registry = Registry(names)
>>> registry["a"], registry["b"] = 1, 2
>>> registry["c"] = 3
>>> names, "c" in names, names == ("a", "b", "c")
(('a', 'b', 'c'), True, True)
>>> del registry["c"]
>>> names
('a', 'b')
"""

from __future__ import annotations

from collections.abc import Sequence


class Names(Sequence):
    """An ordered set of names, open to a registry: compares equal to the tuple of its names
    and reads as that tuple (messages list it as a tuple), so it serves where a declaration's
    choices were a tuple."""

    def __init__(self, *names: str):
        self._names = list(dict.fromkeys(names))

    def add(self, name: str) -> None:
        """Append ``name`` (a no-op if it is there)."""
        if name not in self._names:
            self._names.append(name)

    def discard(self, name: str) -> None:
        """Remove ``name`` (a no-op if it is not there)."""
        if name in self._names:
            self._names.remove(name)

    def __getitem__(self, i):
        return tuple(self._names)[i] if isinstance(i, slice) else self._names[i]

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name) -> bool:
        return name in self._names  # compares, never hashes: an unhashable value is simply absent

    def __eq__(self, other) -> bool:
        return tuple(self._names) == (tuple(other) if isinstance(other, (Names, tuple)) else other)

    __hash__ = object.__hash__  # one open set is one object

    def __repr__(self) -> str:
        return repr(tuple(self._names))


class Registry(dict):
    """A dict of variants by name whose keys are kept in :class:`Names` ``names`` (a
    declaration's choices): setting an entry adds its name, deleting one removes it. The
    built-in entries are set in the order of the declaration's names."""

    def __init__(self, names: Names):
        super().__init__()
        self.names = names

    def __setitem__(self, name: str, variant) -> None:
        super().__setitem__(name, variant)
        self.names.add(name)

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self.names.discard(name)

    def register(self, variant):
        """Set ``variant`` under its ``name``; returns it (a decorator's shape)."""
        self[variant.name] = variant
        return variant

    def missing(self) -> list[str]:
        """Names declared with no variant registered (a module that forgot one; a test reads it)."""
        return [n for n in self.names if n not in self]
