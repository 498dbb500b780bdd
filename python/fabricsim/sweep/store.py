"""Crash-safe results store: one SQLite database (WAL) per sweep folder; every finished run commits atomically.

Invariant: a run's hash is its primary key, so re-running a sweep skips what is stored and a run can never
be stored twice. A process killed at any instant leaves every committed row intact (WAL, synchronous=FULL).

A store is a folder (created if needed) holding results.sqlite, or that database file itself: an existing store is
resumed and appended to. Anything else (a file that is not an SQLite database, a database without the `runs`
table of a sweep store, a folder whose results.sqlite is not one) is refused with a StoreError naming the path.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import FabricsimError
from .spec import RunTask

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    hash TEXT PRIMARY KEY,
    sweep TEXT NOT NULL,
    point_key TEXT NOT NULL,
    params TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,          -- 'ok', 'incomplete' or 'invalid'
    metrics TEXT,                  -- JSON object (ok and incomplete runs)
    error TEXT,                    -- one line: the error (invalid runs) or the reason (incomplete runs)
    wall_s REAL,
    version TEXT NOT NULL,
    finished_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs (sweep, point_key);
"""

MEASURED = ("ok", "incomplete")
"""The statuses of runs that have metrics: ok, and incomplete (the run ended with its workload unfinished, e.g. a
message never delivered after a drop; a deterministic outcome, stored like an ok run, with its reason)."""


STORE_FILE = "results.sqlite"
"""The database file in a store folder."""
COLUMNS = ("hash", "sweep", "point_key", "params", "seed", "status", "metrics", "error", "wall_s", "version",
           "finished_at")
"""The columns of the `runs` table, in order: what an existing database must have to be a sweep store."""


class StoreError(FabricsimError, ValueError):
    """A sweep store path that cannot be used: a file that is not a sweep store, a folder that cannot be made or
    a database that cannot be opened. The message is one line naming the path and what is wrong."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"sweep store {self.path}: {reason}")


def _is_sqlite(path: Path) -> bool:
    """Whether the file starts with SQLite's 16-byte header ("SQLite format 3\\0"); an empty file counts (SQLite
    makes a database of it)."""
    with open(path, "rb") as f:
        head = f.read(16)
    return head == b"" or head == b"SQLite format 3\x00"


def _open(path: Path) -> sqlite3.Connection:
    """The sweep database at `path` (a new one if absent), its schema in place; StoreError if `path` is a file of
    another kind, an SQLite database without a sweep's `runs` table, or cannot be opened."""
    existed = path.exists()
    try:
        if existed and not _is_sqlite(path):
            raise StoreError(path, "not a sweep store (the file is not an SQLite database); give a folder, or "
                                   "the results.sqlite of an earlier sweep")
        db = sqlite3.connect(path, timeout=60)
        try:
            if existed:
                tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                cols = tuple(r[1] for r in db.execute("PRAGMA table_info(runs)"))
                if tables and cols != COLUMNS:
                    what = "has no 'runs' table" if "runs" not in tables else "its 'runs' table has other columns"
                    raise StoreError(path, f"not a sweep store (an SQLite database that {what}); give a folder, "
                                           "or the results.sqlite of an earlier sweep")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(SCHEMA)
            db.commit()
        except BaseException:
            db.close()
            raise
    except sqlite3.Error as e:
        raise StoreError(path, f"cannot open it as a sweep store ({type(e).__name__}: {e})") from None
    except OSError as e:
        raise StoreError(path, f"cannot read it: {e.strerror or e}") from None
    return db


def store_path(location: str | Path) -> Path:
    """The database file of a store location: `location` itself when it is an existing file (the results.sqlite of
    an earlier sweep, or a file that `Store` will refuse), else `location`/results.sqlite."""
    p = Path(location)
    return p if p.is_file() else p / STORE_FILE


def _first_file(folder: Path) -> Path:
    """The first ancestor of `folder` (itself included) that exists and is not a folder: what stops mkdir."""
    for p in (folder, *folder.parents):
        if p.exists() and not p.is_dir():
            return p
    return folder


def _statuses(status: str | tuple[str, ...] | None) -> tuple[str, ...]:
    return () if status is None else (status,) if isinstance(status, str) else tuple(status)


