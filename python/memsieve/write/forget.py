"""Carrying out a request to forget, inside one scope's write transaction.

``Memory.forget`` names memories by the deterministic rule of
memsieve.write.forgetting. With ``infer=True``, ``Memory.add`` also finds requests to
forget among the messages ("please forget what I said about Benedikt") and
sends each to the LLM CRUD step as a DELETE request, behind the write path's
guard: the model picks the memory among the request's nearest ones, and its
pick is refused unless the memory is close enough in meaning to the request's
subject (``crud_update_min_sim``, as for UPDATE and DELETE in the band). The
deterministic rule runs beside it, so a model that answers NOOP, breaks its
JSON or picks a refused target never keeps a memory the rule names; what the
model adds is the memory a paraphrased request names and the rule misses.

Every removal is a soft delete with a history row saying which layer named
the memory and why (or a purge, on request), and each becomes one Decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memsieve.write.edits import soft_delete
from memsieve.write.forgetting import ForgetQuery, Forgotten, choose, named_folds
from memsieve.write.retired import retired_into
from memsieve.records import Decision, MemoryItem
from memsieve.scope import Scope

#: How many of the request's nearest memories the model is shown.
NEIGHBOURS_FOR_LLM = 5


@dataclass(frozen=True)
class Removal:
    """One memory a request removes: which layer named it, and why."""

    seq: int
    layer: str  # "forget" (the rule) or "llm"
    reason: str
    fault: str | None = None


class ForgetPath:
    """Names and removes the memories a request to forget is about, in one scope.

    Args:
        reader: the store or the open write transaction (items, links, vectors).
        gate: the scope's ScopeGate (its memories, terms and nearest search).
        scope: the scope.
    """

    def __init__(self, reader: Any, gate: Any, scope: Scope) -> None:
        self.reader = reader
        self.gate = gate
        self.scope = scope
        self.rows: dict[int, MemoryItem] = reader.items_for_seqs([int(s) for s in gate.state.ids()])
        self._seq_of = {it.id: s for s, it in self.rows.items()}
        self._retired: dict[int, MemoryItem] = {}

    def named(self, query: ForgetQuery, vector: np.ndarray) -> list[Forgotten]:
        """The memories the deterministic rule names (memsieve.write.forgetting.choose)."""
        return choose(query, self.gate, vector, versions_of=self._versions_of, recency=self._recency,
                      vectors_of=self.reader.embeddings_for_seqs,
                      text_of=lambda s: self.rows[s].text if s in self.rows else None)

    def named_all(self, asked: list[tuple[ForgetQuery, np.ndarray]]) -> list[Forgotten]:
        """The memories any of a request's queries names (memsieve.write.forgetting.parse_requests), once each."""
        out: dict[int, Forgotten] = {}
        for query, vector in asked:
            for f in self.named(query, vector):
                out.setdefault(f.seq, f)
        return list(out.values())

    def asked_of_llm(self, request: str, vector: np.ndarray, *, decide: Callable[[str, list[tuple[str, str]]], Any],
                     guard: Callable[[Any, float, float], Any], min_sim: float) -> tuple[Removal | None, Any]:
        """Ask the LLM which memory ``request`` names; return (removal or None, its decision).

        Args:
            request: the user's words.
            vector: (d,) float32 embedding of the request's subject.
            decide: (request, [(memory_id, text)]) -> CrudDecision.
            guard: guard_destructive.
            min_sim: the guard's cosine bar.
        """
        if not len(self.gate):
            return None, None
        seqs, _ = self.gate.nearest(vector, min(NEIGHBOURS_FOR_LLM, len(self.gate)))
        shown = [(self.rows[int(s)].id, self.rows[int(s)].text) for s in seqs if int(s) in self.rows]
        decision = decide(request, shown)
        if decision.event == "DELETE" and decision.target_id in self._seq_of:
            target = self.reader.embeddings_for_seqs([self._seq_of[decision.target_id]])
            vec = target.get(self._seq_of[decision.target_id])
            cos = float(np.dot(vec, vector)) if vec is not None else math.nan
            decision = guard(decision, cos, min_sim)
        if decision.event != "DELETE" or decision.target_id not in self._seq_of:
            return None, decision
        why = f"LLM: {decision.reason}" if decision.reason else "LLM named it"
        return Removal(seq=self._seq_of[decision.target_id], layer="llm", reason=why), decision

    def remove(self, tx: Any, removals: list[Removal], *, purge: bool, now: str) -> list[Decision]:
        """Soft-delete (or purge) each memory once, with its history row; one Decision each.

        A purge also erases the memories a consolidation retired into a named
        one: they hold the same fact, inactive but in the file.
        """
        if purge:
            removals = removals + self._retired_into(tx, removals)
        out, done = [], set()
        for r in removals:
            if r.seq in done or (r.seq not in self.rows and r.seq not in self._retired):
                continue
            done.add(r.seq)
            item = self.rows.get(r.seq) or self._retired[r.seq]
            reason = f"forgotten on request: {r.reason}"
            if purge:
                tx.purge_memory(r.seq, reason=reason, now=now)
                tx.bump(self.scope, "DELETE", r.layer)
                self.gate.remove(r.seq)
            else:
                soft_delete(tx, self.gate, self.scope, seq=r.seq, memory_id=item.id, text=item.text,
                            layer=r.layer, reason=reason, now=now)
            out.append(Decision(event="DELETE", memory_id=item.id, text=item.text, layer=r.layer,  # type: ignore[arg-type]
                                novelty=math.nan, tau=math.nan, delta=math.nan, kappa=math.nan, nearest_id=None,
                                nearest_cos=math.nan, reason=reason, fault=r.fault))
        return out

    def _retired_into(self, tx: Any, removals: list[Removal]) -> list[Removal]:
        """The inactive members of the merges in force that retired into a memory being removed, at any depth."""
        kept = {self.rows[r.seq].id: r for r in removals if r.seq in self.rows}
        out = []
        for member_id, root, why in retired_into(tx, self.scope, kept):
            row = tx.memory_row(member_id)
            self._retired[row.seq] = tx.get(member_id)
            out.append(Removal(seq=row.seq, layer=kept[root].layer, reason=f"{why}, which the request names"))
        return out

    def _versions_of(self, seqs: list[int]) -> list[tuple[int, int]]:
        links = self.reader.version_links([self.rows[s].id for s in seqs if s in self.rows])
        return [(self._seq_of[a], self._seq_of[b]) for a, b, _ in links if a in self._seq_of and b in self._seq_of]

    def _recency(self, seq: int) -> tuple[str, str, int]:
        it = self.rows[seq]
        return (it.valid_from or it.created_at, it.created_at, seq)


