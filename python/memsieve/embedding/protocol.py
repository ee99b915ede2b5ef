"""The embedder protocol and the validation every embedder's output goes through.

memsieve accepts any object with ``dim``, ``name`` and ``embed``; its output is
never trusted as is. :func:`validate_embeddings` turns it into the one form the
Rust core reads (C-contiguous float32, unit rows) or says exactly what is wrong.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from memsieve.errors import EmbedderError, InvalidTextError

# Rows whose norm is below this carry no direction; normalizing them would
# amplify rounding noise into an arbitrary unit vector.
_MIN_NORM = 1e-12
# How many offending row indices an error message lists before eliding.
_SHOWN_ROWS = 5


@runtime_checkable
class Embedder(Protocol):
    """What memsieve needs from an embedding model.

    Attributes:
        dim: Length of every vector ``embed`` returns.
        name: Stable identifier of the model (and of anything that changes its
            vectors); stored next to vectors so a model swap can be detected.
    """

    # Read-only properties, so implementations may use plain attributes or properties.
    @property
    def dim(self) -> int: ...

    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts.

        Args:
            texts: n strings.

        Returns:
            float32 array of shape (n, dim), one row per text, in input order.
        """
        ...


def check_texts(texts: Any) -> list[str]:
    """Return ``texts`` as a list, raising InvalidTextError unless it holds only strings.

    A bare ``str`` is refused: iterating it would embed one character per row.
    """
    if isinstance(texts, (str, bytes)):
        raise InvalidTextError(
            f"expected a sequence of strings, got a single {type(texts).__name__} "
            f"{_preview(texts)}; wrap it in a list: embed([text])"
        )
    try:
        items = list(texts)
    except TypeError:
        raise InvalidTextError(
            f"expected a sequence of strings, got {type(texts).__name__}; "
            "pass a list of str"
        ) from None
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidTextError(
                f"expected str at position {i}, got {type(item).__name__} {_preview(item)}; "
                "convert every text to str before embedding"
            )
    return items


def validate_embeddings(
    arr: Any, n_texts: int, dim: int, *, normalize: bool = True
) -> np.ndarray:
    """Check an embedder's output and return it as unit-norm float32 rows.

    Args:
        arr: What the embedder returned; a numpy array, or anything
            ``np.asarray`` turns into a real floating array (a list of lists,
            a CPU tensor).
        n_texts: How many texts were embedded; the expected row count.
        dim: The embedder's declared dimension; the expected column count.
        normalize: Scale rows to unit L2 norm (the default, and what the
            novelty gate assumes). ``False`` only checks and converts.

    Returns:
        C-contiguous float32 array of shape (n_texts, dim); a new array, never
        a view of ``arr``.

    Raises:
        EmbedderError: ``arr`` is not a real floating array, is not 2-D, has the
            wrong number of rows or columns, holds NaN or infinity (also after
            the cast to float32), or has a row of (near) zero norm.
    """
    if isinstance(n_texts, bool) or not isinstance(n_texts, (int, np.integer)) or n_texts < 0:
        raise EmbedderError(f"n_texts must be a non-negative int, got {n_texts!r}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise EmbedderError(f"dim must be a positive int, got {dim!r}")
    x = _as_float_array(arr)
    if n_texts == 0 and x.size == 0:
        # An empty batch has no rows to inspect; (0,) and (0, k) both mean "nothing".
        return np.zeros((0, dim), dtype=np.float32)
    if x.ndim != 2:
        fix = "; for a single text return x[None, :]" if x.ndim == 1 else ""
        raise EmbedderError(
            f"expected a 2-D (n, dim) = ({n_texts}, {dim}) array, got {x.ndim}-D shape "
            f"{x.shape}; return one row per text{fix}"
        )
    if x.shape[1] != dim:
        raise EmbedderError(
            f"expected {dim} columns (the embedder's dim), got shape {x.shape}; "
            "set the embedder's dim to its model's output size or use a model that "
            f"outputs {dim}-d vectors"
        )
    if x.shape[0] != n_texts:
        raise EmbedderError(
            f"expected {n_texts} rows (one per text), got {x.shape[0]} (shape {x.shape}); "
            "the embedder must return exactly one row per input text, in input order"
        )
    # Always a copy: normalizing in place must not touch the caller's array.
    if x.dtype == np.float32:
        out = np.array(x, order="C", copy=True)
    else:
        with np.errstate(over="ignore"):  # overflow is reported below, as infinity
            out = np.array(x, dtype=np.float32, order="C", copy=True)
    # float64 accumulation: squaring large float32 values must not overflow.
    norms = np.sqrt(np.einsum("ij,ij->i", out, out, dtype=np.float64))
    # A NaN or infinite entry makes its row's norm NaN or infinite, so checking
    # the n norms covers every entry: the full checks run only on a bad row.
    if not (np.isfinite(norms).all() and (norms >= _MIN_NORM).all()):
        _raise_for_bad_rows(x, out, norms, n_texts)
    if normalize:
        if norms.max(initial=0.0) < _FLOAT32_SAFE_NORM:
            out /= norms[:, None].astype(np.float32)
        else:  # a norm past float32's range (entries near 3e38): divide in float64
            out = (out.astype(np.float64) / norms[:, None]).astype(np.float32)
    return out


#: Norms at or above this are divided in float64: cast to float32 they would overflow to infinity.
_FLOAT32_SAFE_NORM = 1e38


def _raise_for_bad_rows(x: np.ndarray, out: np.ndarray, norms: np.ndarray, n_texts: int) -> None:
    """Name the rows of a float32 copy ``out`` of ``x`` that are not finite, else those of zero norm."""
    finite = np.isfinite(out).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        origin = " (after overflowing the float32 range)" if np.isfinite(x).all() else ""
        raise EmbedderError(
            f"embedding rows {_rows(bad)} of {n_texts} contain NaN or infinity{origin}; "
            "fix the embedder (check for empty inputs and overflow) so it returns "
            "finite values"
        )
    bad = np.flatnonzero(norms < _MIN_NORM)
    raise EmbedderError(
        f"embedding rows {_rows(bad)} of {n_texts} have zero norm (< {_MIN_NORM:g}) "
        "and no direction; the embedder must return a non-zero vector for every text"
    )


def _as_float_array(arr: Any) -> np.ndarray:
    if arr is None or isinstance(arr, (str, bytes, dict, set)):
        raise EmbedderError(
            f"expected a float array of embeddings, got {type(arr).__name__}; "
            "return a numpy array of shape (n, dim)"
        )
    if not isinstance(arr, np.ndarray):
        try:
            arr = np.asarray(arr)
        except (TypeError, ValueError) as exc:
            raise EmbedderError(
                f"expected a float array of embeddings, got {type(arr).__name__} that "
                f"numpy cannot convert ({exc}); return a numpy array of shape (n, dim)"
            ) from None
    if arr.dtype.kind != "f":
        raise EmbedderError(
            f"expected a real floating array, got dtype {arr.dtype} shape {arr.shape}; "
            "return floats, e.g. np.asarray(x, dtype=np.float32)"
        )
    return arr


def _rows(indices: np.ndarray) -> str:
    shown = ", ".join(str(int(i)) for i in indices[:_SHOWN_ROWS])
    more = f", ... ({len(indices)} in all)" if len(indices) > _SHOWN_ROWS else ""
    return f"[{shown}{more}]"


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
