"""The store protocols: both stores satisfy them (checked by mypy), writes need a transaction,
and every method of a closed store raises ClosedError."""

from __future__ import annotations

import inspect
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from memsieve import Scope
from memsieve.errors import ClosedError, StoreError
from memsieve.store import Store, StoreReader, WriteTx, open_store

ROOT = Path(__file__).resolve().parent.parent


def _mypy(*targets: str) -> tuple[str, int]:
    from mypy import api

    cache = os.path.join(tempfile.gettempdir(), "memsieve-mypy-cache")
    out, err, status = api.run(["--cache-dir", cache, "--no-error-summary", *targets])
    return out + err, status


@pytest.mark.slow
def test_mypy_finds_both_stores_satisfy_the_protocols():
    # sqlite.py and postgres.py end with a function that returns the store as a
    # (Store, WriteTx) pair, so any drift in a name, a parameter or a return
    # type between a store and the protocols is a type error here.
    out, status = _mypy(str(ROOT / "python" / "memsieve" / "store"))
    assert status == 0, out


def test_mypy_rejects_a_write_outside_a_transaction(tmp_path):
    snippet = tmp_path / "writes.py"
    snippet.write_text(
        "from memsieve.scope import Scope\n"
        "from memsieve.store import open_store\n"
        "store = open_store(':memory:')\n"
        "store.bump(Scope.of('u'), 'ADD', 'user')\n"
        "with store.transaction(Scope.of('u')) as tx:\n"
        "    tx.bump(Scope.of('u'), 'ADD', 'user')\n"
        "    tx.get_all(Scope.of('u'), include_inactive=False, limit=None)\n"
    )
    os.environ.setdefault("MYPYPATH", str(ROOT / "python"))
    out, status = _mypy(str(snippet))
    assert status == 1
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and 'writes.py:4: error: "Store" has no attribute "bump"' in errors[0], out


def _members(protocol: type) -> set[str]:
    return {n for n, _ in inspect.getmembers(protocol) if not n.startswith("_")}


