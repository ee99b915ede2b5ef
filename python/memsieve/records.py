"""What memsieve hands back: decisions, memories, search results, rejections, what a forget took."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from memsieve.offsets import in_offset

Event = Literal["ADD", "UPDATE", "DELETE", "NOOP"]
Layer = Literal["exact", "novelty", "band", "llm", "restore", "user", "forget"]
#: Every layer a decision or a history row names (consolidation's merges are "consolidate").
LAYERS: tuple[str, ...] = (*get_args(Layer), "consolidate")


@dataclass(frozen=True)
class Decision:
    """What the write path did with one candidate, and why.

    Attributes:
        event: ADD, UPDATE, DELETE or NOOP.
        memory_id: the memory added or changed; for a NOOP, the memory it was
            folded into (the nearest one), if any.
        text: the candidate text.
        layer: which layer decided: ``exact`` (normalized-text duplicate),
            ``novelty`` (the gate alone), ``band`` (the no-LLM band policy) or
            ``llm`` (the LLM's CRUD decision, after the safety check).
        novelty: the gate's score (cosine-distance units; +inf for an empty scope,
            nan when the gate did not run).
        tau: the scope's threshold when the candidate was routed.
        delta: the band width.
        kappa: the kernel concentration used.
        nearest_id: the nearest active memory, if any.
        nearest_cos: its cosine to the candidate (nan if none).
        information: the gate's informational novelty in [0, 1]: the
            rarity-weighted share of the candidate's content terms that its
            nearest memories lack (nan without a gate or in an empty scope;
            an exact duplicate is never scored).
        new_terms: those new terms, heaviest first.
        rejection_id: the rejection record of a NOOP.
        linked_to: the memory the new one was linked to (a band ADD links
            to the nearest memory), if any.
        link_kind: the kind of that link (``near``, ``supersedes``).
        added_id: on a DELETE, the memory stored in place of the deleted one
            (``memory_id`` is the deleted memory).
        reason: a sentence saying why.
        fault: an LLM fault code, if the LLM step misbehaved.
    """

    event: Event
    memory_id: str | None
    text: str
    layer: Layer
    novelty: float
    tau: float
    delta: float
    kappa: float
    nearest_id: str | None
    nearest_cos: float
    information: float = math.nan
    new_terms: list[str] = field(default_factory=list)
    rejection_id: str | None = None
    linked_to: str | None = None
    link_kind: str | None = None
    added_id: str | None = None
    reason: str = ""
    fault: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MemoryItem:
    """A stored memory (active or soft-deleted)."""

    id: str
    text: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    metadata: dict[str, Any]
    source: str | None
    sources: list[str]
    seen_count: int
    is_active: bool
    created_at: str
    updated_at: str | None
    last_seen_at: str | None
    valid_from: str | None
    valid_to: str | None
    expired_at: str | None
    valid_from_offset: int | None = None

    @property
    def valid_from_local(self) -> str | None:
        """``valid_from`` written in the UTC offset it was given in (``valid_from_offset``)."""
        return in_offset(self.valid_from, self.valid_from_offset)

    @property
    def told_on(self) -> str:
        """The calendar day (``YYYY-MM-DD``) the memory tells of: its ``valid_from`` in the offset
        it was given in, else the day it was written (UTC)."""
        return (self.valid_from_local or self.created_at)[:10]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Folded:
    """A text the write path folded into a memory (a NOOP) that says words the memory does not.

    A fold keeps the memory's text, so what a later text adds in other words ("I've tried four
    different ones so far" folded into "I've tried three different Korean restaurants") would
    reach no reader; search hands the latest such texts back with the memory they went into
    (``SearchResult.folded``), and ``render_line`` shows them.

    Attributes:
        id: the rejection record's id (``Memory.restore`` stores it as its own memory).
        text: the folded text.
        valid_from: when it was said, in UTC (ISO-8601), or None.
        valid_from_offset: the UTC offset ``valid_from`` was given in (seconds east), or None.
        created_at: when the store learned it (ISO-8601).
        source: its own source, if any.
        metadata: the metadata it was written with (a search's ``filters`` hold for it too).
    """

    id: str
    text: str
    valid_from: str | None
    created_at: str
    valid_from_offset: int | None = None
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def valid_from_local(self) -> str | None:
        """``valid_from`` written in the UTC offset it was given in (``valid_from_offset``)."""
        return in_offset(self.valid_from, self.valid_from_offset)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "valid_from": self.valid_from,
                "valid_from_offset": self.valid_from_offset, "created_at": self.created_at, "source": self.source,
                "metadata": _copied(self.metadata)}


@dataclass(frozen=True)
class SearchResult:
    """One hit of ``Memory.search``.

    Attributes:
        score: higher is better; cosine for dense search, reciprocal-rank-fusion
            score for hybrid, negated bm25 for keyword.
        sources: the memory's own source(s) first, then those that NOOPs folded in.
        superseded_by: the id of a newer version of the same fact among the
            results (linked by the write path, or a near-duplicate), which is
            ranked first; None for the newest version and for facts with one.
        valid_from: when the fact began to hold, in UTC (ISO-8601).
        valid_from_offset: the UTC offset, in seconds east of UTC, that
            ``valid_from`` was given in (None: UTC or no zone); the memory's
            calendar day is read in it (``valid_from_local``).
        folded: the latest texts folded into this memory that say words it
            does not (at most ``memsieve.read.folded.FOLDED_PER_HIT``), oldest
            first; the reader sees them after the memory (``render_line``).
    """

    id: str
    text: str
    score: float
    source: str | None
    sources: list[str]
    metadata: dict[str, Any]
    valid_from: str | None
    created_at: str
    superseded_by: str | None = None
    valid_from_offset: int | None = None
    folded: tuple[Folded, ...] = ()

    @property
    def valid_from_local(self) -> str | None:
        """``valid_from`` written in the UTC offset it was given in (``valid_from_offset``)."""
        return in_offset(self.valid_from, self.valid_from_offset)

    def to_dict(self) -> dict[str, Any]:
        # By hand, not dataclasses.asdict: a search answers ten of these per call, and
        # asdict's generic deep copy was a third of the REST service's own time on one.
        return {"id": self.id, "text": self.text, "score": self.score, "source": self.source,
                "sources": list(self.sources), "metadata": _copied(self.metadata), "valid_from": self.valid_from,
                "valid_from_offset": self.valid_from_offset, "created_at": self.created_at,
                "superseded_by": self.superseded_by, "folded": [f.to_dict() for f in self.folded]}


#: Most sources a memory lists. A memory that thousands of texts are folded into ("thanks!")
#: would otherwise grow its row, and the cost of the next fold, without end; past the bound it
#: keeps its first and its latest sources, and each folded text's own sources stay in its
#: rejection record (``Memory.rejections``), with the text.
MAX_MEMORY_SOURCES = 1_000


def merged_sources(*lists: list[str], limit: int = MAX_MEMORY_SOURCES) -> list[str]:
    """The sources of several lists, each once, in the order first given: a memory's provenance after
    a NOOP folds a text into it, or a merge joins memories. Linear in all the lists' lengths. Over
    ``limit``, the first ``limit // 2`` and the last ``limit - limit // 2`` are kept.

    >>> merged_sources(["a", "b"], ["b", "c", "a"])
    ['a', 'b', 'c']
    >>> merged_sources(["a", "b", "c"], ["d", "e"], limit=4)
    ['a', 'b', 'd', 'e']
    """
    merged = list(dict.fromkeys(s for lst in lists for s in lst))
    if len(merged) <= limit:
        return merged
    head = limit // 2
    return merged[:head] + merged[len(merged) - (limit - head):]


def _copied(value: Any) -> Any:
    """A copy of JSON-like metadata (dicts and lists rebuilt, anything else shared, as asdict does for
    immutable values)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    return value


@dataclass(frozen=True)
class Rejection:
    """A candidate the write path did not store, kept so it can be audited and restored.

    Attributes:
        information: the candidate's informational novelty when the gate refused
            it (0..1: the IDF-weighted share of its tokens its neighbours lack;
            nan when not computed).
        forgotten_at: when a request to forget named its text (it then leaves
            search, where a fold is shown beside its memory); None otherwise.
    """

    id: str
    text: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    sources: list[str]
    metadata: dict[str, Any]
    layer: str
    novelty: float
    tau: float
    delta: float
    kappa: float
    nearest_id: str | None
    nearest_cos: float
    reason: str
    created_at: str
    restored_memory_id: str | None = None
    restored_at: str | None = None
    information: float = math.nan
    forgotten_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HistoryEntry:
    """One change to a memory."""

    memory_id: str
    event: str
    old_text: str | None
    new_text: str | None
    layer: str
    reason: str
    created_at: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Forgotten(list):  # type: ignore[type-arg]  # list[MemoryItem]
    """What ``Memory.forget`` took out of search: the memories (this list) and the folded texts.

    A list of the memories removed (or that would be, with ``dry_run``), as they are afterwards,
    so code that reads the memories reads it as before. A text the gate folded into a memory is
    shown beside it in search (``SearchResult.folded``), and a request that names its words takes
    it out too, with or without its memory: those are ``folds``.

    Attributes:
        folds: the folded texts the request named, each as its ``Rejection`` afterwards
            (``forgotten_at`` set; with ``dry_run``, as it is now, ``forgotten_at`` None). A
            purge erases the memory a named text went into, with every text folded into it,
            so a purge lists that memory, and no fold.
    """

    def __init__(self, memories: Any = (), *, folds: list[Rejection] | None = None) -> None:
        super().__init__(memories)
        self.folds: list[Rejection] = list(folds or [])

    def __repr__(self) -> str:
        return f"Forgotten({list.__repr__(self)}, folds={self.folds!r})"
