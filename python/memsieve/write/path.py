"""The write path: exact dedup, the novelty gate, the band, ADD, all in one transaction.

``WritePath.apply`` runs inside the store's write transaction with the scope's
gate state in hand. Every candidate ends as exactly one Decision, and every
NOOP leaves a rejection record: nothing the caller said is silently dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from memsieve.gate.config import GateConfig
from memsieve.gate.scope_gate import GateScore, ScopeGate
from memsieve.inputs import text_hash
from memsieve.read.speaker import role_of
from memsieve.records import Decision
from memsieve.scope import Scope
from memsieve.store import WriteTx
from memsieve.text.passages import Part
from memsieve.text.marks import rewritten_values, written_values
from memsieve.write.swaps import MOST_NEW, SWAP_FROM, Swap, swap_said, swapped_value

NEIGHBOURS_FOR_LLM = 5

_ROUTE_RANK = {"NOOP": 0, "BAND": 1, "ADD": 2}


@dataclass
class Candidate:
    """One text on its way through the write path, with its (d,) float32 unit vector and, for a text
    longer than the embedder's window, the passages 1.. of it (memsieve.text.passages)."""

    text: str
    vector: np.ndarray
    sources: list[str]
    metadata: dict[str, Any]
    valid_from: str | None
    parts: list[Part] = field(default_factory=list)
    hash: str = field(init=False)

    def __post_init__(self) -> None:
        self.hash = text_hash(self.text)


