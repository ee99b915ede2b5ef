"""The fused graph of the embedder: same vectors as the export, made once, cached, refused safely."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memsieve.embedding.fused_graph as fusion
from memsieve.embedding import OnnxEmbedder, default_embedder, packaged_model_path

onnx = pytest.importorskip("onnx", reason="onnx is a dependency of memsieve; install it")

TEXTS = [
    "",
    "hi",
    "I moved to Lisbon in May and started a job at the harbour office.",
    "naïve café ☕ — 東京 in 2019, 3.5 km",
    "Long answers run past the window. " * 60,  # truncated at 256 tokens
    "I've tried four different Korean restaurants so far.",
]


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    """The packaged model under a path of its own (a session of its own in the process)."""
    target = tmp_path / "model" / "model.onnx"
    target.parent.mkdir()
    shutil.copyfile(packaged_model_path(), target)
    return target


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMSIEVE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


def test_default_embedder_runs_the_fused_graph_with_the_exports_vectors() -> None:
    fused, plain = default_embedder(), default_embedder(fuse=False)
    assert fused.fused and not plain.fused
    a, b = fused.embed(TEXTS), plain.embed(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384)
    assert float(np.max(np.abs(a - b))) < 1e-5
    # A text alone and inside a padded batch read the same through the fused attention's mask.
    alone = np.vstack([fused.embed([t]) for t in TEXTS])
    assert float(np.max(np.abs(alone - a))) < 1e-5


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=6))
def test_fused_and_exported_graphs_agree_on_any_text(texts: list[str]) -> None:
    a = default_embedder().embed(texts)
    b = default_embedder(fuse=False).embed(texts)
    assert float(np.max(np.abs(a - b))) < 1e-5


def test_the_fused_model_is_cached_and_read_back(model_copy: Path, cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    source = fusion.fused_source(model_copy)
    assert isinstance(source, str) and Path(source).parent == cache and Path(source).is_file()
    assert not list(cache.glob("*.part"))

    def fail(_: Path) -> bytes:
        raise AssertionError("the cached model was made again")

    monkeypatch.setattr(fusion, "fused_model", fail)
    assert fusion.fused_source(model_copy) == source
    embedder = OnnxEmbedder(model_path=model_copy)
    assert embedder.fused
    ref = default_embedder(fuse=False).embed(TEXTS)
    assert float(np.max(np.abs(embedder.embed(TEXTS) - ref))) < 1e-5


def test_one_entry_per_model_wherever_it_lies(model_copy: Path, cache: Path, tmp_path: Path) -> None:
    first = fusion.fused_source(model_copy)
    elsewhere = tmp_path / "another-folder" / "renamed.onnx"
    elsewhere.parent.mkdir()
    shutil.copyfile(model_copy, elsewhere)
    assert fusion.fused_source(elsewhere) == first
    assert len(list(cache.glob("*.onnx"))) == 1


def test_an_older_entry_of_the_same_model_is_removed(model_copy: Path, cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    old = fusion.fused_source(model_copy)
    monkeypatch.setattr(fusion, "FUSION_VERSION", fusion.FUSION_VERSION + 1)
    new = fusion.fused_source(model_copy)
    assert isinstance(old, str) and isinstance(new, str) and old != new
    assert [p.name for p in cache.iterdir()] == [Path(new).name]


def test_a_model_file_is_hashed_once_a_process_while_it_stays_the_same(
        model_copy: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Path] = []
    real_open = open

    def counting_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(file) == model_copy and args[:1] == ("rb",):
            reads.append(Path(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    first = fusion.fused_source(model_copy)
    hashed = len(reads)
    assert fusion.fused_source(model_copy) == first and len(reads) == hashed  # the main and the worker session
    model = onnx.load(str(model_copy))
    model.doc_string = "rewritten in place"
    onnx.save(model, str(model_copy))
    again = fusion.fused_source(model_copy)
    assert len(reads) > hashed and isinstance(again, str) and again != first


def test_a_changed_model_file_is_another_entry(model_copy: Path, cache: Path) -> None:
    first = fusion.fused_source(model_copy)
    other = model_copy.parent / "other.onnx"
    model = onnx.load(str(model_copy))
    model.doc_string = "another model"  # other bytes, the same graph
    onnx.save(model, str(other))
    second = fusion.fused_source(other)
    assert isinstance(first, str) and isinstance(second, str) and first != second


def test_a_damaged_cached_model_loads_the_export_and_is_removed(model_copy: Path, cache: Path) -> None:
    source = fusion.fused_source(model_copy)
    assert isinstance(source, str)
    Path(source).write_bytes(b"not an onnx model")
    embedder = OnnxEmbedder(model_path=model_copy)
    assert not embedder.fused
    assert not Path(source).exists()
    ref = default_embedder(fuse=False).embed(TEXTS)
    assert float(np.max(np.abs(embedder.embed(TEXTS) - ref))) < 1e-6


def test_a_fused_graph_that_reads_otherwise_is_refused(model_copy: Path, cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    good = fusion.fused_model(model_copy)
    assert good is not None
    model = onnx.load_from_string(good)
    from onnx import numpy_helper

    for i, tensor in enumerate(model.graph.initializer):
        if tensor.name == "memsieve_fused_qkv_b0":  # the first layer's biases, doubled
            value = numpy_helper.to_array(tensor) * 2
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(value, tensor.name))
    bad = model.SerializeToString()
    monkeypatch.setattr(fusion, "fused_model", lambda _: bad)
    assert fusion.fused_source(model_copy) is None
    assert [p.suffix for p in cache.iterdir()] == [".refused"]
    embedder = OnnxEmbedder(model_path=model_copy)
    assert not embedder.fused
    ref = default_embedder(fuse=False).embed(TEXTS)
    assert float(np.max(np.abs(embedder.embed(TEXTS) - ref))) < 1e-6


def test_a_graph_without_the_pattern_is_run_as_exported(tmp_path: Path, cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from onnx import TensorProto, helper

    # A (batch, seq) -> (batch, seq, 1) "model" with no attention at all.
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"])
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", 1])
    nodes = [helper.make_node("Cast", ["input_ids"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["f", "axis"], ["last_hidden_state"])]
    axis = helper.make_tensor("axis", TensorProto.INT64, [1], [2])
    graph = helper.make_graph(nodes, "plain", [ids], [out], initializer=[axis])
    path = tmp_path / "plain.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    assert fusion.fused_model(path) is None
    assert fusion.fused_source(path) is None
    calls = []
    monkeypatch.setattr(fusion, "fused_model", lambda p: calls.append(p))
    assert fusion.fused_source(path) is None
    assert calls == []  # the refusal is remembered on disk


def test_an_unwritable_cache_still_fuses(model_copy: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MEMSIEVE_CACHE_DIR", str(blocker))
    source = fusion.fused_source(model_copy)
    assert isinstance(source, bytes)
    embedder = OnnxEmbedder(model_path=model_copy)
    assert embedder.fused


def test_without_onnx_the_export_runs(model_copy: Path, cache: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    assert fusion.fused_model(model_copy) is None
    embedder = OnnxEmbedder(model_path=model_copy)
    assert not embedder.fused
    assert embedder.embed(["still embeds"]).shape == (1, 384)


def test_fuse_off_and_other_devices_never_read_the_cache(model_copy: Path, cache: Path) -> None:
    embedder = OnnxEmbedder(model_path=model_copy, fuse=False)
    embedder.load()
    assert not embedder.fused
    assert not cache.exists()


def test_a_probe_that_cannot_run_is_not_remembered(model_copy: Path, cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A fused graph ONNX Runtime cannot load: the probe fails, which says nothing for good.
    monkeypatch.setattr(fusion, "fused_model", lambda _: b"not a model")
    assert fusion.fused_source(model_copy) is None
    assert not cache.exists() or not list(cache.iterdir())
    monkeypatch.undo()
    monkeypatch.setenv("MEMSIEVE_CACHE_DIR", str(cache.parent))
    assert isinstance(fusion.fused_source(model_copy), str)  # the next try fuses
