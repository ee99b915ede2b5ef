"""Memory.add_many: batched embedding and chunked commits, with every item decided
exactly as its own add() call decides it (checked on the LoCoMo dev turns, each
path with its own embedding calls: add() one text per call, add_many its
batches on parallel workers)."""

from __future__ import annotations

import math

import pytest

from memsieve import ConfigError, GateConfig, InvalidInputError, InvalidTextError, Memory
from memsieve.embedding import CachedEmbedder, OnnxEmbedder
from memsieve.write.ingest import conversations
from memsieve.text.passages import part_spans
from memsieve.write import path as path_module

from conftest import shared_data


def _key(d):
    # Everything a decision says except the new ids and the clock.
    same = lambda x: None if isinstance(x, float) and math.isnan(x) else x  # noqa: E731
    return (d.event, d.layer, d.text, same(d.novelty), same(d.tau), same(d.nearest_cos), same(d.information),
            tuple(d.new_terms), d.link_kind, d.reason)


@pytest.fixture(scope="module")
def turns():
    convs = conversations(shared_data("data/locomo/locomo_dev.json", what="the LoCoMo dev split"))
    cached = CachedEmbedder(OnnxEmbedder(workers=1))
    for _, ts in convs:  # one text per call, as add() embeds: what the sequential run reads back
        for t in ts:
            cached.embed([t.text])
    return convs, cached


@pytest.mark.slow
def test_add_many_decides_every_locomo_turn_as_sequential_add_does(tmp_path, turns, monkeypatch):
    convs, cached = turns
    # A fold's swapped words are read back by the embedder (memsieve.write.swaps): those variants
    # are embedded too, by both runs, and counted below.
    variants: list[str] = []
    read_back = path_module.swapped_value

    def recorded(text, memory, *, embed, **options):
        return read_back(text, memory, embed=lambda texts: variants.extend(texts) or embed(texts), **options)

    monkeypatch.setattr(path_module, "swapped_value", recorded)
    # The bulk run embeds for itself (its cache starts empty, and is there only
    # so that both runs' vectors pass the same layers): its batches run side by
    # side on two workers, and its decisions must still be add()'s.
    batched = CachedEmbedder(OnnxEmbedder(workers=2))
    one, bulk = Memory(tmp_path / "one.db", embedder=cached), Memory(tmp_path / "bulk.db", embedder=batched)
    seen = []
    for cid, ts in convs:
        sequential = [one.add(t.text, user_id=cid, source=t.source, valid_from=t.valid_from) for t in ts]
        together = bulk.add_many([{"content": t.text, "source": t.source, "valid_from": t.valid_from} for t in ts],
                                 user_id=cid, batch_size=48, progress=seen.append)
        assert [[_key(d) for d in ds] for ds in together] == [[_key(d) for d in ds] for ds in sequential], cid
        assert sorted(m.text for m in bulk.get_all(user_id=cid, limit=10_000)) == \
            sorted(m.text for m in one.get_all(user_id=cid, limit=10_000))
    total = sum(len(ts) for _, ts in convs)
    assert total > 3000 and seen[-1] == len(convs[-1][1]) and max(seen) <= max(len(ts) for _, ts in convs)
    # Each distinct text and each distinct part of one (a turn's sentence keys) is embedded once;
    # a part that repeats (the same sentence in two turns) is a cache hit.
    asked = [t.text for _, ts in convs for t in ts]
    asked += [text[a:b] for text in asked for _, a, b in part_spans(text)]
    assert variants, "no fold of LoCoMo's turns read a swap back: the count below would not see them"
    distinct = set(asked) | set(variants)
    assert batched.misses == len(distinct) and batched.hits <= len(asked) + len(variants) // 2 - len(distinct)
    one.close()
    bulk.close()


def test_a_bad_item_is_named_and_nothing_is_written(tmp_path, embedder):
    m = Memory(tmp_path / "b.db", embedder=embedder, gate=GateConfig(profile="none"))
    with pytest.raises(InvalidTextError, match="item 2"):
        m.add_many(["one fact", {"content": "two"}, {"content": ""}], user_id="u")
    with pytest.raises(InvalidInputError, match=r"item 1 has unknown key\(s\) \['when'\]"):
        m.add_many(["one fact", {"content": "two", "when": "today"}], user_id="u")
    with pytest.raises(InvalidTextError, match="list of texts"):
        m.add_many("just a string", user_id="u")
    with pytest.raises(ConfigError, match="batch_size"):
        m.add_many(["x"], user_id="u", batch_size=0)
    assert m.get_all(user_id="u") == []
    m.close()


def test_items_carry_their_own_dates_sources_roles_and_metadata(tmp_path, embedder):
    m = Memory(tmp_path / "c.db", embedder=embedder, gate=GateConfig(profile="none"))
    (a,), (b,) = m.add_many([{"content": "I adopted a ferret.", "valid_from": "2024-02-03", "source": "s1",
                              "role": "user", "metadata": {"k": 1}},
                             "My ferret is called Noodle."], user_id="u", metadata={"k": 0, "batch": True})
    first, second = m.get(a.memory_id), m.get(b.memory_id)
    assert first.valid_from.startswith("2024-02-03") and first.sources == ["s1"]
    assert first.metadata == {"k": 1, "batch": True, "role": "user"} and second.metadata == {"k": 0, "batch": True}
    m.close()


@pytest.mark.slow
def test_cli_ingest_goes_through_add_many_with_the_same_decisions_at_any_batch_size(tmp_path, capsys, turns):
    import json

    from memsieve.cli import main

    convs, _ = turns
    cid, ts = convs[0]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps({"id": cid, "messages": [{"role": "user", "content": t.text}
                                                                 for t in ts[:120]]}) for _ in (0,)))
    outs = []
    for size in ("1", "7", "64"):
        assert main(["ingest", str(path), "--db", str(tmp_path / f"{size}.db"), "--json", "--batch-size", size]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["turns"] == 120 and outs[0]["events"]["NOOP"] > 0
    assert outs[0] == outs[1] == outs[2]
    assert main(["ingest", str(path), "--db", str(tmp_path / "x.db"), "--batch-size", "0"]) == 2
    assert "--batch-size must be at least 1" in capsys.readouterr().err


def test_every_public_memory_method_has_its_coroutine(tmp_path, embedder):
    import asyncio
    import inspect

    from memsieve import AsyncMemory

    public = {n for n, f in inspect.getmembers(Memory, inspect.isfunction) if not n.startswith("_")} - {"close"}
    assert public <= {n for n in dir(AsyncMemory) if inspect.iscoroutinefunction(getattr(AsyncMemory, n))}

    async def go():
        am = AsyncMemory(str(tmp_path / "a.db"), embedder=embedder, gate=GateConfig(profile="none"))
        try:
            return await am.add_many(["I keep bees.", "I sing bass."], user_id="u")
        finally:
            await am.close()

    assert [d[0].event for d in asyncio.run(go())] == ["ADD", "ADD"]