class WritePath:
    """Decides and records what happens to each candidate of one ``add`` call.

    Args:
        store: the store, inside an open write transaction.
        scope: the scope written to.
        gate: the scope's gate state (mutated as candidates are added).
        config: the gate configuration.
        crud: the LLM band step, or None for the deterministic band policy. Takes
            (candidate text, [(memory_id, text)]) and returns a CrudDecision.
        embed_one: embeds one text (an LLM's UPDATE text): its (d,) vector and its parts 1..
            (passages, sentence keys), so that the updated memory is found by every part.
        embed: embeds texts to (n, d) unit rows, no parts (a fold's swapped words read back,
            memsieve.write.swaps).
        now: the transaction's timestamp.
    """

    def __init__(self, store: WriteTx, scope: Scope, gate: ScopeGate, config: GateConfig, *,
                 crud: Callable[[str, list[tuple[str, str]]], Any] | None,
                 guard: Callable[[Any, float, float], Any] | None,
                 embed_one: Callable[[str], tuple[np.ndarray, list[Part]]],
                 embed: Callable[[list[str]], np.ndarray], now: str) -> None:
        self.store = store
        self.scope = scope
        self.gate = gate
        self.config = config
        self.crud = crud
        self.guard = guard
        self.embed_one = embed_one
        self.embed = embed
        self.now = now
        # The gate's own map: ids met by earlier calls serve this one too.
        self._ids = gate.ids

    # ---- helpers -------------------------------------------------------------

    def _id(self, seq: int | None) -> str | None:
        if seq is None:
            return None
        if seq not in self._ids:
            self._ids.update(self.store.ids_for_seqs([seq]))
        return self._ids.get(seq)

    def _decision(self, cand: Candidate, s: GateScore | None, *, event: str, layer: str,
                  memory_id: str | None, reason: str, nearest: tuple[str | None, float] | None = None,
                  rejection_id: str | None = None, linked_to: str | None = None,
                  link_kind: str | None = None, added_id: str | None = None,
                  fault: str | None = None) -> Decision:
        """Count the decision and explain it; ``nearest`` overrides the gate's nearest memory."""
        self.store.bump(self.scope, event, layer)
        if nearest is None:
            nearest = (self._id(s.nearest_seq), s.nearest_cos) if s else (None, math.nan)
        return Decision(
            event=event, memory_id=memory_id, text=cand.text, layer=layer,  # type: ignore[arg-type]
            novelty=s.novelty if s else math.nan, tau=s.tau if s else math.nan,
            delta=s.delta if s else math.nan, kappa=s.kappa if s else math.nan,
            nearest_id=nearest[0], nearest_cos=nearest[1], reason=reason,
            information=s.information if s else math.nan, new_terms=list(s.new_terms) if s else [],
            rejection_id=rejection_id, linked_to=linked_to, link_kind=link_kind, added_id=added_id, fault=fault,
        )

    def _add(self, cand: Candidate, s: GateScore | None, *, layer: str, reason: str) -> tuple[int, str]:
        share = self.gate.share(s) if s is not None else math.nan
        seq, memory_id = self.store.insert_memory(
            self.scope, text=cand.text, text_hash=cand.hash, embedding=cand.vector, share=share,
            metadata=cand.metadata, sources=cand.sources, valid_from=cand.valid_from, now=self.now,
            parts=cand.parts)
        self._ids[seq] = memory_id
        self.gate.add(seq, cand.vector, share, cand.text, cand.parts)
        self.store.add_history(memory_id, self.scope, event="ADD", old_text=None, new_text=cand.text,
                               layer=layer, reason=reason, now=self.now)
        return seq, memory_id

    def _reject(self, cand: Candidate, s: GateScore | None, *, layer: str, reason: str,
                into_seq: int | None, nearest_cos: float) -> Decision:
        """NOOP: keep the candidate as a rejection and fold its source into the memory it matched."""
        if s is not None:
            # A refused candidate still tells the threshold how novel this scope's
            # input is. Counting additions alone would bias tau upward (only the
            # novel get in, so the mean novelty rises, so tau rises) and the
            # gate would feed on itself.
            self.gate.record_refusal(s)
        into_id = self._id(into_seq)
        rejection_id = self.store.add_rejection(
            self.scope, text=cand.text, sources=cand.sources, metadata=cand.metadata, layer=layer,
            novelty=s.novelty if s else math.nan, tau=s.tau if s else math.nan,
            delta=s.delta if s else math.nan, kappa=s.kappa if s else math.nan,
            nearest_id=into_id, nearest_cos=nearest_cos, reason=reason, valid_from=cand.valid_from, now=self.now,
            information=s.information if s else math.nan)
        if into_seq is not None and into_id is not None:
            self.store.touch_memory(into_seq, sources=cand.sources, now=self.now)
            self.store.add_history(into_id, self.scope, event="NOOP", old_text=None, new_text=cand.text,
                                   layer=layer, reason=reason, now=self.now,
                                   extra={"rejection_id": rejection_id, "sources": cand.sources})
        return self._decision(cand, s, event="NOOP", layer=layer, memory_id=into_id, reason=reason,
                              rejection_id=rejection_id, nearest=(into_id, nearest_cos))

    # ---- the path ------------------------------------------------------------

    def apply(self, cand: Candidate) -> Decision:
        if self.config.exact_dedup:
            dup = self._duplicate(cand)
            if dup is not None:
                seq, _ = dup
                self._ids[seq] = dup[1]
                return self._reject(cand, None, layer="exact", into_seq=seq, nearest_cos=1.0,
                                    reason="the same text (after normalization) is already stored in this scope")
        s = self._score(cand)
        swap = None
        if s.route == "ADD":
            _, memory_id = self._add(cand, s, layer="novelty", reason=_why_add(s))
            return self._decision(cand, s, event="ADD", layer="novelty", memory_id=memory_id, reason=_why_add(s))
        if s.route == "NOOP":
            apart = self._kept_apart(cand, s.nearest_seq)
            if apart is not None:
                return self._keep_apart(cand, s, apart)
            swap = self._swapped(cand, s)
            if swap is None:
                return self._reject(cand, s, layer="novelty", into_seq=s.nearest_seq, nearest_cos=s.nearest_cos,
                                    reason=_why_noop(s, self.config.info_tau))
            # A word put where the memory says another, which the embedder reads as another value:
            # the band's, as a value the memory does not say (a newer version of it).
            s = replace(s, route="BAND", decided_by="information", new_values=(*s.new_values, swap.said),
                        nearest_lacks=(swap.said, *(w for w in s.nearest_lacks if w != swap.said)))
        if self.crud is not None:
            return self._band_llm(cand, s)
        return self._band_policy(cand, s, swap=swap)

    def _duplicate(self, cand: Candidate) -> tuple[int, str] | None:
        """The active memory (seq, id) whose text the candidate repeats, which exact dedup folds it
        into; None when there is none, or when a fold would lose what the candidate says:

        - one hash, two values ("Tr0ub4dor" / "tr0ub4dor"): the gate decides;
        - a thing done (memsieve.text.events), and every copy was told on another day: "I went to
          the gym this morning." told on Monday and again on Tuesday is two visits, and folded, a
          reader would see Monday's alone. The gate keeps it apart (``_kept_apart``). A copy told
          on the candidate's day is its duplicate, so a history imported twice is stored once,
          and so is a text that names its own date or year ("We moved to Lisbon in 2019."): said
          again, it tells of the same one (an agent saving a fact it already saved).
        """
        dup = self.store.active_by_hash(self.scope, cand.hash)
        if dup is None or self._rewrites_a_value(cand.text, dup[0]):
            return None
        if self._done_apart(cand, dup[0]) is None:
            return dup  # most duplicates: no event, told on the first copy's day, or dated in words
        copies = self.store.actives_by_hash(self.scope, cand.hash)[1:]
        items = self.store.items_for_seqs([seq for seq, _ in copies])
        return next(((seq, mid) for seq, mid in copies if seq in items
                     and self._days_apart(cand, items[seq]) is None), None)

    def _rewrites_a_value(self, text: str, seq: int) -> bool:
        """Whether ``text`` writes a value of the memory ``seq`` (a digit-bearing or signed word) in
        another case, compatibility form or sign: exact dedup's normalization reads them as one. The
        memory's written values are its marks' (the gate holds every active memory's)."""
        mine = written_values(text)
        if not mine:
            return False  # most duplicates write no value: their memory's marks are not read for it
        held = self.gate.marks_of(seq)
        return held is not None and bool(rewritten_values(mine, held.written))

    def _kept_apart(self, cand: Candidate, seq: int | None) -> str | None:
        """Why a text the novelty gate would fold into memory ``seq`` is stored instead, or None.

        A reader of a NOOP sees only the memory it was folded into, so a fold must not turn what
        was said into something else:

        - the memory is another speaker's words (chat roles, memsieve.read.speaker): a user's "I
          swim every morning before work" folded into the assistant's answer on swimming technique
          would survive as the assistant's words;
        - the text tells of a thing done (memsieve.text.events) and the memory was told on
          another day (``told_apart``): a reader sees the memory's day, not the text's. "I went to
          a pride parade" in August folded into "I went to a pride parade last week" told in July
          leaves one parade where there were two, and "Audrey set up a play area for her dogs"
          folded into "Audrey plays fetch with her dogs" leaves no play area, so a later "how
          many ...?" or "what did she do in June?" finds neither.
        """
        if seq is None:
            return None
        spoken = role_of(cand.metadata) is not None
        done = self.gate.lexicon.tells_of_its_day(cand.text)
        if not spoken and not done:
            return None  # most folds: neither rule can apply, so the memory is not read
        item = self.store.items_for_seqs([seq]).get(seq)
        speakers = _apart(cand, item) if spoken else None
        if speakers is not None:
            mine, theirs = speakers
            return (f"the memory it would fold into is the {theirs}'s words and this is the {mine}'s: "
                    "it is stored, not folded across speakers")
        days = self._days_apart(cand, item) if done else None
        if days is not None:
            return (f"it tells of a thing done, told on {days[0]}, and the memory it would fold into "
                    f"was told on {days[1]}: it is stored as an event of its own, not folded")
        return None

    def _keep_apart(self, cand: Candidate, s: GateScore, why: str) -> Decision:
        """ADD a text the novelty gate would fold into a memory it must not be folded into
        (``_kept_apart`` says why), linked ``near`` it: an answer is no version of what it
        answers, nor one thing done of another.
        """
        reason = f"{_why_noop(s, self.config.info_tau)}, but {why}, and linked to that memory"
        return self._add_near(cand, s, s.nearest_seq, layer="novelty", reason=reason)

    def _add_near(self, cand: Candidate, s: GateScore, seq: int | None, *, layer: str, reason: str,
                  fault: str | None = None) -> Decision:
        """ADD a text that a fold into memory ``seq`` would have lost, linked ``near`` that memory
        (the gate's kept-apart NOOPs, and the LLM's NOOP or UPDATE of a thing done on another day)."""
        _, memory_id = self._add(cand, s, layer=layer, reason=reason)
        linked_to = self._id(seq)
        if linked_to is not None:
            self.store.add_link(memory_id, linked_to, kind="near", cosine=s.nearest_cos, now=self.now)
        return self._decision(cand, s, event="ADD", layer=layer, memory_id=memory_id, reason=reason,
                              linked_to=linked_to, link_kind="near" if linked_to is not None else None,
                              nearest=(linked_to, s.nearest_cos) if linked_to is not None else None, fault=fault)

    def _done_apart(self, cand: Candidate, seq: int | None) -> tuple[str, str] | None:
        """(the day the text was told, the day memory ``seq`` was) when the text tells of a thing
        done and the days differ (``_kept_apart``): the band's fold does not lose an event's day
        either."""
        if seq is None or not self.gate.lexicon.tells_of_its_day(cand.text):
            return None
        return self._days_apart(cand, self.store.items_for_seqs([seq]).get(seq))

    def _days_apart(self, cand: Candidate, item: Any) -> tuple[str, str] | None:
        """``told_apart`` for the candidate (told on its ``valid_from``, else in this write) and
        ``item`` (a memory row, or None: no days to tell apart)."""
        return None if item is None else told_apart(cand.valid_from or self.now, item)

    def _score(self, cand: Candidate) -> GateScore:
        """The gate's score of the candidate; for a long text, of its most novel passage.

        A long text is a NOOP only if every passage of it is (each judged by
        its own vector and words): the route is the strongest of its
        passages' (ADD over BAND over NOOP), and the score reported is that
        passage's (the first such, passage 0 being the whole text's own).
        """
        s = self.gate.score(cand.vector, cand.text)
        for part in cand.parts:
            if s.route == "ADD":
                break
            if part.is_key:
                # Sentence keys are for search: the gate judges the whole text (and a long one's passages).
                continue
            p = self.gate.score(part.vector, cand.text[part.start:part.end], whole=cand.text)
            if _ROUTE_RANK[p.route] > _ROUTE_RANK[s.route]:
                s = p
        return s

    def _swapped(self, cand: Candidate, s: GateScore) -> Swap | None:
        """The word of a NOOP's text put where its nearest memory says another that the embedder
        reads as another value (memsieve.write.swaps), or None: most folds lack no word, or too
        many for a swap, and embed nothing here."""
        if (s.nearest_seq is None or not s.nearest_lacks or len(s.nearest_lacks) > MOST_NEW
                or s.novelty < SWAP_FROM * s.tau):
            return None
        memory_id = self._id(s.nearest_seq)
        if memory_id is None:
            return None
        row = self.store.memory_row(memory_id)
        return swapped_value(cand.text, row.text, cosine=float(np.dot(cand.vector, row.embedding)),
                             memory_vector=row.embedding, embed=self.embed)

    def _band_policy(self, cand: Candidate, s: GateScore, *, swap: Swap | None = None) -> Decision:
        where = _why_band(s, self.config.info_tau)
        if swap is not None:
            where += f": it puts {swap_said(swap)}, which reads as another value"

        policy = self.config.band_policy
        if policy == "noop":
            return self._reject(cand, s, layer="band", into_seq=s.nearest_seq, nearest_cos=s.nearest_cos,
                                reason=f"{where}; band policy 'noop' keeps it as a rejection")
        days = None
        if policy == "fold" and _nearest_says_it_all(s):
            days = self._done_apart(cand, s.nearest_seq)
            if days is None:
                return self._reject(cand, s, layer="band", into_seq=s.nearest_seq, nearest_cos=s.nearest_cos,
                                    reason=f"{where} but its nearest memory says everything it says (every word, "
                                           "number, name and date; no new change); band policy 'fold' folds it "
                                           "into that memory")
        reason = f"{where}; band policy '{policy}' adds it"
        if days is not None:
            reason = (f"{where} and its nearest memory says everything it says, but it tells of a thing done, "
                      f"told on {days[0]}, and that memory was told on {days[1]}; band policy '{policy}' adds it "
                      "as an event of its own")
        _, memory_id = self._add(cand, s, layer="band", reason=reason)
        linked_to = None
        if policy in ("add_link", "fold") and s.nearest_seq is not None:
            linked_to = self._id(s.nearest_seq)
            if linked_to is not None:
                # Close in meaning yet new in content is a newer version of the
                # nearest memory, which freshness at read ranks first; a merely
                # related text (the semantic band) is linked as a neighbour only,
                # and so is another speaker's: an answer is no version of what it
                # answers (the chat's speakers, as for a novelty NOOP).
                # Nor is a thing done the newer version of another done before ("I went to a rock
                # concert" / "I went to a jazz concert", memsieve.text.events): both happened.
                near = self.store.items_for_seqs([s.nearest_seq]).get(s.nearest_seq) if s.says_more else None
                apart = _apart(cand, near)
                events = (near is not None and apart is None and self.gate.lexicon.tells_of_event(cand.text)
                          and self.gate.lexicon.tells_of_event(near.text))
                kind = "updates" if s.says_more and apart is None and not events else "near"
                self.store.add_link(memory_id, linked_to, kind=kind, cosine=s.nearest_cos, now=self.now)
                reason += (f" as a newer version of the nearest memory (cosine {s.nearest_cos:.3f})" if kind == "updates"
                           else f" and links it to the nearest memory (cosine {s.nearest_cos:.3f})")
                if apart is not None:
                    reason += (f", as a neighbour, not a newer version: that memory is the {apart[1]}'s words "
                               f"and this is the {apart[0]}'s")
                elif events:
                    reason += (", as a neighbour, not a newer version: each tells of a thing done, "
                               "and one does not undo the other")
        return self._decision(cand, s, event="ADD", layer="band", memory_id=memory_id, reason=reason,
                              linked_to=linked_to, link_kind=kind if linked_to else None)

    def _band_llm(self, cand: Candidate, s: GateScore) -> Decision:
        assert self.crud is not None and self.guard is not None
        seqs, _ = self.gate.nearest(cand.vector, NEIGHBOURS_FOR_LLM)
        items = self.store.items_for_seqs([int(q) for q in seqs])
        neighbours = [(items[int(q)].id, items[int(q)].text) for q in seqs if int(q) in items]
        seq_of = {items[int(q)].id: int(q) for q in seqs if int(q) in items}
        decision = self.crud(cand.text, neighbours)
        if decision.event in ("UPDATE", "DELETE") and decision.target_id in seq_of:
            target_vec = self.store.memory_row(decision.target_id).embedding
            cos = float(np.dot(target_vec, cand.vector))
            decision = self.guard(decision, cos, self.config.crud_update_min_sim)
        if decision.fault:
            self.store.add_fault(self.scope, kind=decision.fault, detail=decision.reason or "",
                                 raw=getattr(decision, "raw", None), now=self.now)
        fault = decision.fault
        why = f"LLM: {decision.reason}" if decision.reason else "LLM decision"
        if decision.event == "NOOP":
            target_seq = seq_of.get(decision.target_id) if decision.target_id else s.nearest_seq
            days = self._done_apart(cand, target_seq)
            if days is None:
                return self._reject(cand, s, layer="llm", into_seq=target_seq, nearest_cos=s.nearest_cos,
                                    reason=why)
            # The model's fold is held to the rule the gate's folds keep: a thing done, told on
            # another day than the memory, is another time it was done.
            return self._add_near(cand, s, target_seq, layer="llm", fault=fault,
                                  reason=_kept_as_event(why, days, not_done="folded", would="fold it into"))
        if decision.event == "UPDATE":
            target_seq = seq_of[decision.target_id]
            days = self._done_apart(cand, target_seq)
            if days is not None:
                # A rewrite keeps the memory's day: "I went to the gym this morning" told on Tuesday,
                # written over Monday's visit, would leave one visit, dated Monday, and "Yuki started
                # violin this month" merged into January's "Yuki is seven" would date the lessons in
                # January. Stored as its own memory instead, a neighbour of that one: a thing done is
                # no newer version of what the model merged it with (both stay, each with its day).
                return self._add_near(cand, s, target_seq, layer="llm", fault=fault,
                                      reason=_kept_as_event(why, days, not_done="rewritten", would="rewrite",
                                                            kept=", whose day a rewrite keeps"))
            new_text = (decision.text or "").strip() or cand.text
            old = self.store.memory_row(decision.target_id)
            vec, parts = (cand.vector, cand.parts) if new_text == cand.text else self.embed_one(new_text)
            self.store.update_memory_text(target_seq, text=new_text, text_hash=text_hash(new_text),
                                          embedding=vec, now=self.now, parts=parts)
            self.store.touch_memory(target_seq, sources=cand.sources, now=self.now)
            self.store.add_history(decision.target_id, self.scope, event="UPDATE", old_text=old.text,
                                   new_text=new_text, layer="llm", reason=why, now=self.now,
                                   extra={"candidate": cand.text, "sources": cand.sources})
            self.gate.replace(target_seq, vec, new_text, parts)
            return self._decision(cand, s, event="UPDATE", layer="llm", memory_id=decision.target_id,
                                  reason=why, fault=fault)
        if decision.event == "DELETE":
            target_seq = seq_of[decision.target_id]
            old = self.store.memory_row(decision.target_id)
            self.store.soft_delete(target_seq, now=self.now, valid_to=cand.valid_from)
            self.store.add_history(decision.target_id, self.scope, event="DELETE", old_text=old.text,
                                   new_text=None, layer="llm", reason=why, now=self.now,
                                   extra={"superseded_by_text": cand.text})
            self.gate.remove(target_seq)
            # The contradicting fact itself is kept: a DELETE retires the old
            # memory, it never swallows the new one.
            _, new_id = self._add(cand, s, layer="llm", reason=f"supersedes {decision.target_id}: {why}")
            self.store.add_link(new_id, decision.target_id, kind="supersedes", cosine=s.nearest_cos, now=self.now)
            return self._decision(cand, s, event="DELETE", layer="llm", memory_id=decision.target_id,
                                  reason=why, fault=fault, added_id=new_id)
        _, memory_id = self._add(cand, s, layer="llm", reason=why)
        return self._decision(cand, s, event="ADD", layer="llm", memory_id=memory_id, reason=why, fault=fault)


