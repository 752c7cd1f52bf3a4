"""A least-recently-used map bounded by the sizes of its entries (the count caches' one shape).

>>> cache = LRU(10)
>>> cache.put("a", 1, 6); cache.put("b", 2, 6)  # over the budget: "a", the least recently used, goes
>>> cache.get("a"), cache.get("b"), cache.size
(None, 2, 6)
"""

from __future__ import annotations

from collections import OrderedDict


class LRU:
    """A least-recently-used map whose entries' sizes sum to at most ``budget``."""

    def __init__(self, budget: int):
        self.budget, self.size, self._items = budget, 0, OrderedDict()

    def get(self, key):
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key, value, size: int) -> None:
        if key in self._items:
            self.size -= self._items.pop(key)[1]
        if size > self.budget:
            return
        self._items[key] = (value, size)
        self.size += size
        while self.size > self.budget:
            self.size -= self._items.popitem(last=False)[1][1]
