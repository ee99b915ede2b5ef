"""The Reranker protocol: a plugged-in model rescores the fused top-N of every search."""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError, MemsieveError
from memsieve.read.rerank import RerankerError


class LengthReranker:
    """Prefers longer texts: the opposite of what any first stage would do for a short query."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def rerank(self, query, texts):
        self.seen.append(list(texts))
        return [float(len(t)) for t in texts]


class Broken:
    def __init__(self, reply):
        self.reply = reply

    def rerank(self, query, texts):
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply(texts)


TEXTS = ["Tea.", "I like green tea in the morning.", "Tea with milk and two sugars, every afternoon at four."]


def test_the_reranker_orders_the_results_and_sees_the_first_stage_depth(tmp_path, table_embedder):
    rr = LengthReranker()
    m = Memory(tmp_path / "r.db", embedder=table_embedder, gate=GateConfig(profile="none"), reranker=rr,
               rerank_depth=6)
    m.add(TEXTS + [f"unrelated note {i}" for i in range(10)], user_id="u")
    hits = m.search("Tea.", user_id="u", mode="dense", limit=2)
    assert len(rr.seen[-1]) == 6  # the depth, not the limit
    assert [h.text for h in hits] == sorted(rr.seen[-1], key=len, reverse=True)[:2]
    assert hits[0].score == float(len(hits[0].text))
    m.close()


@pytest.mark.parametrize("reply, message", [
    (lambda texts: [1.0], "scores for"),
    (lambda texts: [float("nan")] * len(texts), "finite"),
    (lambda texts: ["high"] * len(texts), "not a number"),
    (RuntimeError("model file missing"), "model file missing"),
])
def test_a_misbehaving_reranker_is_a_typed_error(tmp_path, table_embedder, reply, message):
    m = Memory(tmp_path / "b.db", embedder=table_embedder, reranker=Broken(reply))
    m.add(TEXTS, user_id="u")
    with pytest.raises(RerankerError, match=message) as info:
        m.search("tea", user_id="u", mode="keyword")
    assert isinstance(info.value, MemsieveError)
    m.close()


def test_a_reranker_without_rerank_is_refused(tmp_path, table_embedder):
    with pytest.raises(ConfigError, match="rerank"):
        Memory(tmp_path / "n.db", embedder=table_embedder, reranker=object())