def _kept_as_event(why: str, days: tuple[str, str], *, not_done: str, would: str, kept: str = "") -> str:
    """The reason of an LLM decision held to the days rule: the model's reason, then why its fold
    or rewrite of a thing done (told on ``days[0]``) into a memory told on ``days[1]`` was not made."""
    return (f"{why}; not {not_done}: it tells of a thing done, told on {days[0]}, and the memory the model "
            f"would {would} was told on {days[1]}{kept}: it is stored as an event of its own, linked to that memory")


def _new_terms(s: GateScore) -> str:
    shown = ", ".join(repr(t) for t in s.new_terms[:5])
    return f" ({shown})" if shown else ""


def _why_noop(s: GateScore, info_tau: float) -> str:
    said = f"novelty {s.novelty:.3f} is below the scope's threshold tau {s.tau:.3f}"
    if s.information == s.information:  # computed
        said += f" and it adds little information ({s.information:.2f} < {info_tau:.2f})"
        if s.new_terms:
            said += f"; its new words{_new_terms(s)} mostly reword what the nearest memory says"
    return said


def _nearest_says_it_all(s: GateScore) -> bool:
    """Whether a semantic-band candidate may be folded into its nearest memory: the text was weighed
    (the kde profile, with a text) and that memory alone holds every word and value of it, and no
    change cue of it is new. Held by the nearest memories together is not enough here (it is below
    tau): a reader of a NOOP sees the one memory it was folded into."""
    return (s.decided_by == "novelty" and s.nearest_seq is not None and math.isfinite(s.information)
            and not s.nearest_lacks and not s.new_values and not s.changes)


