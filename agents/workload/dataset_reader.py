"""The user's data set (``[datasets.NAME]`` of a workload file) streamed through
DuckDB's readers: CSV (with a header row naming the columns), Parquet, JSON (an array
of objects or newline-delimited objects).

Memory stays bounded whatever the file's size: DuckDB streams the file (one thread, a
``memory_limit``), numbers the rows with a streaming ``row_number() OVER ()`` and
converts each declared column with ``TRY_CAST`` to its declared type; Python fetches
``batch_rows`` rows at a time. A value that does not convert is one line naming the
file, the data row (1-based; CSV: also its line) and the column; a declared column the
file does not have, one line naming the file and the column. No error quotes the file's
content beyond its column names, and only names that look like names (a data set that
turns out to be a key or a password file must not leak a line of it): a bad value is
given by its length, DuckDB's own message has its quoted text blanked.

A reader takes a share of the rows: data rows ``i`` (0-based) in ``[start, stop)``
with ``i % count == index``, so the workers of the agents of a load each write each
row once. ``cycle()`` starts again at the end (run phases draw rows in turn).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from loadtower.errors import LoadtowerError

# portable column type (docs/workloads.md) -> DuckDB type the value is cast to
DUCK_TYPES = {
    "text": "VARCHAR", "ascii": "VARCHAR", "blob": "BLOB", "boolean": "BOOLEAN",
    "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INTEGER", "bigint": "BIGINT",
    "float": "FLOAT", "double": "DOUBLE", "uuid": "UUID", "timeuuid": "UUID",
    "timestamp": "TIMESTAMPTZ", "date": "DATE",
}  # fmt: skip
FORMATS = ("csv", "parquet", "json")
BATCH_ROWS = 10_000
MEMORY_LIMIT = "256MB"
_SEP = "\x1f"
_NAME_SHOWN = re.compile(r"[\w][\w .$-]{0,63}")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_MESSAGE_CHARS = 300


class DatasetError(LoadtowerError):
    """A data set the reader cannot use: one line naming the file (row, column)."""


@dataclass(frozen=True)
class Share:
    """The rows a reader takes: 0-based data rows in [start, stop) (stop None: to the
    end) with ``i % count == index``."""

    index: int = 0
    count: int = 1
    start: int = 0
    stop: int | None = None


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def source_sql(path: str | Path, fmt: str) -> str:
    """The DuckDB table function reading `path` as `fmt` (every CSV column as text:
    the declared types are cast afterwards, so a bad value names its row)."""
    where = _literal(str(path))
    if fmt == "csv":
        return f"read_csv({where}, header = true, all_varchar = true)"
    if fmt == "parquet":
        return f"read_parquet({where})"
    if fmt == "json":
        return f"read_json_auto({where}, format = 'auto')"
    raise DatasetError(f"{path}: unknown data set format {fmt!r} (one of {', '.join(FORMATS)})")


def connect(memory_limit: str = MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that streams with one thread within `memory_limit` (one
    thread also keeps the file's row order, which row numbers rely on)."""
    con = duckdb.connect(config={"memory_limit": memory_limit, "threads": 1,
                                 "preserve_insertion_order": True})
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # never on an agent's stdout
    return con


def _cast(column: str, type_name: str) -> str:
    duck = DUCK_TYPES.get(type_name)
    if duck is None:
        raise DatasetError(f"column '{column}': type {type_name!r} is not one a data set "
                           f"can have ({', '.join(DUCK_TYPES)})")
    cast = f"TRY_CAST({_quote(column)} AS {duck})"
    return f"CAST({cast} AS TIMESTAMP)" if duck == "TIMESTAMPTZ" else cast


