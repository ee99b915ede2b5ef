"""Type stubs for memsieve's Rust extension (hand-written, checked by mypy.stubtest).

Every array argument must be a float32, C-contiguous numpy array of L2-normalized
rows unless stated otherwise. Bad input raises a subclass of ``MemsieveError``:
DtypeError (not float32 / not an ndarray), ShapeError (rank, width, layout,
emptiness), InvalidVectorError (NaN/inf, zero norm, or a query whose norm is
off 1 by more than 1e-3), ConfigError (kappa <= 0, k < 1, ...), StateError.

Scalars are checked as strictly: a bool, None (unless the parameter is
Optional), a string or a float where a number or an int is expected raises
DtypeError (a TypeError); an int out of range (k >= 2**63, k < 1, a float
parameter given 10**400) raises ConfigError. A size may exceed the data (a k
above the number of rows returns every row) but no output may hold more than
2**28 values (ConfigError), so no argument can make the process abort.

Queries are checked fully (O(d)). Matrix rows are not re-checked for norm on
every call (that would double the cost of a scan); a NaN/inf in a row is caught
by the scan itself and reported with its row index. An (0, d) matrix is an empty
scope: scores are +inf. All numeric work runs with the GIL released.

Scans of a matrix with n * d >= ``_parallel_config()[1]`` elements split its rows
into fixed chunks on a thread pool (``MEMSIEVE_THREADS``, else
``RAYON_NUM_THREADS``, else every core; 1 turns it off). The chunks depend only
on (n, d), so a given input always gives the same result.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Literal, final

import numpy as np
import numpy.typing as npt

# Both aliases also exist at runtime, so they may be imported outside TYPE_CHECKING.
F32 = npt.NDArray[np.float32]

__all__ = [
    "__version__",
    "F32",
    "Route",
    "MemsieveError",
    "InvalidVectorError",
    "ShapeError",
    "DtypeError",
    "ConfigError",
    "StateError",
    "similarities",
    "similarities_batch",
    "kappa_banerjee",
    "kappa_from_spacing",
    "sample_vmf",
    "novelty_sage",
    "novelty_sage_batch",
    "novelty_knn",
    "novelty_knn_batch",
    "novelty_from_topk",
    "novelty_maxcos",
    "novelty_maxcos_batch",
    "random_projection",
    "route",
    "sage_tau_star",
    "sage_ema",
    "sage_density",
    "_read_floor",
    "_parallel_config",
    "_isa",
    "ThresholdState",
    "ScoreResult",
    "ScopeState",
    "Pca",
    "KeywordIndex",
    "tokenize",
    "tokenize_kinds",
    "net_information",
    "pairs_above",
]

__version__: str

class MemsieveError(Exception):
    """Base of every error memsieve raises."""

class InvalidVectorError(MemsieveError, ValueError):
    """A vector holds NaN or inf, or has zero norm."""

class ShapeError(MemsieveError, ValueError):
    """An array has the wrong number of dimensions, the wrong width, is empty where
    rows are required, or is not C-contiguous."""

class DtypeError(MemsieveError, TypeError):
    """An array is not float32."""

class ConfigError(MemsieveError, ValueError):
    """A numeric parameter is out of its valid range (kappa <= 0, k == 0, ...)."""

class StateError(MemsieveError):
    """Serialized state is corrupt or of another version, or an id is unknown/duplicate."""

# --- similarities -------------------------------------------------------------

def similarities(matrix: F32, query: F32) -> F32:
    """Dot products of one (d,) query with every row of an (n, d) matrix -> (n,)."""

def similarities_batch(matrix: F32, queries: F32) -> F32:
    """Dot products of (b, d) queries with (n, d) rows -> (b, n)."""

# --- concentration ------------------------------------------------------------

def kappa_banerjee(matrix: F32, *, clip: tuple[float, float] | None = None) -> float:
    """Banerjee et al.'s approximation R(d - R^2)/(1 - R^2), R = |mean row|.

    ``clip=(1e-3, 50.0)`` reproduces SAGE. An (n, d) matrix with n >= 1.
    Returns +inf-free values: R == 1 gives the clip max or 1e6 when unclipped."""

def kappa_from_spacing(mean_share: float, *, c: float = 4.0, max_kappa: float = 1e4) -> float:
    """memsieve's estimator: kappa = c / (1 - m), capped at ``max_kappa``, with m
    the scope's mean share (1 - its mean novelty; in a dense scope close to the
    typical nearest-neighbour cosine)."""

def sample_vmf(mu: F32, kappa: float, n: int, *, seed: int) -> F32:
    """Draw n unit vectors from vMF(mu, kappa) with Wood's algorithm -> (n, d).

    kappa must lie in [0, 1e12] (above it the rejection loop cannot end in f64);
    any int is a seed, taken modulo 2**64."""

# --- novelty ------------------------------------------------------------------

def novelty_sage(matrix: F32, query: F32, kappa: float) -> float:
    """SAGE: 1 - clip((logsumexp(kappa * s) - ln n) / kappa, -1, 1). Empty -> +inf."""

def novelty_sage_batch(matrix: F32, queries: F32, kappa: float) -> F32:
    """Batch of ``novelty_sage`` -> (b,)."""

def novelty_knn(matrix: F32, query: F32, kappa: float, k: int) -> tuple[float, int, float]:
    """memsieve: 1 - logsumexp(kappa * s_top_k) / kappa over the k nearest rows.

    Returns (novelty, nearest_row, nearest_cos); empty -> (inf, -1, nan).
    A duplicate of a stored row always scores <= 0 whatever n is."""

def novelty_knn_batch(matrix: F32, queries: F32, kappa: float, k: int) -> tuple[F32, npt.NDArray[np.int64], F32]:
    """Batch of ``novelty_knn`` -> (novelty (b,), nearest_row (b,), nearest_cos (b,))."""

def novelty_from_topk(top_sims: F32, kappa: float) -> float:
    """memsieve's score from precomputed top-k cosines (e.g. from an ANN index)."""