def _why_band(s: GateScore, info_tau: float) -> str:
    if s.decided_by == "information":
        close = f"close in meaning (novelty {s.novelty:.3f} < tau {s.tau:.3f})"
        if s.information >= info_tau:
            return (f"{close} but it carries new information "
                    f"({s.information:.2f} >= {info_tau:.2f}: {', '.join(repr(t) for t in s.new_terms[:5])})")
        if s.changes:
            return f"{close} but it says a change its nearest memories do not ({_changes(s)})"
        unsaid = s.new_values or s.nearest_lacks
        said = (f"{close} but its nearest memory, which a NOOP would fold it into, does not say "
                f"{', '.join(repr(v) for v in unsaid[:5])}")
        if not s.new_values and math.isfinite(s.folded_information):
            said += f" (its information against that memory alone is {s.folded_information:.2f})"
        return said
    said = f"novelty {s.novelty:.3f} is in the band [{s.tau:.3f}, {s.tau + s.delta:.3f})"
    if s.changes:
        said += f" and it says a change ({_changes(s)})"
    return said


def _changes(s: GateScore) -> str:
    return ", ".join(repr(c) for c in s.changes)


def told_apart(told: str, item: Any) -> tuple[str, str] | None:
    """(the day a text was told, the day ``item`` was) when they differ, else None.

    A day is the calendar date of ``valid_from`` as the caller gave it (in its own UTC offset),
    or, without one, of when the text was written (``MemoryItem.told_on``): two things told on
    one day may be one event told twice, two told days apart are not taken for one.

    Args:
        told: the text's ``valid_from`` (ISO, in the offset it was given in) or the write's time.
        item: the memory (a ``MemoryItem``).
    """
    mine, other = told[:10], item.told_on
    return (mine, other) if mine != other else None


def _apart(cand: Candidate, item: Any) -> tuple[str, str] | None:
    """(the candidate's speaker, the other) when ``item`` (a memory row, or None) is another speaker's words."""
    mine = role_of(cand.metadata)
    theirs = role_of(item.metadata) if item is not None else None
    return (mine, theirs) if mine is not None and theirs is not None and theirs != mine else None


def _why_add(s: GateScore) -> str:
    if math.isinf(s.novelty):
        return "first memory of this scope"
    if s.delta == 0 and s.tau == 0:
        return "no gate: every new text is stored"
    said = f"novelty {s.novelty:.3f} is at or above tau + delta = {s.tau + s.delta:.3f}"
    if s.information == s.information:  # computed: say it, though meaning alone decided
        said += f" (information {s.information:.2f})"
    return said
