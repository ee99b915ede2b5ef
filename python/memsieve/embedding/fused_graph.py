"""A BERT export's attention and GELU rewritten as ONNX Runtime's fused CPU kernels.

The packaged MiniLM is a torch export whose attention is some thirty small operators a layer
(reshapes, transposes, a mask built from the attention mask, a softmax and a NaN guard) and
whose GELU is five; ONNX Runtime's own graph optimizer does not recognise either pattern in this
export, so every call runs about 400 operators, most of them on tensors of a few kilobytes. The
same weights run through ``com.microsoft.Attention`` (the three projections as one matrix
product) and ``com.microsoft.Gelu`` give the same vectors (to about 1e-7) in fewer calls:
benches/RESULTS.md, "Attention and GELU fused", has the times.

Nothing is trusted to the pattern alone: :func:`fused_model` returns the rewritten graph only when
every attention block and GELU of the export matched, and :func:`fused_source` then compares
every output of both graphs on a padded probe batch before the rewritten one is used
(``OnnxEmbedder`` loads the export as it is when either check fails). Needs the ``onnx`` package to read and write the graph.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from memsieve.resources import cache_root

#: The GELU's constants, as the export writes them: x / sqrt(2), + 1, * 0.5.
_GELU_CONSTANTS = (float(np.sqrt(2.0)), 1.0, 0.5)
#: Ops a projection's output passes through on its way to the attention scores.
_PASSING = ("Transpose", "Reshape", "Mul", "Div")
#: Model files already hashed in this process: (path, device, inode, size, mtime) -> digest.
_DIGESTS: dict[tuple[Any, ...], str] = {}


#: Bump when the rewrite changes, so that models fused by an older one are made again.
FUSION_VERSION = 1
#: Largest difference, in any coordinate of a token's state, between the two graphs on the probe.
#: The fused kernels add in another order: about 2e-7 on MiniLM's states.
PROBE_TOLERANCE = 1e-4


def cache_dir() -> Path:
    """Where fused models are kept: ``models`` in memsieve's cache folder
    (:func:`memsieve.resources.cache_root`; ``~/.cache/memsieve`` by default)."""
    return cache_root() / "models"


def fused_source(model_file: Path) -> str | bytes | None:
    """What ONNX Runtime should load for ``model_file``: its fused graph, or None to load it as is.

    The fused graph is made once and checked against the export on a padded probe batch
    (:data:`PROBE_TOLERANCE`), then kept in :func:`cache_dir` under a name made of the file's
    content hash, onnxruntime's version and :data:`FUSION_VERSION` (an entry of an older version
    of either is removed); a later process loads that file. A
    model that does not fuse, or whose fused graph reads otherwise, is marked there and loaded
    as exported; one whose probe could not run at all is loaded as exported and tried again by
    the next process. Where the cache cannot be written, the checked graph is returned as bytes.

    Args:
        model_file: the ONNX export on disk.

    Returns:
        A path (str) of the cached fused model, its bytes, or None.
    """
    import onnxruntime  # type: ignore[import-untyped]

    content = _content_digest(model_file)
    version = hashlib.sha256(f"{onnxruntime.__version__}|{FUSION_VERSION}".encode()).hexdigest()[:8]
    folder = cache_dir()
    target = folder / f"{content}-{version}.onnx"
    refused = folder / f"{content}-{version}.refused"
    try:
        if target.is_file():
            return str(target)
        if refused.is_file():
            return None
    except OSError:  # a cache that cannot be read: the graph is made in memory below
        pass
    data = fused_model(model_file)
    if data is not None:
        alike = _reads_alike(model_file, data)
        if alike is None:  # the probe could not run (memory, a session error): ask again next time
            return None
        if not alike:
            data = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomically(refused if data is None else target, data or b"")
        # What an older onnxruntime or rewrite made of the same model is not read again.
        for stale in folder.glob(f"{content}-*"):
            if stale not in (target, refused) and stale.suffix in (".onnx", ".refused"):
                stale.unlink(missing_ok=True)
    except OSError:
        return data
    return None if data is None else str(target)


def _content_digest(model_file: Path) -> str:
    """The model file's sha256 (24 hex digits): one cache entry per model, wherever it lies.

    A copy of the model in a temporary folder, or a package resource extracted for one process,
    finds the entry its first copy made instead of adding another; reading the packaged model
    for it takes about 20 ms, once a process for a file whose device, inode, size and
    modification time stay the same (a file rewritten with all four kept is not read again).
    """
    # The main and the worker session of one embedder each ask.
    stat = os.stat(model_file)
    key = (os.fspath(model_file), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    known = _DIGESTS.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with open(model_file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    _DIGESTS[key] = digest.hexdigest()[:24]
    return _DIGESTS[key]


def _reads_alike(model_file: Path, data: bytes) -> bool | None:
    """Whether both graphs give the same outputs on a two-text batch, the second one padded;
    None when the probe could not be run at all."""
    import onnxruntime as ort  # type: ignore[import-untyped]

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    try:
        sessions = [ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])
                    for source in (str(model_file), data)]
        ids = np.arange(100, 124, dtype=np.int64).reshape(2, 12)
        mask = np.ones_like(ids)
        mask[1, 7:] = 0
        values = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        feeds = [{a.name: values[a.name].astype(np.int32 if "int32" in a.type else np.int64)
                  for a in s.get_inputs()} for s in sessions]
        plain_outputs, fused_outputs = [s.run(None, f) for s, f in zip(sessions, feeds)]
    except Exception:  # onnxruntime raises its own exception types: not fused, not refused for good
        return None
    if len(plain_outputs) != len(fused_outputs):
        return False
    valid = mask.astype(bool)
    for plain, fused in zip(plain_outputs, fused_outputs):
        if plain.shape != fused.shape or plain.ndim not in (2, 3):
            return False
        # Token states of padding are masked out of every pooling; a sentence output is whole.
        gap = np.abs(plain[valid] - fused[valid]) if plain.ndim == 3 else np.abs(plain - fused)
        if not np.isfinite(gap).all() or float(np.max(gap)) > PROBE_TOLERANCE:
            return False
    return True


def _write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder, so a reader never sees half a model."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class _NoMatch(Exception):
    """The graph is not the pattern this module rewrites (it is then run as exported)."""


def fused_model(model_file: Path) -> bytes | None:
    """The model at ``model_file`` with attention and GELU fused, serialized; None if not fusable.

    Args:
        model_file: an ONNX BERT-style export (token inputs, ``last_hidden_state`` output).

    Returns:
        The rewritten model's bytes, for ``onnxruntime.InferenceSession``; None when ``onnx`` is
        not installed or any part of the graph does not match (nothing partial is returned).
    """
    try:
        import onnx
    except ImportError:
        return None
    try:
        model = onnx.load(str(model_file))
        _Rewrite(model).run()
        return bytes(model.SerializeToString())
    except Exception:  # _NoMatch, or a file onnx cannot read: either way the export runs as is
        return None


class _Rewrite:
    """One pass over a loaded ``onnx.ModelProto``, edited in place."""

    def __init__(self, model: Any) -> None:
        from onnx import numpy_helper

        self._model = model
        self._graph = model.graph
        self._np = numpy_helper
        self._inits = {i.name: i for i in self._graph.initializer}
        self._added: list[Any] = []
        # Outputs whose producers the new nodes replace: named, since protobuf's node objects
        # need not keep their identity between two reads of the graph.
        self._replaced: set[str] = set()

    def run(self) -> None:
        self._fold_dequantized_weights()
        self._index()
        attention = self._fuse_attention()
        gelu = self._fuse_gelu()
        if not attention:
            raise _NoMatch("no attention block")
        self._finish(attention + gelu)

    # --- int8 weights as float32 constants --------------------------------------------------

    def _fold_dequantized_weights(self) -> None:
        """Cast(int8 constant) * constant scale -> one float32 constant, as ORT folds it at load.

        The attention's projections must be constants for their three matrices to be joined.
        """
        from onnx import TensorProto, helper

        producer = {o: n for n in self._graph.node for o in n.output}
        kept = []
        for node in self._graph.node:
            if node.op_type == "Mul" and len(node.input) == 2:
                cast, scale = producer.get(node.input[0]), self._inits.get(node.input[1])
                if cast is None or cast.op_type != "Cast":
                    cast, scale = producer.get(node.input[1]), self._inits.get(node.input[0])
                to = {a.name: helper.get_attribute_value(a) for a in cast.attribute} if cast else {}
                if (cast is not None and cast.op_type == "Cast" and cast.input[0] in self._inits
                        and scale is not None and to.get("to") == TensorProto.FLOAT):
                    q = self._np.to_array(self._inits[cast.input[0]])
                    value = q.astype(np.float32) * self._np.to_array(scale).astype(np.float32)
                    self._add_init(node.output[0], value)
                    continue
            kept.append(node)
        del self._graph.node[:]
        self._graph.node.extend(kept)

    # --- attention ----------------------------------------------------------------------------

    def _index(self) -> None:
        self._producer = {o: n for n in self._graph.node for o in n.output}
        self._consumers: dict[str, list[Any]] = defaultdict(list)
        for node in self._graph.node:
            for name in node.input:
                self._consumers[name].append(node)

    def _fuse_attention(self) -> list[Any]:
        from onnx import TensorProto, helper

        softmaxes = [n for n in self._graph.node if n.op_type == "Softmax"]
        if not softmaxes:
            return []
        mask = "memsieve_fused_mask"
        nodes = [helper.make_node("Cast", ["attention_mask"], [mask], to=TensorProto.INT32)]
        for k, softmax in enumerate(softmaxes):
            masked = self._producer.get(softmax.input[0])
            if masked is None or masked.op_type != "Add":
                raise _NoMatch("softmax input is not scores plus a mask")
            scores = self._producer.get(masked.input[0])
            if scores is None or scores.op_type != "MatMul":
                raise _NoMatch("scores are not a matrix product")
            x_q, w_q, b_q, s_q, head = self._projection(scores.input[0])
            x_k, w_k, b_k, s_k, _ = self._projection(scores.input[1])
            probs = self._nan_guarded(softmax.output[0])
            weighted = self._only_consumer(probs, "MatMul")
            x_v, w_v, b_v, s_v, _ = self._projection(weighted.input[1])
            if not (x_q == x_k == x_v) or s_v != 1.0:
                raise _NoMatch("the three projections do not read one input")
            hidden = w_q.shape[0]
            if head <= 0 or hidden % head or any(w.shape != (hidden, hidden) for w in (w_q, w_k, w_v)):
                raise _NoMatch("projection shapes")
            out = self._only_consumer(self._only_consumer(weighted.output[0], "Transpose").output[0],
                                      "Reshape")
            weights, bias = f"memsieve_fused_qkv_w{k}", f"memsieve_fused_qkv_b{k}"
            self._add_init(weights, np.concatenate([w_q, w_k, w_v], axis=1))
            self._add_init(bias, np.concatenate([b_q, b_k, b_v]))
            self._replaced.add(out.output[0])
            nodes.append(helper.make_node(
                "Attention", [x_q, weights, bias, mask], [out.output[0]], domain="com.microsoft",
                num_heads=hidden // head, scale=float(s_q * s_k)))
        return nodes

    def _projection(self, name: str) -> tuple[str, np.ndarray, np.ndarray, float, int]:
        """Walk back from scores' operand to ``MatMul(x, W) + b``: (x, W, b, scale, head size)."""
        scale, head, node = 1.0, 0, self._producer.get(name)
        while node is not None and node.op_type in _PASSING:
            if node.op_type in ("Mul", "Div"):
                factor = self._scalar(node.input[1])
                scale *= factor if node.op_type == "Mul" else 1.0 / factor
            if node.op_type == "Reshape" and not head:
                head = self._head_size(node.input[1])
            node = self._producer.get(node.input[0])
        if node is None or node.op_type != "Add":
            raise _NoMatch("projection without a bias")
        bias_name = next((i for i in node.input if i in self._inits), None)
        product = self._producer.get(next((i for i in node.input if i not in self._inits), ""))
        if bias_name is None or product is None or product.op_type != "MatMul" \
                or product.input[1] not in self._inits:
            raise _NoMatch("projection is not a constant matrix product")
        weights = self._np.to_array(self._inits[product.input[1]]).astype(np.float32)
        bias = self._np.to_array(self._inits[bias_name]).astype(np.float32)
        return product.input[0], weights, bias, scale, head

    def _head_size(self, shape_name: str) -> int:
        """The last entry of a reshape's target (batch, seq, heads, head size), when constant."""
        if shape_name in self._inits:
            shape = self._np.to_array(self._inits[shape_name]).ravel()
            return int(shape[-1]) if shape.size == 4 else 0
        concat = self._producer.get(shape_name)
        if concat is None or concat.op_type != "Concat" or concat.input[-1] not in self._inits:
            return 0
        last = self._np.to_array(self._inits[concat.input[-1]]).ravel()
        return int(last[0]) if last.size == 1 and len(concat.input) == 4 else 0

    def _nan_guarded(self, probs: str) -> str:
        """``Where(IsNaN(p), 0, p)`` after the softmax (a row with every key masked) -> its output."""
        users = self._consumers[probs]
        if len(users) == 1 and users[0].op_type == "MatMul":
            return probs
        isnan = next((u for u in users if u.op_type == "IsNaN"), None)
        where = next((u for u in users if u.op_type == "Where"), None)
        if len(users) != 2 or isnan is None or where is None or where.input[0] != isnan.output[0] \
                or where.input[2] != probs or self._scalar(where.input[1]) != 0.0:
            raise _NoMatch("softmax output guard")
        return where.output[0]

    # --- GELU -----------------------------------------------------------------------------------

    def _fuse_gelu(self) -> list[Any]:
        from onnx import helper

        nodes = []
        for erf in [n for n in self._graph.node if n.op_type == "Erf"]:
            div = self._producer.get(erf.input[0])
            if div is None or div.op_type != "Div":
                raise _NoMatch("erf input")
            x = div.input[0]
            plus = self._only_consumer(erf.output[0], "Add")
            half = self._only_consumer(plus.output[0], "Mul")
            times = self._only_consumer(half.output[0], "Mul")
            constants = (self._scalar(div.input[1]), self._other_scalar(plus, erf.output[0]),
                         self._other_scalar(half, plus.output[0]))
            if not np.allclose(constants, _GELU_CONSTANTS, rtol=1e-6) or x not in times.input:
                raise _NoMatch("not a GELU")
            self._replaced.add(times.output[0])
            nodes.append(helper.make_node("Gelu", [x], [times.output[0]], domain="com.microsoft"))
        return nodes

    # --- helpers --------------------------------------------------------------------------------

    def _only_consumer(self, name: str, op: str) -> Any:
        users = self._consumers[name]
        if len(users) != 1 or users[0].op_type != op:
            raise _NoMatch(f"{name} is not read by one {op}")
        return users[0]

    def _scalar(self, name: str) -> float:
        if name not in self._inits:
            raise _NoMatch(f"{name} is not a constant")
        value = self._np.to_array(self._inits[name])
        if value.size != 1:
            raise _NoMatch(f"{name} is not a scalar")
        return float(value.ravel()[0])

    def _other_scalar(self, node: Any, name: str) -> float:
        others = [i for i in node.input if i != name]
        if len(others) != 1:
            raise _NoMatch("binary op expected")
        return self._scalar(others[0])

    def _add_init(self, name: str, value: np.ndarray) -> None:
        tensor = self._np.from_array(np.ascontiguousarray(value, dtype=np.float32), name)
        self._inits[name] = tensor
        self._added.append(tensor)

    def _finish(self, new_nodes: list[Any]) -> None:
        """Swap the matched outputs' producers for the new nodes, drop what nothing reads, sort."""
        from onnx import helper

        nodes = [n for n in self._graph.node if not (n.output and n.output[0] in self._replaced)]
        nodes += new_nodes
        needed = {o.name for o in self._graph.output}
        live: list[Any] = []
        for node in reversed(_topological(nodes, self._graph, set(self._inits))):
            if any(o in needed for o in node.output):
                live.append(node)
                needed.update(node.input)
        live.reverse()
        del self._graph.node[:]
        self._graph.node.extend(live)
        self._graph.initializer.extend(self._added)
        initializers = [i for i in self._graph.initializer if i.name in needed]
        del self._graph.initializer[:]
        self._graph.initializer.extend(initializers)
        if not any(o.domain == "com.microsoft" for o in self._model.opset_import):
            self._model.opset_import.append(helper.make_opsetid("com.microsoft", 1))


def _topological(nodes: list[Any], graph: Any, constants: set[str]) -> list[Any]:
    ready = {i.name for i in graph.input} | constants | {""}
    ordered, pending = [], list(nodes)
    while pending:
        waiting = []
        for node in pending:
            if all(i in ready for i in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                waiting.append(node)
        if len(waiting) == len(pending):
            raise _NoMatch("the rewritten graph has a cycle or a missing input")
        pending = waiting
    return ordered