def novelty_maxcos(matrix: F32, query: F32) -> tuple[float, int, float]:
    """1 - max cosine. Returns (novelty, nearest_row, nearest_cos); empty -> (inf, -1, nan)."""

def novelty_maxcos_batch(matrix: F32, queries: F32) -> tuple[F32, npt.NDArray[np.int64], F32]:
    """Batch of ``novelty_maxcos``."""

# --- projection ---------------------------------------------------------------

def random_projection(x: F32, out_dim: int, *, seed: int, normalize: bool = True) -> F32:
    """Seeded Gaussian projection (n, d) -> (n, out_dim), rows re-normalized.

    The matrix has N(0, 1/out_dim) entries drawn from ``seed`` (any int). With
    ``normalize=False`` the raw product x @ R.T is returned, so projecting the
    identity gives R.T. Rows of x need not be unit vectors, but must be finite."""

@final
class Pca:
    """Principal components fitted on (n, d) rows (exact eigen-decomposition of the
    covariance, in float64). Components are unit rows, each signed so that its
    largest-magnitude entry is positive. ``dim`` is 0 until ``fit``."""

    @property
    def n_components(self) -> int: ...
    @property
    def dim(self) -> int: ...
    def __new__(cls, n_components: int) -> "Pca": ...
    def fit(self, x: F32) -> "Pca":
        """Fit on (n, d) finite rows; needs 1 <= n_components <= min(n, d) (else ShapeError)."""
    def transform(self, x: F32, *, normalize: bool = True) -> F32:
        """(n, d) -> (n, n_components); rows re-normalized unless normalize=False
        (a row equal to the mean projects to zeros and stays zero). StateError before fit."""
    @property
    def components(self) -> F32:
        """(n_components, d)."""
    @property
    def mean(self) -> F32:
        """(d,)."""

# --- thresholds and routing ---------------------------------------------------

Route = Literal["ADD", "BAND", "NOOP"]

def _read_floor(matrix: F32, *, parallel: bool = False) -> float:
    """Sum of every element of a float32 C-contiguous (n, d) array: a pass that only
    reads memory, the bandwidth floor the scoring benchmarks compare against.
    parallel=True reads the fixed row chunks of the parallel scans on every thread."""

