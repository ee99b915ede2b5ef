"""add_many embeds its next batch while it decides the current one.

The vectors of a batch do not depend on earlier decisions, so the writer
embeds batch i + 1 on a second thread while batch i goes through the gate and
the store. These tests pin what that must not change: the decisions, the
order of commits, errors (an embedding failure of a later batch leaves the
earlier batches committed and nothing of its own), and that the writes'
embedder is never called by two threads at once.
"""

from __future__ import annotations

import threading
import time

import pytest

from conftest import TableEmbedder
from memsieve import EmbedderError, GateConfig, Memory
from memsieve.write.writer import Writer

FACTS = [f"Fact number {i}: the {w} is kept in drawer {i % 7}." for i, w in
         enumerate(["key", "pen", "map", "cup", "lamp", "coin", "book", "ring"] * 6)]


class Watched(TableEmbedder):
    """Records each call's thread and time span, and the most calls ever inside at once."""

    def __init__(self, *, pause: float = 0.0, fail_on_call: int | None = None) -> None:
        super().__init__(dim=32)
        self.pause = pause
        self.fail_on_call = fail_on_call
        self.spans: list[tuple[str, float, float]] = []
        self.inside = 0
        self.most_inside = 0
        self.started = [threading.Event() for _ in range(64)]
        self._lock = threading.Lock()

    def embed(self, texts):
        with self._lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            call = len(self.spans) + 1
        self.started[call - 1].set()
        start = time.perf_counter()
        try:
            if self.fail_on_call == call:
                raise RuntimeError(f"model crashed on call {call}")
            time.sleep(self.pause)
            return super().embed(texts)
        finally:
            with self._lock:
                self.inside -= 1
                self.spans.append((threading.current_thread().name, start, time.perf_counter()))


def _decided_while_embedding(monkeypatch, emb: Watched, batches: int) -> list[bool]:
    """Make each batch's decision wait (at most 10 s) until the next batch's embedding has
    started, and record whether it did: a writer that embedded the next batch only after
    deciding this one would wait out every timeout."""
    seen: list[bool] = []
    real = Writer._decide

    def waiting(self, scope, calls):
        i = len(seen)
        seen.append(emb.started[i + 1].wait(timeout=10) if i + 1 < batches else True)
        return real(self, scope, calls)

    monkeypatch.setattr(Writer, "_decide", waiting)
    return seen


def test_decisions_equal_one_add_per_item_and_the_next_batch_is_embedded_ahead(tmp_path, monkeypatch):
    one = Memory(tmp_path / "one.db", embedder=TableEmbedder(dim=32))
    want = [[(d.event, d.reason) for d in one.add(text, user_id="u")] for text in FACTS]
    one.close()

    emb = Watched(pause=0.01)
    overlapped = _decided_while_embedding(monkeypatch, emb, batches=6)
    bulk = Memory(tmp_path / "bulk.db", embedder=emb)
    got = [[(d.event, d.reason) for d in ds] for ds in bulk.add_many(FACTS, user_id="u", batch_size=8)]
    assert got == want
    assert {e for ds in got for e, _ in ds} >= {"ADD"}
    # Six batches: each embedded on the second thread, and each but the last
    # decided while the next one was being embedded.
    assert len(emb.spans) == 6 and overlapped == [True] * 6
    assert all(name.startswith("memsieve-embed-ahead") for name, _, _ in emb.spans)
    assert emb.most_inside == 1
    assert [m.text for m in bulk.get_all(user_id="u", limit=100)] != []
    bulk.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("memsieve-embed-ahead")]


def test_a_later_batch_failing_to_embed_leaves_earlier_batches_committed_and_nothing_of_its_own(tmp_path):
    emb = Watched(fail_on_call=3)
    m = Memory(tmp_path / "f.db", embedder=emb, gate=GateConfig(profile="none"))
    with pytest.raises(EmbedderError, match="model crashed on call 3"):
        m.add_many(FACTS[:40], user_id="u", batch_size=8)
    stored = {x.text for x in m.get_all(user_id="u", limit=100)}
    assert stored == set(FACTS[:16]), "batches 1 and 2 are committed, batch 3 and later are not"
    assert not [t for t in threading.enumerate() if t.name.startswith("memsieve-embed-ahead")], \
        "no embedding thread outlives the call"
    m.close()


def test_an_error_after_some_batches_says_what_was_committed_and_where_to_go_on(tmp_path):
    m = Memory(tmp_path / "f.db", embedder=Watched(fail_on_call=3), gate=GateConfig(profile="none"))
    with pytest.raises(EmbedderError) as caught:
        m.add_many(FACTS[:40], user_id="u", batch_size=8)
    err = caught.value
    assert err.committed == 16
    assert [d.text for ds in err.decisions for d in ds] == FACTS[:16]
    assert any("committed items 0-15 of 40" in n and "items[16:]" in n for n in err.__notes__)
    # Going on from there leaves the store as one uninterrupted call would.
    m.add_many(FACTS[err.committed:40], user_id="u", batch_size=8)
    assert sorted(x.text for x in m.get_all(user_id="u", limit=100)) == sorted(FACTS[:40])
    m.close()


