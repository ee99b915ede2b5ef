"""Whether a text tells of an event inside a window, remembered per text.

The read path asks this of every pooled memory on every search with a window
(``memsieve.read.when``). Reading a long text's dating phrases and each phrase's
window costs milliseconds per text (a 95,000-character diary full of dates: about
25 ms), so the merged windows of each (text, date said) are kept: a bounded LRU keyed
by a digest of the text (never the text itself), holding at most ``MAX_TEXTS`` texts
and ``MAX_SPANS`` windows in all.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
from collections import OrderedDict
from datetime import datetime

from memsieve.text.when import Window
from memsieve.text.when_told import events_dated

#: How many texts' windows are remembered, at most ...
MAX_TEXTS = 8192
#: ... and how many merged windows in all (a long diary may hold hundreds).
MAX_SPANS = 200_000

Spans = tuple[tuple[datetime, ...], tuple[datetime, ...]]  # (starts, ends), sorted, non-overlapping


class _Lru:
    """A thread-safe LRU of spans, bounded in entries and in windows held."""

    def __init__(self, max_entries: int, max_weight: int) -> None:
        self._items: OrderedDict[tuple[bytes, str], Spans] = OrderedDict()
        self._weight = 0
        self._max_entries, self._max_weight = max_entries, max_weight
        self._lock = threading.Lock()

    def get(self, key: tuple[bytes, str]) -> Spans | None:
        with self._lock:
            spans = self._items.get(key)
            if spans is not None:
                self._items.move_to_end(key)
            return spans

    def put(self, key: tuple[bytes, str], spans: Spans) -> None:
        weight = len(spans[0])
        if weight > self._max_weight:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= len(old[0])
            self._items[key] = spans
            self._weight += weight
            while len(self._items) > self._max_entries or self._weight > self._max_weight:
                _, dropped = self._items.popitem(last=False)
                self._weight -= len(dropped[0])

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._items)


_CACHE = _Lru(MAX_TEXTS, MAX_SPANS)


def _merged(windows: tuple[Window, ...]) -> Spans:
    starts: list[datetime] = []
    ends: list[datetime] = []
    for w in sorted(windows, key=lambda w: w.start):
        if ends and w.start <= ends[-1]:
            ends[-1] = max(ends[-1], w.end)
        else:
            starts.append(w.start)
            ends.append(w.end)
    return tuple(starts), tuple(ends)


def event_spans(text: str, said_at: datetime) -> Spans:
    """The merged windows of the events ``text`` dates (``events_dated``), read against ``said_at``: (starts, ends)."""
    key = (hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(), said_at.isoformat())
    spans = _CACHE.get(key)
    if spans is None:
        spans = _merged(events_dated(text, said_at))
        _CACHE.put(key, spans)
    return spans


def tells_of(text: str, said_at: datetime, window: Window) -> bool:
    """Whether ``text``, said at ``said_at``, dates an event whose window overlaps ``window``."""
    starts, ends = event_spans(text, said_at)
    i = bisect.bisect_right(starts, window.end)  # the spans starting no later than the window ends
    return i > 0 and ends[i - 1] >= window.start  # merged: the last of them ends latest


def clear() -> None:
    """Forget every remembered text (tests, measurements)."""
    _CACHE.clear()