def _parallel_config() -> tuple[int, int]:
    """(threads, min_elements): the threads a large scan uses (1: parallel path off;
    set by MEMSIEVE_THREADS, else RAYON_NUM_THREADS, else the core count, read once
    per process) and the matrix size n * d from which the full-scan kernels split
    their rows across them. Results do not depend on the thread count: top-k rows
    are identical and novelties agree within 1e-12 relative."""

def _isa() -> str:
    """The kernel path chosen at first use: "avx512", "avx2", "neon" or "portable"
    (the best the CPU has, unless MEMSIEVE_ISA names one; MEMSIEVE_PORTABLE=1 forces
    "portable"). Paths agree within float32 rounding."""

def route(novelty: float, tau: float, delta: float) -> Route:
    """n >= tau + delta -> ADD; tau <= n < tau + delta -> BAND; else NOOP."""

def sage_tau_star(rho: float, *, tau0: float = 0.5, tau_min: float = 0.05, lam: float = 2.0) -> float:
    """SAGE's target threshold tau0 * exp(-lam * rho) + tau_min."""

def sage_ema(prev_tau: float | None, tau_star: float, *, alpha: float = 0.9) -> float:
    """alpha * prev + (1 - alpha) * tau_star; the first call returns tau_star."""

def sage_density(matrix: F32, *, n_components: int = 16) -> float:
    """SAGE's density proxy rho = n / V, V the volume of the bounding box of the
    rows after PCA to n_components (fewer when n or d is smaller).

    A box of zero volume (some component without spread, e.g. a single row)
    returns 1e300, a finite stand-in for +inf that keeps tau* at its floor."""

@final
class ThresholdState:
    """memsieve's per-scope threshold state: O(1) update per add and per delete.

    Tracks the shares the gate records (sum and count, with a prior of weight
    ``prior_weight`` at ``prior_share``), from which ``mean_share``, ``kappa``
    and ``tau`` follow. A share is ``1 - novelty`` of a scored candidate,
    clamped to [-1, 1]: how much of it the scope already holds. memsieve's gate
    (python/memsieve/gate/scope_gate.py, the one owner of a scope's threshold) records the
    share of every candidate it scores and removes a memory's share when the
    memory is deleted, so ``1 - mean_share`` is the scope's mean candidate
    novelty (docs/GATE.md).

    Every parameter is required: ``GateConfig`` (memsieve.gate.config) is their one
    source. The 85-byte serialization is unchanged since memsieve 0.1.0."""

    def __new__(
        cls,
        *,
        gamma: float,
        tau_min: float,
        tau_max: float,
        kappa_c: float,
        prior_share: float,
        prior_weight: float,
    ) -> "ThresholdState": ...
    def on_add(self, share: float) -> None:
        """Record a share in [-1, 1] (nan: the scope was empty, nothing is recorded)."""
    def on_remove(self, share: float) -> None:
        """Undo on_add(share) for a removed memory."""
    @property
    def params(self) -> dict[str, float]:
        """gamma, tau_min, tau_max, kappa_c, prior_share and prior_weight, as passed or stored."""
    @property
    def count(self) -> int: ...
    @property
    def mean_share(self) -> float: ...
    @property
    def kappa(self) -> float:
        """kappa_from_spacing(mean_share, c=kappa_c)."""
    @property
    def tau(self) -> float:
        """clamp(gamma * (1 - mean_share), tau_min, tau_max), in cosine-distance units."""
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> "ThresholdState": ...

@final
class ScoreResult:
    """A score with its explanation (read-only). ``kappa`` is the concentration used,
    nan for ``score_maxcos``; an empty scope gives novelty inf, nearest_id None,
    nearest_cos nan and empty top lists. top_* are best first."""

    @property
    def novelty(self) -> float: ...
    @property
    def nearest_id(self) -> int | None: ...
    @property
    def nearest_cos(self) -> float: ...
    @property
    def kappa(self) -> float: ...
    @property
    def top_ids(self) -> list[int]: ...
    @property
    def top_cos(self) -> list[float]: ...