def forget_asked(tx: Any, gate: Any, scope: Scope, request: str, query: ForgetQuery, vector: np.ndarray, *,
                 client: Any, min_sim: float, now: str) -> list[Decision]:
    """A request to forget met by ``add(infer=True)``: the LLM's guarded DELETE and the rule's picks.

    Args:
        tx: the scope's open write transaction.
        gate: the scope's ScopeGate.
        request: the user's words; ``query`` is their parse and ``vector`` the
            (d,) float32 embedding of its subject.
        client: the LLM client.
        min_sim: the guard's cosine bar (``crud_update_min_sim``).
    """
    from memsieve.llm import decide_forget, guard_destructive

    path = ForgetPath(tx, gate, scope)
    asked, decision = path.asked_of_llm(request, vector, decide=lambda r, n: decide_forget(client, r, n),
                                        guard=guard_destructive, min_sim=min_sim)
    if decision is not None and decision.fault:
        tx.add_fault(scope, kind=decision.fault, detail=decision.reason or "", raw=decision.raw, now=now)
    fault = decision.fault if decision is not None else None
    ruled = [Removal(seq=f.seq, layer="forget", reason=f.reason, fault=fault) for f in path.named(query, vector)]
    forget_folds(tx, gate, scope, [query], now=now)
    return path.remove(tx, ([asked] if asked else []) + ruled, purge=False, now=now)


def forget_folds(tx: Any, gate: Any, scope: Scope, queries: Sequence[ForgetQuery], *, now: str | None) -> list[str]:
    """Take the folds search shows (memsieve.read.folded) that any of a request's queries names out of
    search, inside the scope's open write transaction ``tx``; their records stay (``forgotten_at``).

    A purge by description needs none of this: the memory a named text was folded into is erased
    with every text it holds (memsieve.write.purge.earlier_named).

    Args:
        tx: the scope's open write transaction, or, with ``now`` None, a reader of the store.
        now: when; None only names them (a dry run) and changes nothing.

    Returns:
        The rejection ids of the folds named, in the order the scope's folds were told.
    """
    named = named_folds(queries, tx.shown_folds(scope), gate)
    if now is not None:
        tx.forget_folds(named, now=now)
    return [rejection_id for rejection_id, _ in named]
