"""The data-set reader on real files written by DuckDB and by hand: CSV, Parquet,
JSON; a value that does not convert and a missing column each one line naming the
file (row, line, column); shares cover every row once; memory stays bounded for a
file larger than DuckDB's memory limit."""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from loadtower.agents.workload.dataset_reader import (
    DatasetError,
    DatasetReader,
    Share,
    validate,
)

COLUMNS = {"id": "bigint", "name": "text", "age": "int", "score": "double", "uid": "uuid",
           "born": "timestamp", "ok": "boolean"}  # fmt: skip
ROWS = 2500


def _write(path: Path, fmt: str) -> Path:
    options = {"csv": "(HEADER)", "parquet": "(FORMAT parquet, ROW_GROUP_SIZE 1000)",
               "json": "(FORMAT json)"}[fmt]  # fmt: skip
    con = duckdb.connect()
    try:
        con.execute(
            "COPY (SELECT i AS id, 'n' || i AS name, (i % 90)::INTEGER AS age, i / 4 AS score,"
            " uuid_from(i) AS uid, TIMESTAMP '2025-01-01' + to_seconds(i) AS born, i % 2 = 0 AS ok"
            f" FROM range({ROWS}) t(i)) TO '{path}' {options}".replace(
                "uuid_from(i)", "md5(i::VARCHAR)::UUID"))
    finally:
        con.close()
    return path