@final
class ScopeState:
    """A scope's vectors: a pure vector index (growable, removal by id).

    It holds no threshold; the gate owns that. Vectors must be finite and
    unit-norm (within 1e-3), else InvalidVectorError; a duplicate id on add or
    an unknown id on remove raises StateError."""

    def __new__(cls, dim: int, *, vectors: Literal["float32", "int8"] = "float32") -> "ScopeState":
        """vectors="int8" also keeps an int8 copy of each row (per-row scale),
        which score, score_maxcos and nearest scan first; every row that may
        belong to the top k is re-scored in float32, so results are the
        float32 ones bit for bit (docs/QUANT.md). score_sage reads the float32
        rows either way. Another name is a ConfigError, a non-str a DtypeError."""
    def __len__(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def storage(self) -> Literal["float32", "int8"]:
        """The vectors= it was made with."""
    @property
    def quant_bytes(self) -> int:
        """Bytes the int8 copy adds to the float32 rows (0 without one)."""
    def rescored(self, query: F32, k: int) -> int:
        """How many rows a top-k of query re-scores in float32 (len(self) without an int8 copy)."""
    def add(self, id: int, vector: F32) -> None:
        """Store vector under id in O(d)."""
    def add_many(self, ids: npt.NDArray[np.int64], vectors: F32) -> None:
        """Store many rows (hydration from the store); all or nothing."""
    def remove(self, id: int) -> None:
        """Remove id in O(d) (the last row moves into its place, so ids() order changes)."""
    def contains(self, id: int) -> bool: ...
    def ids(self) -> npt.NDArray[np.int64]: ...
    def vectors(self) -> F32:
        """(n, dim) copy in the order of ids()."""
    def score(self, query: F32, *, kappa: float, k: int = 10) -> ScoreResult:
        """memsieve's novelty of query against this scope's k nearest rows."""
    def score_maxcos(self, query: F32, *, k: int = 10) -> ScoreResult: ...
    def score_sage(self, query: F32, *, kappa: float, k: int = 10) -> ScoreResult: ...
    def nearest(self, query: F32, k: int) -> tuple[npt.NDArray[np.int64], F32]:
        """ids and cosines of the k nearest rows, best first."""
    def kappa_banerjee(self, *, clip: tuple[float, float] | None = None) -> float:
        """Banerjee's kappa from a running sum of the rows: O(d), no re-scan."""

# --- keyword index ------------------------------------------------------------

def tokenize(text: str) -> list[str]:
    """The terms the keyword index stores for ``text``, in order, with repeats.

    NFKC, Latin accents dropped, lowercased, Unicode words (UAX #29). Numbers
    are kept whole and never stemmed ("2023", "3.5", "1,000" -> "1000"); a
    number word with one value and a written ordinal are their digits
    ("eleven" -> "11", "third" and "3rd" -> "3", "dozen" -> "12");
    digit groups joined by ``- : / .`` are one token followed by their parts
    ("555-0202", "555", "0202"; "7:40pm", "7:40", "7", "40pm", "40"); an email
    is one token followed by its parts. English stopwords are dropped (not
    negations such as "no", "not", "never"), and ASCII words are stemmed with
    Snowball English ("running" -> "run", "flies" -> "fli")."""

def tokenize_kinds(text: str) -> list[tuple[str, str, str]]:
    """(term, surface, kind) per token of ``tokenize``: surface is the lowercased
    unstemmed form; kind is "number" (holds a digit, is a number word such as
    "three" or "third", or a capitalized month or weekday), "name" (capitalized
    and not sentence-initial, or an email / dotted identifier) or "word"."""

@final
class KeywordIndex:
    """One scope's bm25 index (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) /
    (df + 0.5))). All statistics are this object's own, so scopes kept in separate
    indexes never affect each other's ranking. Statistics are exact after any
    sequence of add/remove/replace: scores equal those of a fresh build, bit for bit.

    A duplicate id on add, or an unknown id on remove/replace/tokens_of, raises
    StateError; add_many checks every id before adding any."""

    def __new__(cls) -> "KeywordIndex": ...
    def __len__(self) -> int: ...
    def __contains__(self, id: int, /) -> bool: ...
    def contains(self, id: int) -> bool: ...
    def add(self, id: int, text: str) -> None: ...
    def add_many(self, ids: npt.NDArray[np.int64], texts: Iterable[str]) -> None:
        """Index one text per id (int64 (n,) array), all or nothing."""
    def remove(self, id: int) -> None: ...
    def replace(self, id: int, text: str) -> None:
        """Swap the stored text of an existing id."""
    def ids(self) -> npt.NDArray[np.int64]:
        """The ids, ascending."""
    @property
    def avg_len(self) -> float:
        """Mean document length in tokens (0.0 when empty)."""
    def df(self, term: str) -> int:
        """Documents holding ``term`` (a token as ``tokenize`` returns it)."""
    def idf(self, term: str) -> float:
        """bm25 idf of ``term`` (a token as ``tokenize`` returns it; unseen: df = 0)."""
    def tokens_of(self, id: int) -> list[str]:
        """The distinct stored terms of ``id``, sorted."""
    def search(self, query: str, k: int, *, allow: npt.NDArray[np.int64] | Iterable[int] | None = None) -> tuple[npt.NDArray[np.int64], F32]:
        """(ids, scores) of the k best documents sharing a term with ``query``, by
        score descending then id ascending; k >= 0 (bool or negative: ConfigError),
        capped at the number of matches. ``allow`` restricts the ranking itself to
        those ids, so it returns min(k, matching allowed ids). Runs without the GIL."""
    def info_novelty(
        self,
        text: str,
        neighbour_ids: npt.NDArray[np.int64] | Iterable[int],
        *,
        w_number: float = 2.0,
        w_name: float = 1.5,
        w_word: float = 1.0,
        idf_prior: float = 3.0,
        prior_weight: float = 10.0,
    ) -> tuple[float, list[str]]:
        """(share, new): the weighted share of text's distinct terms that none of the
        neighbours' stored terms holds, sum_{t new} w(t) idf_eff(t) / sum_t w(t) idf_eff(t),
        w the kind's weight, idf_eff = (N idf + prior_weight idf_prior) / (N + prior_weight);
        0.0 without content terms. ``new`` lists the new terms' surface forms, heaviest
        first. An unknown neighbour id raises StateError (the index is behind the store)."""
    def info_novelty_netted(
        self,
        text: str,
        neighbour_ids: npt.NDArray[np.int64] | Iterable[int],
        nearest: int | None,
        *,
        rarity: Callable[[str], float] | Mapping[str, float],
        w_number: float = 2.0,
        w_name: float = 1.5,
        w_word: float = 1.0,
        idf_prior: float = 3.0,
        prior_weight: float = 10.0,
    ) -> tuple[float, list[str]]:
        """``info_novelty`` net of word substitutions against the memory ``nearest``
        (when the share is > 0 and ``nearest`` is not None): the new plain words,
        each weighted by ``rarity(surface)`` (a callable or a mapping of the text's
        word surfaces), are paid for by the nearest memory's digit-free terms the
        text dropped; new numbers and names count in full. The result is
        min(share, (new_values + max(0, new_words - dropped)) / total), summed in
        the text's and the memory's token order. An unknown nearest id raises
        StateError; ``new`` is info_novelty's."""

def net_information(
    information: float,
    text_terms: Iterable[tuple[str, str, str]],
    memory_terms: Iterable[str],
    *,
    n_docs: int,
    idf: Callable[[str], float] | Mapping[str, float],
    rarity: Callable[[str], float] | Mapping[str, float],
    w_number: float = 2.0,
    w_name: float = 1.5,
    w_word: float = 1.0,
    idf_prior: float = 3.0,
    prior_weight: float = 10.0,
) -> float:
    """The netting of ``KeywordIndex.info_novelty_netted`` over two term lists:
    ``text_terms`` the (term, surface, kind) tokens of a text as ``tokenize_kinds``
    gives them (repeats allowed: a term keeps its last kind and surface),
    ``memory_terms`` the other memory's terms in its order, ``idf`` the idf of any
    of those terms over ``n_docs`` documents, ``rarity`` of the text's word surfaces."""

def pairs_above(matrix: F32, min_sim: float, *, max_pairs: int = 16777216) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], F32]:
    """(left, right, sim): every pair of unit rows i < j with cosine >= min_sim, sorted by (i, j).
    Blocked over the upper triangle with the GIL released; more than max_pairs pairs is a ConfigError."""