class Store:
    """The results of one or more sweeps in `folder/results.sqlite` (or in a store's database file given itself).
    Raises StoreError for a path that is not a sweep store (see the module)."""

    def __init__(self, folder: str | Path):
        from ..checks import path

        self.path = store_path(path(folder, "folder"))
        self.folder = self.path.parent
        if not self.path.exists():
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                raise StoreError(folder, f"cannot make the folder: {_first_file(self.folder)} is a file") from None
            except OSError as e:
                raise StoreError(folder, f"cannot make the folder: {e.strerror or e}") from None
        self.db = _open(self.path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def _where(sweep: str | None, status: str | tuple[str, ...] | None) -> tuple[str, list[Any]]:
        """The WHERE clause (and its arguments) selecting one sweep's runs and/or runs of the given statuses."""
        q, args = " WHERE 1=1", []
        if sweep:
            q, args = q + " AND sweep = ?", args + [sweep]
        wanted = _statuses(status)
        if wanted:
            q, args = q + f" AND status IN ({','.join('?' * len(wanted))})", args + list(wanted)
        return q, args

    def hashes(self, sweep: str | None = None, status: str | tuple[str, ...] | None = None) -> set[str]:
        """Stored run hashes, of one sweep and/or of one status or several ('ok', 'incomplete', 'invalid')."""
        q, args = self._where(sweep, status)
        return {h for (h,) in self.db.execute("SELECT hash FROM runs" + q, args)}

    def metrics(self, hashes: list[str], status: str | tuple[str, ...] = MEASURED) -> dict[str, dict[str, Any]]:
        """Run hash -> metrics of the stored runs among `hashes` with the given status (default: ok and
        incomplete), in storage order. O(stored runs)."""
        want = set(hashes)
        q, args = self._where(None, status)
        rows = self.db.execute("SELECT hash, metrics FROM runs" + q + " ORDER BY rowid", args)
        return {h: json.loads(m) for h, m in rows if h in want and m}

    def outcomes(self, hashes: list[str]) -> dict[str, tuple[str, str | None]]:
        """Run hash -> (status, error or reason) of every stored run among `hashes`. O(stored runs)."""
        want = set(hashes)
        return {h: (st, err) for h, st, err in self.db.execute("SELECT hash, status, error FROM runs") if h in want}

    def put(self, task: RunTask, result: dict[str, Any]) -> bool:
        """Commit one finished run; False if its hash was already stored. O(log n)."""
        from .. import __version__

        cur = self.db.execute(
            "INSERT OR IGNORE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                task.hash, task.sweep, task.point_key, json.dumps(task.params, sort_keys=True, default=str), task.seed,
                result["status"], json.dumps(result.get("metrics")) if result["status"] in MEASURED else None,
                result.get("error"), result.get("wall_s"), __version__,
                _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            ),
        )
        self.db.commit()
        return cur.rowcount == 1

    def rows(self, sweep: str | None = None, status: str | tuple[str, ...] | None = MEASURED) -> list[dict[str, Any]]:
        """Stored runs as flat dicts: hash, sweep, seed, status, wall_s, version, params (by path), metrics, and
        `incomplete_reason` (incomplete runs) or `error` (invalid runs). Default: the runs with metrics (ok and
        incomplete); `status=None` gives every run."""
        q, args = self._where(sweep, status)
        cols = "SELECT hash, sweep, params, seed, status, metrics, error, wall_s, version FROM runs"
        out = []
        for h, sw, params, seed, st, metrics, error, wall, ver in self.db.execute(cols + q + " ORDER BY rowid", args):
            row = {"hash": h, "sweep": sw, "seed": seed, "status": st, "wall_s": wall, "version": ver}
            row.update(json.loads(params))
            if metrics:
                row.update(json.loads(metrics))
            if error:
                row["incomplete_reason" if st == "incomplete" else "error"] = error
            out.append(row)
        return out

    def frame(self, sweep: str | None = None, status: str | tuple[str, ...] | None = MEASURED):
        """The stored runs as a pandas DataFrame (one row per run; params and metrics as columns; by default the
        ok and incomplete runs, told apart by `status`)."""
        import pandas as pd

        return pd.DataFrame(self.rows(sweep, status))

    def export(self, path: str | Path, sweep: str | None = None) -> Path:
        """Write the runs with metrics (ok and incomplete, see `status` and `incomplete_reason`) to CSV or
        Parquet (by the file's suffix)."""
        p = Path(path)
        df = self.frame(sweep)
        if p.suffix == ".parquet":
            for col in df.columns:  # Parquet columns need one type: mixed values (10, "1MiB") become text
                if df[col].dtype == object and len({type(v) for v in df[col] if v is not None}) > 1:
                    df[col] = df[col].map(lambda v: None if v is None else str(v))
            df.to_parquet(p, index=False)
        elif p.suffix == ".csv":
            df.to_csv(p, index=False)
        else:
            raise ValueError(f"export to .csv or .parquet, not '{p.suffix}'")
        return p