def _calls() -> dict[str, object]:
    u = Scope.of("u")
    v = np.ones(4, dtype=np.float32) / 2
    return {
        # reads
        "read_scope": lambda s: s.read_scope(u),
        "peek_revision": lambda s: s.peek_revision(u),
        "scope_vectors": lambda s: s.scope_vectors(u, 4),
        "changes_since": lambda s: s.changes_since(u, 0, 4),
        "scope_parts": lambda s: s.scope_parts(u, 4),
        "parts_of": lambda s: s.parts_of([1], 4),
        "version_parts_of": lambda s: s.version_parts_of([1], 4),
        "scope_keys": lambda s: s.scope_keys(),
        "active_by_hash": lambda s: s.active_by_hash(u, "h"),
        "actives_by_hash": lambda s: s.actives_by_hash(u, "h"),
        "memory_row": lambda s: s.memory_row("m"),
        "ids_for_seqs": lambda s: s.ids_for_seqs([1]),
        "embeddings_for_seqs": lambda s: s.embeddings_for_seqs([1]),
        "items_for_seqs": lambda s: s.items_for_seqs([1]),
        "items_at": lambda s: s.items_at([1], "2030-01-01T00:00:00+00:00"),
        "candidates": lambda s: s.candidates(u, as_of=None),
        "get": lambda s: s.get("m"),
        "get_all": lambda s: s.get_all(u, include_inactive=True, limit=None),
        "count_active": lambda s: s.count_active(u),
        "history": lambda s: s.history("m"),
        "rejection": lambda s: s.rejection("r"),
        "rejections": lambda s: s.rejections(u, since=None, layer=None, limit=None),
        "count_rejections": lambda s: s.count_rejections(u),
        "links": lambda s: s.links("m"),
        "version_links": lambda s: s.version_links(["m"]),
        "counters": lambda s: s.counters(u),
        "faults": lambda s: s.faults(u),
        "size_bytes": lambda s: s.size_bytes(),
        "integrity_ok": lambda s: s.integrity_ok(),
        # the store itself
        "transaction": lambda s: s.transaction(u).__enter__(),
        # writes (the closed store refuses them before any transaction could begin)
        "ensure_scope_row": lambda s: s.ensure_scope_row(u, now="t"),
        "save_scope": lambda s: s.save_scope(u, revision=1, dim=4, gate_state=b"", sage_tau=None),
        "mark_changed": lambda s: s.mark_changed(u, [1], 1),
        "stamp_inserts": lambda s: s.stamp_inserts(u, 1),
        "insert_memory": lambda s: s.insert_memory(u, text="t", text_hash="h", embedding=v, share=0.5, metadata={},
                                                   sources=[], valid_from=None, now="t"),
        "touch_memory": lambda s: s.touch_memory(1, sources=[], now="t"),
        "update_memory_text": lambda s: s.update_memory_text(1, text="t", text_hash="h", embedding=v, now="t"),
        "soft_delete": lambda s: s.soft_delete(1, now="t", valid_to=None),
        "add_history": lambda s: s.add_history("m", u, event="ADD", old_text=None, new_text="t", layer="user",
                                               reason="", now="t"),
        "add_rejection": lambda s: s.add_rejection(u, text="t", sources=[], metadata={}, layer="exact", novelty=0.0,
                                                   tau=0.0, delta=0.0, kappa=1.0, nearest_id=None, nearest_cos=0.0,
                                                   reason="r", valid_from=None, now="t"),
        "mark_restored": lambda s: s.mark_restored("r", "m", "t"),
        "folds_into": lambda s: s.folds_into(u, ["m"], newest=2),
        "shown_folds": lambda s: s.shown_folds(u),
        "folds_after": lambda s: s.folds_after(u, 0),
        "folds_signature": lambda s: s.folds_signature(u),
        "forget_folds": lambda s: s.forget_folds([("r", "why")], now="t"),
        "retired_members": lambda s: s.retired_members(u, ["m"]),
        "merges_signature": lambda s: s.merges_signature(u),
        "retired_into": lambda s: s.retired_into(u),
        "add_link": lambda s: s.add_link("m", "n", kind="near", cosine=0.5, now="t"),
        "bump": lambda s: s.bump(u, "ADD", "user"),
        "add_fault": lambda s: s.add_fault(u, kind="k", detail="d", raw=None, now="t"),
        "purge_memory": lambda s: s.purge_memory(1, reason="r", now="t"),
        "purge_rejection": lambda s: s.purge_rejection("r", reason="r", now="t"),
        "checkpoint": lambda s: s.checkpoint(),
        "inactive_texts": lambda s: s.inactive_texts(u),
        "earlier_texts": lambda s: s.earlier_texts(u),
        "finish_erasure": lambda s: s.finish_erasure(wait=0.0),
        "compact": lambda s: s.compact(),
        "claim_reply": lambda s: s.claim_reply("k", "i", scope_key=None, fingerprint="f", now="t", stale_before="t"),
        "keep_reply": lambda s: s.keep_reply("k", "i", status=200, body="{}"),
        "touch_reply": lambda s: s.touch_reply("k", "i", now="t"),
        "drop_reply": lambda s: s.drop_reply("k", "i"),
        "expire_replies": lambda s: s.expire_replies("t"),
    }


@pytest.fixture(params=["sqlite", "postgres"])
def closed_store(request, tmp_path):
    target = str(tmp_path / "c.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    store = open_store(target)
    with store.transaction(Scope.of("u")) as tx:
        tx.bump(Scope.of("u"), "ADD", "user")
    store.close()
    return store


def test_every_method_of_a_closed_store_raises_closed_error(closed_store):
    calls = _calls()
    # Every public method of the protocols is exercised (close and the attributes aside).
    assert set(calls) == (_members(StoreReader) | _members(WriteTx) | _members(Store)) - {"close", "index_dir", "erasure_pending"}
    for name, call in calls.items():
        with pytest.raises(ClosedError, match=r"^the store .* is closed; open a new one") as info:
            call(closed_store)  # type: ignore[operator]
        assert isinstance(info.value, StoreError), name
    closed_store.close()  # closing twice is harmless
