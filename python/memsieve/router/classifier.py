"""Query classifiers: which category is this question? No LLM required.

:class:`NearestCentroidClassifier` averages the embeddings of labelled
calibration questions per category and assigns a new question to the centroid
it is most similar to (cosine). It reports the margin to the runner-up, so a
router can tell a clear call from a coin toss and fall back on the latter.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memsieve.errors import ConfigError, DtypeError, InvalidVectorError, ShapeError, StateError
from memsieve.router.calibration import check_saved

_FORMAT = "memsieve-nearest-centroid"
_VERSION = 1
# A class whose unit rows cancel out (mean norm below this) has no direction.
_MIN_CENTROID_NORM = 1e-6


@dataclass(frozen=True)
class Prediction:
    """A classifier's answer for one query.

    Attributes:
        category: the most likely category.
        score: its similarity (cosine to the centroid for the nearest-centroid
            classifier).
        runner_up: the second most likely category.
        margin: ``score`` minus the runner-up's score, >= 0.
        confident: whether ``margin`` reached the classifier's ``min_margin``.
    """

    category: str
    score: float
    runner_up: str
    margin: float
    confident: bool


@runtime_checkable
class QueryClassifier(Protocol):
    """What the router needs from a classifier.

    An LLM classifier fits too: it can ignore ``vector``, ask its model for a
    category, and report ``confident=False`` when the reply does not name one.
    """

    @property
    def categories(self) -> tuple[str, ...]: ...

    def classify(self, query: str, vector: np.ndarray) -> Prediction:
        """Classify one query given its text and its (d,) float32 unit embedding."""
        ...


def _check_matrix(x: Any, *, what: str, dim: int | None = None, normalize: bool = True) -> np.ndarray:
    shape = f"(n, {dim})" if dim else "(n, d)"
    if not isinstance(x, np.ndarray):
        raise DtypeError(f"expected {what} as a float32 numpy array {shape}, got {type(x).__name__}; "
                         "use np.asarray(x, np.float32)")
    if x.dtype != np.float32:
        raise DtypeError(f"expected float32 {what} {shape}, got {x.dtype} {x.shape}; "
                         "use np.ascontiguousarray(x, np.float32)")
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0 or (dim is not None and x.shape[1] != dim):
        raise ShapeError(f"expected {what} of shape {shape} with n >= 1, got {x.shape}; "
                         + ("embed with the model the classifier was fitted on" if dim else "stack one row per text"))
    if not np.isfinite(x).all():
        bad = np.flatnonzero(~np.isfinite(x).all(axis=1))[:5].tolist()
        raise InvalidVectorError(f"{what} rows {bad} hold NaN or infinity; fix the embedder")
    norms = np.linalg.norm(x.astype(np.float64), axis=1)
    if (norms < 1e-12).any():
        bad = np.flatnonzero(norms < 1e-12)[:5].tolist()
        raise InvalidVectorError(f"{what} rows {bad} have zero norm and no direction; drop them")
    return (x / norms[:, None]).astype(np.float32) if normalize else x


class NearestCentroidClassifier:
    """Assigns a query embedding to the category whose centroid it is closest to.

    Args:
        min_margin: a prediction whose cosine margin over the runner-up is
            below this is marked ``confident=False`` (the router then uses its
            default route). 0 marks every prediction confident.

    Example:
        >>> clf = NearestCentroidClassifier(min_margin=0.02).fit(vectors, labels)
        >>> clf.predict(vector).category
        'temporal'
    """

    def __init__(self, *, min_margin: float = 0.0) -> None:
        if isinstance(min_margin, bool) or not isinstance(min_margin, (int, float)) \
                or not math.isfinite(min_margin) or not 0.0 <= min_margin <= 2.0:
            raise ConfigError(f"min_margin must be a number in [0, 2] (a cosine gap), got {min_margin!r}; "
                              "0.02 is a mild floor")
        self.min_margin = float(min_margin)
        self._categories: tuple[str, ...] = ()
        self._centroids: np.ndarray | None = None
        self._counts: tuple[int, ...] = ()

    # ---- fitting ---------------------------------------------------------------

    def fit(self, embeddings: np.ndarray, labels: Sequence[str]) -> "NearestCentroidClassifier":
        """Compute one unit centroid per category.

        Args:
            embeddings: (n, d) float32, one row per labelled question (rows are
                normalized here, so any non-zero scale works).
            labels: n category names.

        Returns:
            self.

        Raises:
            DtypeError, ShapeError, InvalidVectorError: bad embeddings.
            ConfigError: bad labels, fewer than two categories, or a category
                whose rows cancel out.
        """
        x = _check_matrix(embeddings, what="embeddings")
        if isinstance(labels, str) or not isinstance(labels, Sequence):
            raise ConfigError(f"labels must be a sequence of category names, got {type(labels).__name__}")
        if len(labels) != x.shape[0]:
            raise ShapeError(f"got {x.shape[0]} embeddings but {len(labels)} labels; pass one label per row")
        for i, lab in enumerate(labels):
            if not isinstance(lab, str) or not lab:
                raise ConfigError(f"label {i} must be a non-empty string, got {lab!r}")
        cats = tuple(sorted(set(labels)))
        if len(cats) < 2:
            raise ConfigError(f"need at least two categories to classify, got {list(cats)}; "
                              "label questions of several categories")
        index = {c: i for i, c in enumerate(cats)}
        which = np.fromiter((index[lab] for lab in labels), dtype=np.int64, count=len(labels))
        sums = np.zeros((len(cats), x.shape[1]), dtype=np.float64)
        np.add.at(sums, which, x.astype(np.float64))
        counts = np.bincount(which, minlength=len(cats))
        self._set(cats, _unit_centroids(sums, counts, cats), tuple(int(c) for c in counts))
        return self

    def _set(self, cats: tuple[str, ...], centroids: np.ndarray, counts: tuple[int, ...]) -> None:
        self._categories = cats
        self._centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        self._centroids.setflags(write=False)
        self._counts = counts

    # ---- reading ---------------------------------------------------------------

    @property
    def categories(self) -> tuple[str, ...]:
        return self._categories

    @property
    def centroids(self) -> np.ndarray:
        """(k, d) float32 unit centroids, one per category in ``categories`` order (read-only)."""
        return self._fitted()

    @property
    def counts(self) -> tuple[int, ...]:
        """How many labelled rows each centroid was averaged from."""
        return self._counts

    @property
    def dim(self) -> int:
        return int(self._fitted().shape[1])

    def _fitted(self) -> np.ndarray:
        if self._centroids is None:
            raise StateError("the classifier is not fitted; call fit(embeddings, labels) or from_dict() first")
        return self._centroids

    def predict_many(self, vectors: np.ndarray) -> list[Prediction]:
        """Classify (n, d) float32 query embeddings; one Prediction per row."""
        cents = self._fitted()
        x = _check_matrix(vectors, what="query embeddings", dim=cents.shape[1])
        sims = x @ cents.T
        order = np.argsort(-sims, axis=1, kind="stable")
        out = []
        for row, idx in zip(sims, order):
            first, second = int(idx[0]), int(idx[1])
            margin = float(row[first] - row[second])
            out.append(Prediction(self._categories[first], float(row[first]), self._categories[second],
                                  margin, margin >= self.min_margin))
        return out

    def predict(self, vector: np.ndarray) -> Prediction:
        """Classify one (d,) float32 query embedding."""
        if isinstance(vector, np.ndarray) and vector.ndim == 1:
            vector = vector[None, :]
        elif isinstance(vector, np.ndarray):
            raise ShapeError(f"expected one (d,) query embedding, got shape {vector.shape}; "
                             "use predict_many for a batch")
        return self.predict_many(vector)[0]

    def classify(self, query: str, vector: np.ndarray) -> Prediction:
        """The QueryClassifier protocol: the text is not needed, only its embedding."""
        return self.predict(vector)

    # ---- saving ----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; float32 values survive the round trip exactly."""
        cents = self._fitted()
        return {"format": _FORMAT, "version": _VERSION, "min_margin": self.min_margin,
                "categories": list(self._categories), "counts": list(self._counts),
                "centroids": [[float(v) for v in row] for row in cents]}

    @classmethod
    def from_dict(cls, raw: Any) -> "NearestCentroidClassifier":
        raw = check_saved(raw, fmt=_FORMAT, version=_VERSION, what="nearest-centroid classifier",
                          load_hint="load what to_dict() wrote", rebuild_hint="fit it again")
        cats = raw.get("categories")
        try:
            cents = np.asarray(raw.get("centroids"), dtype=np.float32)
            counts = tuple(int(c) for c in raw.get("counts", []))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"classifier centroids or counts are malformed ({exc}); fit it again") from None
        if not isinstance(cats, list) or len(cats) < 2 or len(set(cats)) != len(cats) \
                or not all(isinstance(c, str) and c for c in cats):
            raise ConfigError(f"classifier categories must be >= 2 distinct names, got {cats!r}")
        if cents.ndim != 2 or cents.shape[0] != len(cats) or len(counts) != len(cats):
            raise ConfigError(f"classifier has {len(cats)} categories but centroids of shape {cents.shape} and "
                              f"{len(counts)} counts; fit it again")
        clf = cls(min_margin=raw.get("min_margin", 0.0))
        clf._set(tuple(cats), _check_matrix(cents, what="centroids", normalize=False), counts)
        return clf


def _unit_centroids(sums: np.ndarray, counts: np.ndarray, cats: tuple[str, ...]) -> np.ndarray:
    norms = np.linalg.norm(sums, axis=1)
    for cat, norm, n in zip(cats, norms, counts):
        if norm / n < _MIN_CENTROID_NORM:
            raise ConfigError(f"the embeddings of category {cat!r} cancel out (mean norm {norm / n:.2g}); "
                              "give it more, or more alike, examples")
    out: np.ndarray = sums / norms[:, None]
    return out
