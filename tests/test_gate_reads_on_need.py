"""What the gate reads of a text is read when it may decide something, and nothing else changes.

A memory's readings (cues, counts, names, stated values) are read when a fold is first weighed
against it; a text's marks only where they may change the write path's decision
(``memsieve.gate.profiles.kde.marks_may_decide``). Skipping them elsewhere must leave every
decision and every recorded reason as reading them everywhere would.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import memsieve.gate.profiles.kde as kde
from memsieve import EmbedderError, Memory
from memsieve.embedding import CachedEmbedder, OnnxEmbedder, default_embedder
from memsieve.embedding.onnx import validates_own_output
from memsieve.gate.config import GateConfig

PAIRS = Path(__file__).resolve().parent.parent / "eval" / "gate-changes" / "pairs.jsonl"
FILLERS = ["I've been getting into sourdough baking on weekends.", "My nephew is really into dinosaurs.",
           "We put up a bird feeder outside the kitchen window."]


@pytest.mark.parametrize("route, carries, said, expected", [
    ("ADD", False, {}, False),
    ("NOOP", False, {"lacks": ("paris",)}, True),
    ("NOOP", True, {}, False),
    ("BAND", False, {}, True),
    ("BAND", False, {"unsaid": ("4",)}, False),
    ("BAND", False, {"lacks": ("volvo",)}, False),
    ("BAND", False, {"undated": ("last week",)}, False),
    ("BAND", False, {"changes": ("anymore",)}, False),
])
def test_marks_may_decide(route, carries, said, expected):
    kinds = {"unsaid": (), "lacks": (), "undated": (), "changes": ()} | said
    assert kde.marks_may_decide(route, carries=carries, **kinds) is expected


def _decisions(embedder, pairs, db: Path, *, gate: GateConfig) -> list[tuple]:
    out = []
    with Memory(db, embedder=embedder, gate=gate) as m:
        for pair in pairs:
            scope = f"pair-{pair['id']}"
            m.add_many(FILLERS + [pair["earlier"]], user_id=scope)
            for d in m.add(pair["later"], user_id=scope):
                out.append((pair["id"], d.event, d.layer, d.reason, d.link_kind, d.novelty, d.information))
    return out


# The default gate, the band adding what it holds, and a band that takes every text (a fixed tau
# of 0 and a band of 1), where a fold rests on the marks alone.
GATES = {"default": GateConfig(), "band adds": GateConfig(band_policy="add"),
         "all in the band": GateConfig(tau=0.0, delta=1.0)}


@pytest.mark.parametrize("name", list(GATES))
def test_skipping_the_marks_changes_no_decision_and_no_reason(tmp_path, monkeypatch, name):
    pairs = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    embedder = CachedEmbedder(default_embedder())
    embedder.embed(FILLERS + [p[k] for p in pairs for k in ("earlier", "later")])
    skipped = _decisions(embedder, pairs, tmp_path / "skipped.db", gate=GATES[name])
    monkeypatch.setattr(kde, "marks_may_decide", lambda *a, **k: True)
    read = _decisions(embedder, pairs, tmp_path / "read.db", gate=GATES[name])
    assert len(skipped) == len(pairs)
    # The set reaches the routes where the marks may matter: folds refused and made.
    assert {d[1] for d in read} == {"ADD", "NOOP"} and any(d[2] == "band" for d in read)
    assert skipped == read


class _Overriding(OnnxEmbedder):
    def embed(self, texts):
        return np.zeros((len(list(texts)), self.dim), dtype=np.float32)


def test_only_the_onnx_embedders_own_checked_rows_are_taken_unchecked(tmp_path):
    assert validates_own_output(default_embedder())
    assert not validates_own_output(default_embedder(normalize=False))
    assert not validates_own_output(CachedEmbedder(default_embedder()))
    zeros = _Overriding()
    assert not validates_own_output(zeros)
    with Memory(tmp_path / "m.db", embedder=zeros) as m, pytest.raises(EmbedderError, match="zero norm"):
        m.add("a zero vector is still refused", user_id="u")
    with Memory(tmp_path / "n.db", embedder=default_embedder(normalize=False)) as m:
        m.add("rows the embedder left unscaled are scaled by the memory", user_id="u")
        (item,) = m.get_all(user_id="u")
        vector = m.embed([item.text])[0]
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