@pytest.fixture(params=["csv", "parquet", "json"])
def dataset(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    fmt = str(request.param)
    return _write(tmp_path / f"d.{fmt}", fmt), fmt


def test_every_format_reads_the_declared_columns_typed(dataset: tuple[Path, str]) -> None:
    path, fmt = dataset
    rows = list(DatasetReader(path, fmt, COLUMNS, batch_rows=300).rows())
    assert [r["id"] for r in rows] == list(range(ROWS))  # in file order
    first = rows[7]
    assert first["name"] == "n7" and first["age"] == 7 and first["score"] == 7 / 4
    assert isinstance(first["uid"], uuid.UUID)
    assert first["born"] == datetime(2025, 1, 1, 0, 0, 7) and first["ok"] is False
    assert validate(path, fmt, COLUMNS) == ROWS


def test_shares_cover_every_row_once(dataset: tuple[Path, str]) -> None:
    path, fmt = dataset
    seen: list[int] = []
    for index in range(3):
        reader = DatasetReader(path, fmt, {"id": "bigint"}, Share(index, 3), batch_rows=97)
        mine = [r["id"] for r in reader.rows()]
        assert all(i % 3 == index for i in mine) and reader.rows_read == len(mine)
        seen += mine
    assert sorted(seen) == list(range(ROWS))
    ranged = DatasetReader(path, fmt, {"id": "bigint"}, Share(1, 2, start=100, stop=110))
    assert [r["id"] for r in ranged.rows()] == [101, 103, 105, 107, 109]


def test_batches_are_bounded_and_cycle_starts_again(dataset: tuple[Path, str]) -> None:
    path, fmt = dataset
    reader = DatasetReader(path, fmt, {"id": "bigint"}, Share(0, 1, stop=250), batch_rows=100)
    assert [len(b) for b in reader.batches()] == [100, 100, 50]
    drawn = reader.cycle()
    assert [next(drawn)["id"] for _ in range(600)] == [i % 250 for i in range(600)]


def test_a_value_that_does_not_convert_names_file_row_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("id,name,age\n1,ann,31\n2,bob,45\n3,cyd,forty\n4,dan,50\n")
    with pytest.raises(DatasetError) as info:
        validate(path, "csv", {"id": "bigint", "name": "text", "age": "int"})
    assert str(info.value) == f"{path}: row 3 (line 4), column 'age': its value (5 characters) is not a int"
    reader = DatasetReader(path, "csv", {"id": "bigint", "age": "int"}, batch_rows=1)
    rows = reader.rows()
    assert next(rows)["age"] == 31 and next(rows)["age"] == 45
    with pytest.raises(DatasetError, match="row 3 \\(line 4\\), column 'age'"):
        next(rows)


def test_json_and_parquet_type_errors_name_the_row(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": 1, "age": 3}\n{"id": 2, "age": 300000000000}\n')
    with pytest.raises(DatasetError, match="p.jsonl: row 2, column 'age': .* is not a int$"):
        validate(path, "json", {"id": "bigint", "age": "int"})
    parquet = _write(tmp_path / "d.parquet", "parquet")
    with pytest.raises(DatasetError, match="d.parquet: row 1, column 'name': its value \\(2 characters\\) is not a "
                       "bigint$"):
        validate(parquet, "parquet", {"name": "bigint"})


def test_a_missing_column_or_file_is_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.csv", "csv")
    with pytest.raises(DatasetError) as info:
        list(DatasetReader(path, "csv", {"id": "bigint", "email": "text"}).rows())
    assert str(info.value) == (f"{path}: no column 'email' (the file has: id, name, age, score, "
                               "uid, born, ok)")
    with pytest.raises(DatasetError, match="nope.parquet: no such file$"):
        validate(tmp_path / "nope.parquet", "parquet", {"id": "bigint"})
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(DatasetError, match="x.parquet: cannot read it as parquet: "):
        validate(tmp_path / "x.parquet", "parquet", {"id": "bigint"})


def test_the_data_set_rows_of_one_op_row_are_one_file_row(tmp_path: Path) -> None:
    import random

    from loadtower.agents.workload.binder import OpBinder
    from loadtower.agents.workload.generators import Context

    path = _write(tmp_path / "d.parquet", "parquet")
    reader = DatasetReader(path, "parquet", {"id": "bigint", "name": "text"}, batch_rows=64)
    ctx = Context(random.Random(1), 10, datasets={"d": reader.cycle()})
    op = OpBinder("put", {"types": {"a": "bigint", "b": "text"},
                          "bind": {"a": {"gen": "dataset", "column": "id"},
                                   "b": {"gen": "dataset", "column": "name"}}}, ctx)
    rows = [op.row() for _ in range(ROWS + 5)]
    assert all(r["b"] == f"n{r['a']}" for r in rows)  # both columns of one file row
    assert [r["a"] for r in rows] == [i % ROWS for i in range(ROWS + 5)]  # in turn, cycling


LIMIT_MB, BOUND_MB = 128, 256
_PROBE = """
import sys
from loadtower.agents.workload.dataset_reader import DatasetReader
reader = DatasetReader(sys.argv[1], "csv", {"id": "bigint", "pad": "text"},
                       batch_rows=1000, memory_limit=sys.argv[2])
rows = sum(len(b) for b in reader.batches())
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(rows, int(peak.split()[1]) // 1024)
"""


def test_a_file_larger_than_the_memory_limit_streams_in_bounded_memory(tmp_path: Path) -> None:
    """A 300 MB CSV read with DuckDB's memory_limit at 128 MB: the reading process's
    peak RSS stays under 256 MB (the limit, the interpreter and DuckDB's ~45 MB, one
    batch of rows), below the file's own size: nothing holds the whole file. (VmHWM,
    not ru_maxrss, which keeps the forking pytest's peak across exec.)"""
    path = tmp_path / "wide.csv"
    con = duckdb.connect()
    try:
        con.execute("COPY (SELECT i AS id, repeat(chr(97 + (i % 26)::INTEGER), 1600) AS pad "
                    f"FROM range(190000) t(i)) TO '{path}' (HEADER)")
    finally:
        con.close()
    size_mb = path.stat().st_size / 2**20
    assert size_mb > BOUND_MB
    done = subprocess.run([sys.executable, "-c", _PROBE, str(path), f"{LIMIT_MB}MB"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows, peak_mb = map(int, done.stdout.split())
    assert rows == 190000
    assert peak_mb < BOUND_MB, f"peak RSS {peak_mb} MB reading a {size_mb:.0f} MB file"


def test_a_json_array_of_objects_reads_like_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[{"id": 1, "name": "a", "extra": true}, {"id": 2, "name": "b"}]')
    rows = list(DatasetReader(path, "json", {"name": "text", "id": "bigint"}).rows())
    assert rows == [{"name": "a", "id": 1}, {"name": "b", "id": 2}]