def test_an_error_in_the_first_batch_says_nothing_was_written(tmp_path):
    m = Memory(tmp_path / "f.db", embedder=Watched(fail_on_call=1), gate=GateConfig(profile="none"))
    with pytest.raises(EmbedderError) as caught:
        m.add_many(FACTS[:20], user_id="u", batch_size=8)
    assert caught.value.committed == 0 and caught.value.decisions == []
    assert caught.value.__notes__ == ["add_many wrote none of its 20 items"]
    assert m.get_all(user_id="u", limit=100) == []
    m.close()


def test_the_command_line_and_the_service_report_what_a_batch_committed(capsys):
    from memsieve.errors import guarded
    from memsieve.server.errors import error_body

    err = EmbedderError("the embedder failed: boom")
    err.committed = 256
    err.add_note("add_many committed items 0-255 of 600 before this error; they stay stored. Go on with items[256:]")

    def fail() -> int:
        raise err

    assert guarded(fail) == 2
    line = capsys.readouterr().err
    assert "boom" in line and "items 0-255 of 600" in line and "\n" not in line.rstrip("\n")
    body = error_body(err)["error"]
    assert body["committed"] == 256 and body["type"] == "EmbedderError"
    assert "items[256:]" in body["message"]
    assert "committed" not in error_body(EmbedderError("no batch"))["error"]


def test_one_batch_is_embedded_on_the_callers_thread(tmp_path):
    # One batch has nothing to overlap with: no second thread is started for it.
    emb = Watched()
    m = Memory(tmp_path / "one.db", embedder=emb)
    decisions = m.add_many(FACTS[:8], user_id="u", batch_size=8)
    assert len(decisions) == 8
    assert [name for name, _, _ in emb.spans] == [threading.current_thread().name]
    m.close()


def test_a_decision_failing_midway_stops_the_embedding_ahead(tmp_path, monkeypatch):
    emb = Watched()
    real = Writer._decide
    decided = []

    def failing(self, scope, calls):
        if len(decided) == 1:
            raise RuntimeError("the store went away")
        decided.append(len(calls))
        return real(self, scope, calls)

    monkeypatch.setattr(Writer, "_decide", failing)
    m = Memory(tmp_path / "f.db", embedder=emb, gate=GateConfig(profile="none"))
    with pytest.raises(RuntimeError, match="the store went away"):
        m.add_many(FACTS[:40], user_id="u", batch_size=8)
    # Batch 1 decided; batch 2 failed to decide after batch 3 began embedding; nothing further.
    assert decided == [8] and len(emb.spans) == 3
    assert not [t for t in threading.enumerate() if t.name.startswith("memsieve-embed-ahead")]
    m.close()


def test_the_writes_embedder_is_called_one_call_at_a_time():
    """Deciding a batch may embed (an LLM's UPDATE text, a consolidation's merge) while the next
    batch is being embedded: the writes' embedder lets one call in at a time. The first call
    waits (at most 1 s) for a second one to get in beside it; behind the lock none can."""
    from memsieve.write.writer import one_at_a_time

    second_inside = threading.Event()
    inside = []
    met = []

    def slow(texts):
        inside.append(texts[0])
        if texts[0] == "first":
            met.append(second_inside.wait(timeout=1.0))
        else:
            second_inside.set()
        return texts

    embed = one_at_a_time(slow)
    first = threading.Thread(target=embed, args=(["first"],))
    first.start()
    while not inside:
        time.sleep(0.001)
    second = threading.Thread(target=embed, args=(["second"],))
    second.start()
    first.join(5)
    second.join(5)
    assert inside == ["first", "second"]
    assert not first.is_alive() and not second.is_alive()
    # The second call got in only after the first had given up waiting for it.
    assert met == [False] and second_inside.is_set()


def test_an_embedder_safe_across_threads_is_called_beside_another_call():
    """memsieve's ONNX embedder (and a cache around it) may run a decision's texts beside the batch
    ahead; a caller's own embedder, or a subclass that overrides ``embed``, stays behind the lock."""
    from memsieve.embedding import CachedEmbedder, OnnxEmbedder, safe_across_threads
    from memsieve.write.writer import one_at_a_time

    class Mine(OnnxEmbedder):
        def embed(self, texts):
            return super().embed(texts)

    assert safe_across_threads(OnnxEmbedder()) and safe_across_threads(CachedEmbedder(OnnxEmbedder()))
    assert not safe_across_threads(Mine()) and not safe_across_threads(CachedEmbedder(Mine()))
    assert not safe_across_threads(CachedEmbedder(object()))

    second_inside = threading.Event()
    met = []

    def slow(texts):
        if texts[0] == "first":
            met.append(second_inside.wait(timeout=5.0))
        else:
            second_inside.set()
        return texts

    embed = one_at_a_time(slow, shared=lambda: True)
    first = threading.Thread(target=embed, args=(["first"],))
    first.start()
    second = threading.Thread(target=embed, args=(["second"],))
    second.start()
    first.join(10)
    second.join(10)
    assert met == [True]  # the second call got in while the first was inside


def test_a_memorys_writes_share_its_onnx_embedder_across_threads(tmp_path):
    """The Memory asks its embedder, loaded lazily, whether the writes' lock may be skipped."""
    from memsieve.embedding import OnnxEmbedder

    class Mine(OnnxEmbedder):
        def embed(self, texts):
            return super().embed(texts)

    m = Memory(str(tmp_path / "a.db"))
    assert m._embedder_shared()
    m.close()
    m = Memory(str(tmp_path / "b.db"), embedder=Mine())
    assert not m._embedder_shared()
    m.close()
