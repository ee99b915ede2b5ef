"""What consolidation proposes for one scope: clusters, their kind, the kept member, and why.

Deterministic rule (no LLM):

- **duplicates** (no pair of the cluster differs in content, see
  information.py): the newest member is kept with its own text, and the
  others' sources are attached to it;
- **versions** (some pair differs): the chain is kept and each older member's
  validity is closed at the next newer one's ``valid_from``, so a
  point-in-time search still finds the value that held then.

Pairs of *distinct* facts never join a group, whatever their cosine: pairs
where the older would leave search with something true the newer does not
say (information.py: a detail only it holds, a value the newer did not
replace, another subject).

"Newest" orders members by ``valid_from`` (when the fact began to hold), then
``created_at``, then seq. Every member but the kept one becomes inactive.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from memsieve.consolidation.candidates import CompleteLink, Pairs, close_pairs
from memsieve.read.rank import json_equal
from memsieve.read.speaker import role_of
from memsieve.consolidation.information import TermView
from memsieve.records import MemoryItem

Kind = Literal["duplicates", "versions"]
Status = Literal["proposed", "merged", "refused"]


@dataclass(frozen=True)
class Member:
    """One memory of a cluster: its seq, its item, and its (d,) float32 vector."""

    seq: int
    item: MemoryItem
    vector: np.ndarray

    @property
    def when(self) -> tuple[str, str, int]:
        return (self.item.valid_from or self.item.created_at, self.item.created_at, self.seq)


@dataclass
class Cluster:
    """A complete-link group, members oldest first; the last is the newest (the kept one)."""

    members: list[Member]
    kind: Kind
    min_cos: float
    differing: tuple[str, ...]
    information: float

    @property
    def kept(self) -> Member:
        return self.members[-1]

    @property
    def retired(self) -> list[Member]:
        return self.members[:-1]

    def reason(self, min_sim: float) -> str:
        n = len(self.members)
        said = f"{n} memories at cosine >= {self.min_cos:.3f} (min_sim {min_sim:.2f}, complete link)"
        if self.kind == "duplicates":
            return (f"{said} and none says what another does not (information {self.information:.2f}): "
                    "duplicates; kept the newest and attached the others' sources")
        # Counted, never quoted: the reason is stored (merges, history), and a purge of a
        # member must not leave its numbers or names behind in another record.
        what = (f"they differ in {len(self.differing)} numbers, dates or names" if self.differing
                else f"information {self.information:.2f} differs")
        return (f"{said} but {what}: versions of one fact; kept the newest and closed the older ones' "
                "validity at the next version's valid_from")


@dataclass(frozen=True)
class Merge:
    """One merge of a consolidation report.

    Attributes:
        id: the merge id (None in a dry run or when refused): pass it to
            ``Memory.unconsolidate``.
        kind: ``"duplicates"`` or ``"versions"``.
        member_ids: every member, oldest first (the kept one last).
        kept_id: the member that stays active.
        text: the kept text, or the LLM's merged text.
        reason: why the members were merged, or why the cluster was left alone.
        status: ``"proposed"`` (dry run), ``"merged"`` or ``"refused"``.
    """

    id: str | None
    kind: str
    member_ids: list[str]
    kept_id: str
    text: str
    reason: str
    status: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ConsolidationReport:
    """What ``Memory.consolidate`` did (or, in a dry run, would do) in one scope.

    Attributes:
        scope: the scope as a dict of its three ids.
        dry_run: nothing was written.
        min_sim: the cosine threshold used.
        active_before: active memories before.
        active_after: active memories after (as proposed, in a dry run).
        pairs: close pairs the kernel found.
        merges: the merges made (or proposed), in scope order.
        refused: clusters left alone, with the reason.
        complete: every close pair and every cluster was weighed; False when ``max_seconds`` ran
            out first (the rest waits for the next run).
        clusters_left: the clusters found but not merged (or proposed) for lack of time.
        pairs_left: the close pairs not weighed for lack of time (the least similar ones): none of
            them joined a cluster, which leaves clusters smaller, never wrong.
    """

    scope: dict[str, str | None]
    dry_run: bool
    min_sim: float
    active_before: int
    active_after: int
    pairs: int
    merges: list[Merge] = field(default_factory=list)
    refused: list[Merge] = field(default_factory=list)
    complete: bool = True
    clusters_left: int = 0
    pairs_left: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_clusters(seqs: np.ndarray, matrix: np.ndarray, items: dict[int, MemoryItem], view: TermView, *,
                  min_sim: float, deadline: float | None = None) -> tuple[list[Cluster], int, int]:
    """The scope's clusters, the number of close pairs (distinct facts included), and how many of
    those were not weighed before ``deadline``.

    Args:
        seqs: (n,) int64 seqs of the active memories.
        matrix: (n, d) float32 their unit vectors.
        items: the memories by seq.
        view: the scope's terms and IDF.
        min_sim: the cosine threshold.
        deadline: a ``time.monotonic()`` past which no more pairs are weighed (None: all are).
    """
    found = close_pairs(matrix, min_sim)
    kept, left = mergeable(found, seqs, items, view, deadline=deadline)
    link = CompleteLink(kept)
    clusters = []
    for group in link.groups():
        members = sorted((Member(int(seqs[r]), items[int(seqs[r])], matrix[r]) for r in group), key=lambda m: m.when)
        verdicts = [view.verdict((a.seq, a.item.text), (b.seq, b.item.text))
                    for k, a in enumerate(members) for b in members[k + 1:]]
        differing = tuple(sorted({t for v in verdicts for t in v.differing}))
        versions = any(v.versions for v in verdicts)
        clusters.append(Cluster(members=members, kind="versions" if versions else "duplicates",
                                min_cos=link.min_similarity(group), differing=differing,
                                information=max(v.information for v in verdicts)))
    return clusters, len(found), left


def mergeable(pairs: Pairs, seqs: np.ndarray, items: dict[int, MemoryItem], view: TermView, *,
              deadline: float | None = None) -> tuple[Pairs, int]:
    """The close pairs that are not distinct facts (information.py), nor the words of two speakers
    (chat roles: a merge would leave what the user said only as the assistant's, or the reverse),
    nor a thing done and another memory told on another day (``TermView.done_apart``),
    nor two memories whose metadata give one field two values (a merge keeps one memory's
    metadata: the other's item key in a LangGraph store, or its category, would no longer find
    it): only these may join a group.

    Pairs are weighed most similar first; past ``deadline`` (a ``time.monotonic()``) the rest are
    left unweighed, and none of them may join a group. Returns the mergeable pairs and how many
    were left."""
    def memory(row: int) -> tuple[tuple[str, str, int], tuple[int, str]]:
        seq = int(seqs[row])
        item = items[seq]
        return (item.valid_from or item.created_at, item.created_at, seq), (seq, item.text)

    keep = []
    left, right = pairs.left.tolist(), pairs.right.tolist()
    order = np.argsort(-pairs.sim, kind="stable").tolist()
    unweighed = 0
    for n, k in enumerate(order):
        # The clock is read every 64 pairs: one verdict costs microseconds, a clock read about as much.
        if deadline is not None and n % 64 == 0 and n and time.monotonic() >= deadline:
            unweighed = len(left) - n
            break
        i, j = left[k], right[k]
        first, second = items[int(seqs[i])], items[int(seqs[j])]
        a, b = first.metadata, second.metadata
        if role_of(a) != role_of(b) or metadata_conflict(a, b) or view.done_apart(first, second):
            continue
        older, newer = sorted((memory(i), memory(j)))
        if not view.verdict(older[1], newer[1]).distinct:
            keep.append(k)
    idx = np.sort(np.asarray(keep, dtype=np.int64))
    return Pairs(pairs.left[idx], pairs.right[idx], pairs.sim[idx]), unweighed


def metadata_conflict(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether two memories' metadata give a field they both have two values (compared as JSON)."""
    a, b = a or {}, b or {}
    return any(not json_equal(a[k], b[k]) for k in a.keys() & b.keys())
