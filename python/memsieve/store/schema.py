"""The schema of both stores, as named steps written once. Never edit a released step: add a new one.

Each step is a function decorated with ``@STEPS()`` that returns its SQL for
one :class:`Dialect`; the dialect fills in what the two databases spell
differently (``BLOB``/``BYTEA``, ``AUTOINCREMENT``/identity, pgvector's
``vector``) and a step that truly differs returns its two bodies side by
side. Steps apply in the order they are written. A step meant for one
dialect only (``only="sqlite"``) is not counted by the other, so a
database's version is how many of *its dialect's* steps it has applied:
``PRAGMA user_version`` on SQLite, the ``schema_version`` table on
PostgreSQL (store/migrations.py and store/pg_migrations.py run the steps).

Both stores hand back the same records, so the tables match column for
column. Where the schemas differ, and why:

- ``embedding`` is a pgvector ``vector`` on PostgreSQL (no fixed width:
  scopes may differ) and a ``BLOB`` of float32 on SQLite.
- Full text was an FTS5 table on SQLite and a generated ``tsvector`` with a
  GIN index on PostgreSQL; step 6 drops both (keyword search is the Rust
  core's per-scope index, the same on every store).
- Times stay ISO-8601 ``TEXT`` and JSON stays ``TEXT`` on both: ``as_of``
  compares ISO strings exactly as SQLite does, and any JSON that SQLite
  accepts (NaN included) round-trips unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memsieve.errors import StoreError


@dataclass(frozen=True)
class Dialect:
    """How one database spells the types and predicates the steps share.

    Attributes:
        name: ``"sqlite"`` or ``"postgres"``.
        seq: an auto-numbered primary key column.
        bigint: a 64-bit integer (SQLite's ``INTEGER`` already is one).
        blob: raw bytes.
        real: a double.
        vector: an embedding column.
        flag: a boolean column that defaults to true.
        active: the predicate "the memory is active" (a partial index's WHERE).
    """

    name: str
    seq: str
    bigint: str
    blob: str
    real: str
    vector: str
    flag: str
    active: str

    def pick(self, *, sqlite: str, postgres: str) -> str:
        """This dialect's one of two texts (for a step whose bodies differ)."""
        return sqlite if self.name == "sqlite" else postgres


SQLITE = Dialect(name="sqlite", seq="INTEGER PRIMARY KEY AUTOINCREMENT", bigint="INTEGER", blob="BLOB",
                 real="REAL", vector="BLOB", flag="INTEGER NOT NULL DEFAULT 1", active="is_active = 1")
POSTGRES = Dialect(name="postgres", seq="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", bigint="BIGINT",
                   blob="BYTEA", real="DOUBLE PRECISION", vector="vector", flag="BOOLEAN NOT NULL DEFAULT TRUE",
                   active="is_active")


@dataclass(frozen=True)
class Step:
    """One migration step as one dialect runs it.

    Attributes:
        name: the step's function name (``m005_rejection_information``).
        statements: its SQL, one statement each, run in order in one transaction.
    """

    name: str
    statements: tuple[str, ...]


class Migrations:
    """An ordered registry of named steps; ``@registry()`` adds the function below it."""

    def __init__(self) -> None:
        self._steps: list[tuple[str, Callable[[Dialect], str], str | None]] = []

    def __call__(self, *, only: str | None = None) -> Callable[[Callable[[Dialect], str]], Callable[[Dialect], str]]:
        """Register a step.

        Args:
            only: the one dialect the step is for (``"sqlite"`` or
                ``"postgres"``); every dialect when None.
        """
        if only not in (None, SQLITE.name, POSTGRES.name):
            raise StoreError(f"a migration step is for 'sqlite', 'postgres' or both (None), not only={only!r}")

        def register(fn: Callable[[Dialect], str]) -> Callable[[Dialect], str]:
            if any(name == fn.__name__ for name, _, _ in self._steps):
                raise StoreError(f"migration step {fn.__name__!r} is registered twice; give the new step a new name")
            self._steps.append((fn.__name__, fn, only))
            return fn

        return register

    def steps(self, dialect: Dialect) -> list[Step]:
        """The steps ``dialect`` runs, in order: its version N means the first N applied."""
        return [Step(name, _split(fn(dialect))) for name, fn, only in self._steps if only in (None, dialect.name)]


def _split(script: str) -> tuple[str, ...]:
    # executescript would commit implicitly and psycopg wants one statement per
    # execute, so each step runs statement by statement inside its own
    # transaction. No statement here contains a literal ';'.
    return tuple(s.strip() for s in script.split(";") if s.strip())


STEPS = Migrations()


@STEPS()
def m001_tables(d: Dialect) -> str:
    """Memories, their history, rejections, links, scope state, counters, faults.

    PostgreSQL indexed links by either end and faults by scope from the start
    (SQLite gained links_linked in step 5 and indexes faults by nothing), and
    kept its full text in the memories row; SQLite kept it in an FTS5 table.
    """
    fts_column = d.pick(sqlite="", postgres=(
        ",\n        fts          tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED"))
    fts_index = d.pick(sqlite="", postgres="CREATE INDEX memories_fts ON memories USING GIN (fts);")
    links_linked = d.pick(sqlite="", postgres="CREATE INDEX links_linked ON links(linked_id);")
    faults_scope = d.pick(sqlite="", postgres="CREATE INDEX faults_scope ON faults(scope_key);")
    fts_table = d.pick(sqlite="CREATE VIRTUAL TABLE memories_fts USING fts5(text, tokenize = 'porter unicode61');",
                       postgres="")
    return f"""
    CREATE TABLE scopes (
        scope_key   TEXT PRIMARY KEY,
        user_id     TEXT,
        agent_id    TEXT,
        run_id      TEXT,
        revision    {d.bigint} NOT NULL DEFAULT 0,
        dim         INTEGER,
        gate_state  {d.blob},
        sage_tau    {d.real},
        created_at  TEXT NOT NULL
    );
    CREATE TABLE memories (
        seq          {d.seq},
        id           TEXT NOT NULL UNIQUE,
        scope_key    TEXT NOT NULL REFERENCES scopes(scope_key),
        text         TEXT NOT NULL,
        text_hash    TEXT NOT NULL,
        embedding    {d.vector} NOT NULL,
        nn_cos       {d.real},
        metadata     TEXT NOT NULL DEFAULT '{{}}',
        source       TEXT,
        sources      TEXT NOT NULL DEFAULT '[]',
        seen_count   INTEGER NOT NULL DEFAULT 1,
        last_seen_at TEXT,
        valid_from   TEXT,
        valid_to     TEXT,
        created_at   TEXT NOT NULL,
        updated_at   TEXT,
        expired_at   TEXT,
        is_active    {d.flag}{fts_column}
    );
    CREATE INDEX memories_scope_active ON memories(scope_key, is_active);
    CREATE INDEX memories_scope_hash ON memories(scope_key, text_hash) WHERE {d.active};
    {fts_index}
    CREATE TABLE history (
        seq        {d.seq},
        memory_id  TEXT NOT NULL,
        scope_key  TEXT NOT NULL,
        event      TEXT NOT NULL,
        old_text   TEXT,
        new_text   TEXT,
        layer      TEXT NOT NULL,
        reason     TEXT NOT NULL DEFAULT '',
        extra      TEXT NOT NULL DEFAULT '{{}}',
        created_at TEXT NOT NULL
    );
    CREATE INDEX history_memory ON history(memory_id);
    CREATE TABLE rejections (
        seq                {d.seq},
        id                 TEXT NOT NULL UNIQUE,
        scope_key          TEXT NOT NULL,
        text               TEXT NOT NULL,
        source             TEXT,
        metadata           TEXT NOT NULL DEFAULT '{{}}',
        layer              TEXT NOT NULL,
        novelty            {d.real},
        tau                {d.real},
        delta              {d.real},
        kappa              {d.real},
        nearest_id         TEXT,
        nearest_cos        {d.real},
        reason             TEXT NOT NULL,
        valid_from         TEXT,
        created_at         TEXT NOT NULL,
        restored_memory_id TEXT,
        restored_at        TEXT
    );
    CREATE INDEX rejections_scope ON rejections(scope_key, created_at);
    CREATE TABLE links (
        memory_id  TEXT NOT NULL,
        linked_id  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        cosine     {d.real},
        created_at TEXT NOT NULL,
        PRIMARY KEY (memory_id, linked_id, kind)
    );
    {links_linked}
    CREATE TABLE counters (
        scope_key TEXT NOT NULL,
        event     TEXT NOT NULL,
        layer     TEXT NOT NULL,
        n         {d.bigint} NOT NULL DEFAULT 0,
        PRIMARY KEY (scope_key, event, layer)
    );
    CREATE TABLE faults (
        seq        {d.seq},
        scope_key  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        detail     TEXT NOT NULL,
        raw        TEXT,
        created_at TEXT NOT NULL
    );
    {faults_scope}
    {fts_table}
    """


@STEPS()
def m002_changed_rev(d: Dialect) -> str:
    """The scope revision at which each memory last changed, so a process whose
    cached gate is behind re-reads only what changed, not the whole scope."""
    return f"""
    ALTER TABLE memories ADD COLUMN changed_rev {d.bigint} NOT NULL DEFAULT 0;
    CREATE INDEX memories_scope_changed ON memories(scope_key, changed_rev)
    """


@STEPS()
def m003_memory_versions(d: Dialect) -> str:
    """Every superseded text of a memory, with its vector and the interval
    [known_from, known_to) the store knew it, so a point-in-time read sees the
    text and the vector that held then, not today's."""
    return f"""
    CREATE TABLE memory_versions (
        seq        {d.seq},
        memory_seq {d.bigint} NOT NULL REFERENCES memories(seq),
        text       TEXT NOT NULL,
        text_hash  TEXT NOT NULL,
        embedding  {d.vector} NOT NULL,
        known_from TEXT NOT NULL,
        known_to   TEXT NOT NULL
    );
    CREATE INDEX memory_versions_memory ON memory_versions(memory_seq, known_to)
    """


@STEPS()
def m004_share_column(d: Dialect) -> str:
    """The column holds 1 - novelty at the time of the ADD (a "share" of the
    threshold), not a cosine; it is named for what it holds."""
    return """
    ALTER TABLE memories RENAME COLUMN nn_cos TO share
    """


@STEPS()
def m005_rejection_information(d: Dialect) -> str:
    """The gate's information term on every rejection, and the indexes a purge
    and the freshness reads look rows up by (a rejection by the memory it was
    folded into or restored as, a link by either end).

    SQLite indexes links by their linked end here (PostgreSQL has since step
    1). A purged memory keeps no embedding: pgvector has no zero-width vector,
    so there the column admits NULL (SQLite stores an empty BLOB).
    """
    rest = d.pick(sqlite="CREATE INDEX links_linked ON links(linked_id)",
                  postgres="ALTER TABLE memories ALTER COLUMN embedding DROP NOT NULL")
    return f"""
    ALTER TABLE rejections ADD COLUMN information {d.real};
    CREATE INDEX rejections_nearest ON rejections(nearest_id);
    CREATE INDEX rejections_restored ON rejections(restored_memory_id) WHERE restored_memory_id IS NOT NULL;
    {rest}
    """


@STEPS()
def m006_drop_full_text(d: Dialect) -> str:
    """Keyword search is the Rust core's per-scope bm25 index, rebuilt from the
    memories' texts; the full-text copy (global statistics, a second copy of
    every text for a purge to chase) goes: SQLite's FTS5 table with its shadow
    tables, PostgreSQL's tsvector column with its GIN index."""
    return d.pick(sqlite="""
    DROP TABLE memories_fts
    """, postgres="""
    DROP INDEX memories_fts;
    ALTER TABLE memories DROP COLUMN fts
    """)


@STEPS()
def m007_dedup_index(d: Dialect) -> str:
    """Exact dedup looks a text up by (scope, hash, active). Without statistics
    SQLite preferred memories_scope_active (two equalities) over the partial
    hash index and scanned every active memory of the scope on each add (1.9
    ms at 2,000 memories); three equalities win the plan. PostgreSQL gets the
    same index so both stores plan alike."""
    return """
    CREATE INDEX memories_scope_hash_active ON memories(scope_key, text_hash, is_active)
    """


@STEPS()
def m008_merges(d: Dialect) -> str:
    """The merges scheduled consolidation made, each with the state its members
    had before (JSON), so ``unconsolidate`` can put that state back. No text is
    kept here: texts live in the memories, their versions and their history,
    where a purge finds them."""
    return """
    CREATE TABLE merges (
        id         TEXT PRIMARY KEY,
        scope_key  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        kept_id    TEXT NOT NULL,
        member_ids TEXT NOT NULL,
        reason     TEXT NOT NULL,
        state      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        undone_at  TEXT
    );
    CREATE INDEX merges_scope ON merges(scope_key, created_at)
    """


@STEPS(only="sqlite")
def m009_drop_partial_hash_index(d: Dialect) -> str:
    """Step 7's index answers every lookup the partial hash index of step 1
    did, and no plan chose the older one since; each ADD kept both up to date,
    1.3 of the ~15 pages its commit wrote to the WAL. The step was measured
    and made for SQLite only: PostgreSQL databases keep the index."""
    return """
    DROP INDEX IF EXISTS memories_scope_hash
    """


@STEPS()
def m010_memory_parts(d: Dialect) -> str:
    """The passages of a memory whose text is longer than the embedder's window: part 1 on (part 0 is
    the memory's own embedding), its character span in the text and its embedding, so every part of
    a long text counts in the gate and in dense search. A purge deletes them; an update replaces them."""
    return f"""
    CREATE TABLE memory_parts (
        memory_seq {d.bigint} NOT NULL REFERENCES memories(seq),
        part       INTEGER NOT NULL,
        start_char INTEGER NOT NULL,
        end_char   INTEGER NOT NULL,
        embedding  {d.vector} NOT NULL,
        PRIMARY KEY (memory_seq, part)
    )
    """


@STEPS()
def m011_replies(d: Dialect) -> str:
    """The REST service's answers to writes sent with an ``Idempotency-Key``, by API key name and
    idempotency key, so that a client retrying a write it got no answer to is answered, not written
    twice. ``status`` NULL: the first request is still running. A purge in the scope deletes them
    (an answer quotes texts), and they expire after a day."""
    return """
    CREATE TABLE replies (
        key_name    TEXT NOT NULL,
        idem_key    TEXT NOT NULL,
        scope_key   TEXT,
        fingerprint TEXT NOT NULL,
        status      INTEGER,
        body        TEXT,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (key_name, idem_key)
    );
    CREATE INDEX replies_scope ON replies(scope_key);
    CREATE INDEX replies_created ON replies(created_at)
    """


@STEPS()
def m012_version_parts(d: Dialect) -> str:
    """The parts (passages, sentence keys) a superseded text had, by the version that keeps the
    text: an edit replaces a memory's parts, and a point-in-time read of the old text finds it by
    them as it was found then. Copied from ``memory_parts`` when the version is recorded; a purge
    deletes them. Versions recorded before this step have none."""
    return f"""
    CREATE TABLE version_parts (
        version_seq {d.bigint} NOT NULL REFERENCES memory_versions(seq),
        memory_seq  {d.bigint} NOT NULL REFERENCES memories(seq),
        part        INTEGER NOT NULL,
        embedding   {d.vector} NOT NULL,
        PRIMARY KEY (version_seq, part)
    );
    CREATE INDEX version_parts_memory ON version_parts(memory_seq)
    """


@STEPS()
def m013_valid_from_offset(d: Dialect) -> str:
    """The UTC offset, in seconds east of UTC, that a memory's (or a rejection's) ``valid_from`` was
    given in; NULL for UTC or no zone, as every time was stored before. ``valid_from`` stays UTC, the
    form times are compared in; the offset dates the memory in the day it was said in
    (memsieve.offsets)."""
    return """
    ALTER TABLE memories ADD COLUMN valid_from_offset INTEGER;
    ALTER TABLE rejections ADD COLUMN valid_from_offset INTEGER
    """


@STEPS()
def m014_forgotten_folds(d: Dialect) -> str:
    """When a request to forget named a rejection's text. Search shows the texts folded into a
    memory beside it (memsieve.read.folded); one a request named leaves search, and its record
    keeps it (``Memory.rejections``, ``Memory.restore``) as a soft-deleted memory is kept."""
    return """
    ALTER TABLE rejections ADD COLUMN forgotten_at TEXT
    """


@STEPS()
def m015_fold_keys(d: Dialect) -> str:
    """What lets a search tell, in two index reads, whether a scope's folds changed since the
    last: the newest fold's seq (a partial index of the texts folded into a memory, exact
    duplicates aside) and a count of folds that left search (restored, forgotten, purged) per
    scope. Keyword search keeps an index of the folds' words (memsieve.read.fold_keys)."""
    return f"""
    ALTER TABLE scopes ADD COLUMN folds_left {d.bigint} NOT NULL DEFAULT 0;
    CREATE INDEX rejections_folds ON rejections(scope_key, seq) WHERE nearest_id IS NOT NULL AND layer <> 'exact'
    """
