"""Purging: erasing a memory's text and embedding from every table that holds them, leaving a tombstone.

A soft delete keeps everything (nothing is lost unless the user purges). A
purge is the user saying the text must go: the memory row keeps its id, its
times and its sources, and loses its text, embedding and metadata; its
superseded versions and its passages' embeddings are deleted; its history keeps every row, with the texts
and the reasons erased (a reason may quote the words it judged); the rejections folded into it (still NOOPs
of it) or restored as it keep their numbers and lose their text and metadata;
texts of it that other records quote (a ``superseded_by_text``, a NOOP's
history row in the memory it was folded into, an LLM fault's detail and raw
output, an LLM's reason for a decision about another text, in any memory's
history or any rejection of the scope: whole, JSON-escaped, a sentence of it or
a number or code it holds) are erased too. A ``PURGE`` history row records the reason.

Erasing the rows is the shared part, written once here. Getting the bytes off
the disk is each store's: SQLite zeroes freed space (``secure_delete``) and
truncates the WAL after the transaction, or as soon as no older read holds it
(``finish_erasure``); PostgreSQL runs ``VACUUM``, and ``compact`` (``VACUUM
FULL``) rewrites the pages whose free space still holds the bytes. Which
memories a purge reaches (inactive ones, members of merges at any depth) is
memsieve.write.purge's. Neither keeps a full-text copy of the text
(migration 6 dropped them), and the gate's hnswlib index zeroes a removed
point (index.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from memsieve.errors import NotFoundError
from memsieve.scope import Scope
from memsieve.store.base import PURGED_HASH
from memsieve.store.sql_records import SEQ_BATCH
from memsieve.store.sql_replies import SqlReplies

#: What replaces a reason the LLM wrote (it may quote the erased text).
ERASED_REASON = "(erased by a purge)"

#: Extra keys of a purged memory's own history kept: ids and source lists, never a text.
_KEPT_STRING_KEYS = ("rejection_id",)


class SqlPurge(SqlReplies):
    """``purge_memory`` and ``purge_rejection`` on top of the shared SQL.

    A store supplies, besides the hooks of SqlRecords, ``_NO_VECTOR`` (what an
    erased embedding is stored as) and sets ``_purged`` to False when a
    transaction begins; a purge sets it, so the store can finish the erasure
    (checkpoint) once the transaction commits.
    """

    _NO_VECTOR: Any = None
    _purged = False

    def purge_memory(self, seq: int, *, reason: str, now: str) -> None:
        """Erase the memory's text and embedding everywhere the store holds them, keeping a tombstone.

        The caller bumps the scope's revision and marks the seq changed, as for
        a soft delete; a purged memory is inactive and stays out of every read
        of texts (``candidates`` at any time included). Purging twice is
        harmless and records a second ``PURGE`` row.

        Raises:
            NotFoundError: no memory has this seq.
        """
        row = self._q("SELECT id, scope_key, text FROM memories WHERE seq = %s", (int(seq),)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with seq {int(seq)}; purge a memory that exists (see get_all())")
        memory_id, scope = str(row[0]), Scope.from_key(str(row[1]))
        texts = {str(row[2])} | self._version_texts(int(seq)) | self._history_texts(memory_id)
        rejections = self._q(
            "SELECT id, text, nearest_id FROM rejections WHERE (nearest_id = %s AND restored_memory_id IS NULL)"
            " OR restored_memory_id = %s", (memory_id, memory_id)).fetchall()
        texts |= {str(r[1]) for r in rejections}
        texts.discard("")

        self._q(
            f"UPDATE memories SET text = '', text_hash = %s, embedding = %s, metadata = '{{}}',"
            f" is_active = {self._FALSE}, expired_at = COALESCE(expired_at, %s), valid_to = COALESCE(valid_to, %s),"
            " updated_at = %s WHERE seq = %s",
            (PURGED_HASH, self._NO_VECTOR, now, now, now, int(seq)))
        self._q("DELETE FROM version_parts WHERE memory_seq = %s", (int(seq),))
        self._q("DELETE FROM memory_versions WHERE memory_seq = %s", (int(seq),))
        self._q("DELETE FROM memory_parts WHERE memory_seq = %s", (int(seq),))
        self._scrub_own_history(memory_id)
        self._scrub_merge_hashes(memory_id)
        rejection_ids = {str(r[0]) for r in rejections}
        self._erase_rejections(rejection_ids, reason=f"purged with memory {memory_id}: {reason}")
        # A rejection restored as this memory left a NOOP row in the memory it
        # was folded into; memories linked to this one may quote its text.
        others = {str(r[2]) for r in rejections if r[2] is not None and str(r[2]) != memory_id}
        others |= {str(other) for other, _, _ in self.links(memory_id)}
        self._scrub_quotes(others, texts=texts, rejection_ids=rejection_ids)
        self._scrub_faults(scope, texts)
        self._scrub_replies(scope.key, {memory_id} | rejection_ids)
        self.add_history(memory_id, scope, event="PURGE", old_text=None, new_text=None, layer="user",
                         reason=reason, now=now)
        self._purged = True

    def _scrub_merge_hashes(self, memory_id: str) -> None:
        """A merge records the hash of the text it kept (to tell, on undo, whether it was edited
        since): a hash of the erased text would let anyone holding the file confirm a guess of it.
        The purged memory's merges keep the tombstone's mark instead, and cannot be undone."""
        for merge_id, state in self._q("SELECT id, state FROM merges WHERE kept_id = %s", (memory_id,)).fetchall():
            kept = json.loads(state)
            if kept.get("kept", {}).get("hash") not in (None, PURGED_HASH):
                kept["kept"]["hash"] = PURGED_HASH
                self._q("UPDATE merges SET state = %s WHERE id = %s", (json.dumps(kept), merge_id))

    def purge_rejection(self, rejection_id: str, *, reason: str, now: str) -> None:
        """Erase a rejection's text and metadata (and the NOOP history row that quotes it), keeping its numbers.

        ``now`` is accepted for symmetry with ``purge_memory``; the record's
        reason becomes ``purged: <reason>``.

        Raises:
            NotFoundError: no rejection has this id.
        """
        row = self._q("SELECT text, scope_key, nearest_id FROM rejections WHERE id = %s",
                      (str(rejection_id),)).fetchone()
        if row is None:
            raise NotFoundError.no_rejection(rejection_id)
        texts = {str(row[0])} - {""}
        self._erase_rejections({str(rejection_id)}, reason=f"purged: {reason}")
        if row[2] is not None:
            self._scrub_quotes({str(row[2])}, texts=texts, rejection_ids={str(rejection_id)})
        self._scrub_faults(Scope.from_key(str(row[1])), texts)
        self._scrub_replies(str(row[1]), {str(rejection_id)})
        self._purged = True

    def inactive_texts(self, scope: Scope) -> list[tuple[int, str, str]]:
        """(seq, id, text) of the scope's inactive memories not yet purged, oldest first: what a purge
        by description may name besides the active ones (soft-deleted, superseded, retired by a merge)."""
        return [(int(r[0]), str(r[1]), str(r[2])) for r in self._q(
            f"SELECT seq, id, text FROM memories WHERE scope_key = %s AND is_active = {self._FALSE}"
            " AND text_hash <> %s ORDER BY seq", (scope.key, PURGED_HASH))]

    def earlier_texts(self, scope: Scope) -> list[tuple[int, str, str]]:
        """(seq, id, text) of every text the scope's unpurged memories held before their current one: their
        superseded versions and the texts their history quotes (an update's old and new text, a text
        folded into them). A purge by description reads these too: the memory that once named it erases
        all of them, which ``purge_memory`` does."""
        rows = [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in self._q(
            "SELECT m.seq, m.id, v.text, m.text FROM memory_versions v JOIN memories m ON m.seq = v.memory_seq"
            " WHERE m.scope_key = %s AND m.text_hash <> %s", (scope.key, PURGED_HASH))]
        for seq, memory_id, current, old, new, extra in self._q(
                "SELECT m.seq, m.id, m.text, h.old_text, h.new_text, h.extra FROM history h JOIN memories m"
                " ON m.id = h.memory_id WHERE h.scope_key = %s AND m.text_hash <> %s", (scope.key, PURGED_HASH)):
            # An LLM update's candidate was folded into this memory; "superseded_by_text" quotes another
            # memory, whose own purge scrubs the quote (``_scrub_quotes``).
            quoted = [old, new, json.loads(extra).get("candidate")]
            rows += [(int(seq), str(memory_id), t, str(current)) for t in quoted if isinstance(t, str) and t]
        # The current text is the rule's to judge (an ADD's history row quotes it): only what it no longer says.
        return list(dict.fromkeys((seq, mid, text) for seq, mid, text, current in rows if text != current))

    # ---- the texts a memory has held -----------------------------------------

    def _version_texts(self, seq: int) -> set[str]:
        return {str(r[0]) for r in self._q("SELECT text FROM memory_versions WHERE memory_seq = %s", (seq,))}

    def _history_texts(self, memory_id: str) -> set[str]:
        found: set[str] = set()
        for old, new, extra in self._q("SELECT old_text, new_text, extra FROM history WHERE memory_id = %s",
                                       (memory_id,)):
            found.update(t for t in (old, new) if t)
            found.update(v for k, v in json.loads(extra).items() if isinstance(v, str) and k not in _KEPT_STRING_KEYS)
        return found

    # ---- erasing -----------------------------------------------------------------

    def _scrub_own_history(self, memory_id: str) -> None:
        """Every history row of the purged memory loses its texts, its extra's strings and its reason.

        A reason may quote the text it judged (an LLM's, or the gate's "its new
        words ('kitty') ..." of a NOOP folded into it); each row keeps its event,
        layer, time and numbers."""
        for seq, extra in self._q("SELECT seq, extra FROM history WHERE memory_id = %s", (memory_id,)).fetchall():
            kept = {k: v for k, v in json.loads(extra).items() if not isinstance(v, str) or k in _KEPT_STRING_KEYS}
            self._q("UPDATE history SET old_text = NULL, new_text = NULL, extra = %s, reason = %s WHERE seq = %s",
                    (json.dumps(kept), ERASED_REASON, seq))

    def _scrub_quotes(self, memory_ids: Iterable[str], *, texts: set[str], rejection_ids: set[str]) -> None:
        """In other memories' history: a NOOP row of an erased rejection loses its texts, and any extra
        string equal to an erased text goes. The memories' own texts are theirs and stay."""
        wanted = sorted(set(memory_ids))
        for start in range(0, len(wanted), SEQ_BATCH):
            where, params = self._in_text("memory_id", wanted[start:start + SEQ_BATCH])
            rows = self._q(f"SELECT seq, old_text, new_text, extra FROM history WHERE {where}", params).fetchall()
            for seq, old, new, extra in rows:
                decoded = json.loads(extra)
                quoted = decoded.get("rejection_id") in rejection_ids
                kept = {k: v for k, v in decoded.items() if not (isinstance(v, str) and v in texts)}
                if quoted:  # the NOOP of an erased text: its reason quotes that text's words
                    self._q("UPDATE history SET old_text = NULL, new_text = NULL, extra = %s, reason = %s"
                            " WHERE seq = %s", (json.dumps(kept), ERASED_REASON, seq))
                elif kept != decoded:
                    self._q("UPDATE history SET extra = %s WHERE seq = %s", (json.dumps(kept), seq))

    def _erase_rejections(self, rejection_ids: Iterable[str], *, reason: str) -> None:
        wanted = sorted(rejection_ids)
        for start in range(0, len(wanted), SEQ_BATCH):
            where, params = self._in_text("id", wanted[start:start + SEQ_BATCH])
            self._folds_leave(where, params)
            self._q(f"UPDATE rejections SET text = '', metadata = '{{}}', reason = %s WHERE {where}",
                    [reason, *params])

    def _scrub_faults(self, scope: Scope, texts: set[str]) -> None:
        """What an LLM wrote in the scope that quotes an erased text goes: a fault's detail and raw output,
        and the reason of an LLM decision in any memory's history or any rejection.

        The LLM saw the erased memory among a candidate's neighbours, so the
        reason of a decision about another text may quote it, whole, as JSON
        (escaped quotes) or in part: a sentence of it, or a number or code it
        holds (``quoted_in``)."""
        if not texts:
            return
        quoted = quote_marks(texts)
        for seq, detail, raw in self._q("SELECT seq, detail, raw FROM faults WHERE scope_key = %s",
                                        (scope.key,)).fetchall():
            if quoted_in(quoted, detail) or quoted_in(quoted, raw):
                self._q("UPDATE faults SET detail = %s, raw = NULL WHERE seq = %s", (ERASED_REASON, seq))
        for table, key in (("history", "seq"), ("rejections", "id")):
            for ident, reason in self._q(f"SELECT {key}, reason FROM {table} WHERE scope_key = %s"
                                         " AND layer = 'llm'", (scope.key,)).fetchall():
                if quoted_in(quoted, reason):
                    self._q(f"UPDATE {table} SET reason = %s WHERE {key} = %s", (ERASED_REASON, ident))


#: A number or code of at least this many characters, said in an erased text, marks a quote of it.
MIN_MARK_CHARS = 3
#: A sentence of an erased text of at least this many words, repeated, marks a quote of it.
MIN_SENTENCE_WORDS = 4


def quote_marks(texts: Iterable[str]) -> set[str]:
    """What, found in another record (lowercased), says it quotes one of ``texts``: each text whole and
    as JSON escapes it, each sentence of four words or more, and each word holding a digit ("Zyx7731",
    "555-0142"), all lowercased."""
    marks: set[str] = set()
    for text in texts:
        for form in (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]):
            marks.add(form.lower())
        for sentence in re.split(r"(?<=[.!?;])\s+|\n+", text):
            if len(sentence.split()) >= MIN_SENTENCE_WORDS:
                marks.add(sentence.strip().rstrip(".!?;").lower())
        marks.update(w.lower() for w in re.findall(r"\w*\d[\w-]*", text) if len(w) >= MIN_MARK_CHARS)
    marks.discard("")
    return marks


def quoted_in(marks: set[str], written: str | None) -> bool:
    """Whether ``written`` holds any of ``marks`` (``quote_marks``)."""
    if not written:
        return False
    low = written.lower()
    return any(m in low for m in marks)