class DatasetReader:
    """Rows of one data set file as dicts of its declared columns (see the module)."""

    def __init__(
        self, path: str | Path, fmt: str, columns: dict[str, str], share: Share = Share(),
        batch_rows: int = BATCH_ROWS, memory_limit: str = MEMORY_LIMIT,
    ) -> None:
        if share.count < 1 or not 0 <= share.index < share.count:
            raise ValueError(f"share {share.index} of {share.count}")
        self.path, self.fmt, self.columns = str(path), fmt, dict(columns)
        self.share, self.batch_rows, self.memory_limit = share, max(1, batch_rows), memory_limit
        self.names = list(self.columns)
        self.rows_read = 0

    def _error(self, problem: str) -> DatasetError:
        return DatasetError(f"{self.path}: {problem}")

    def _where(self, row: int) -> str:
        return f"row {row} (line {row + 1})" if self.fmt == "csv" else f"row {row}"

    def check_columns(self, con: duckdb.DuckDBPyConnection) -> None:
        """Every declared column is in the file (one line naming the first missing)."""
        if not Path(self.path).is_file():
            raise self._error("no such file")
        try:
            described = con.execute(f"DESCRIBE SELECT * FROM {source_sql(self.path, self.fmt)}")
            have = [str(r[0]) for r in described.fetchall()]
        except duckdb.Error as exc:
            raise self._error(f"cannot read it as {self.fmt}: "
                              f"{_first_line(exc, self.path)}") from None
        for name in self.names:
            if name not in have:
                raise self._error(f"no column '{name}' ({_columns_shown(have)})")

    def query(self) -> str:
        """The streaming query: row number, the cast columns, the first bad value."""
        casts = {name: _cast(name, typ) for name, typ in self.columns.items()}
        bad = " ".join(
            f"WHEN {_quote(n)} IS NOT NULL AND {c} IS NULL "
            f"THEN {_literal(n + _SEP)} || CAST({_quote(n)} AS VARCHAR)"
            for n, c in casts.items())
        selected = ", ".join(f"{c} AS {_quote(n)}" for n, c in casts.items())
        share = self.share
        where = [f"rn > {share.start}"]
        if share.stop is not None:
            where.append(f"rn <= {share.stop}")
        if share.count > 1:
            where.append(f"(rn - 1) % {share.count} = {share.index}")
        return (f"SELECT rn, {selected}, CASE {bad} END AS lt_bad FROM ("
                f"SELECT row_number() OVER () AS rn, * FROM {source_sql(self.path, self.fmt)}"
                f") WHERE {' AND '.join(where)}")

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        """The share's rows, at most `batch_rows` at a time; a value that does not
        convert raises DatasetError naming its row and column."""
        con = connect(self.memory_limit)
        try:
            self.check_columns(con)
            try:
                cursor = con.execute(self.query())
            except duckdb.Error as exc:
                raise self._error(_first_line(exc, self.path)) from None
            names = self.names
            while True:
                try:
                    fetched = cursor.fetchmany(self.batch_rows)
                except duckdb.Error as exc:
                    raise self._error(_first_line(exc, self.path)) from None
                if not fetched:
                    return
                out = []
                for row in fetched:
                    if row[-1] is not None:
                        column, value = str(row[-1]).split(_SEP, 1)
                        raise self._error(
                            f"{self._where(int(row[0]))}, column '{column}': "
                            f"{_value_shown(value)} is not a {self.columns[column]}")
                    out.append(dict(zip(names, row[1:-1], strict=True)))
                self.rows_read += len(out)
                yield out
        finally:
            con.close()

    def rows(self) -> Iterator[dict[str, Any]]:
        for batch in self.batches():
            yield from batch

    def cycle(self) -> Iterator[dict[str, Any]]:
        """The share's rows in turn, from the start again after the last (one batch in
        memory at a time); an empty share raises DatasetError."""
        while True:
            empty = True
            for row in self.rows():
                empty = False
                yield row
            if empty:
                raise self._error("no rows to draw (the file, or this worker's share, is empty)")


def validate(path: str | Path, fmt: str, columns: dict[str, str],
             memory_limit: str = MEMORY_LIMIT) -> int:
    """Read the whole file once as the agents will (bounded memory): its data rows'
    count, or DatasetError for a missing column or the first value that does not
    convert. The conversion is DuckDB's: the same on the orchestrator and the agents."""
    reader = DatasetReader(path, fmt, columns, memory_limit=memory_limit)
    con = connect(memory_limit)
    try:
        reader.check_columns(con)
        try:
            found = con.execute(
                f"SELECT count(*), min(rn) FILTER (WHERE lt_bad IS NOT NULL), "
                f"arg_min(lt_bad, rn) FILTER (WHERE lt_bad IS NOT NULL) FROM ({reader.query()})"
            ).fetchone()
        except duckdb.Error as exc:
            raise reader._error(_first_line(exc, reader.path)) from None
    finally:
        con.close()
    assert found is not None
    count, bad_row, bad = found
    if bad_row is not None:
        column, value = str(bad).split(_SEP, 1)
        raise reader._error(f"{reader._where(int(bad_row))}, column '{column}': "
                            f"{_value_shown(value)} is not a {columns[column]}")
    return int(count)


def _value_shown(value: str) -> str:
    """A value that does not convert, by its length only (never its text)."""
    return f"its value ({len(value)} characters)"


def _columns_shown(have: list[str]) -> str:
    """The file's column names that look like names; the others only counted."""
    shown = [name for name in have if _NAME_SHOWN.fullmatch(name)]
    hidden = len(have) - len(shown)
    if not shown:
        return f"the file has {hidden} column(s), no name shown: none looks like a name"
    text = f"the file has: {', '.join(shown)}"
    return text + (f", and {hidden} column(s) whose name is not shown" if hidden else "")


def _first_line(exc: BaseException, path: str = "") -> str:
    """DuckDB's message, its first line, with every quoted text other than the file's
    own name blanked (a message may quote a line or a value of the file)."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    keep = {path, Path(path).name} if path else set()

    def blank(match: re.Match[str]) -> str:
        quoted = match.group(0)
        return quoted if quoted[1:-1] in keep else quoted[0] + "..." + quoted[0]

    line = _QUOTED.sub(blank, line)
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 3] + "..."
