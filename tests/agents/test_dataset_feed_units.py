"""Which rows of a data set each agent worker reads: a load's slices cover every row
once, in order; run phases cycle over each worker's share (the whole file when the
share is empty)."""

from __future__ import annotations

from pathlib import Path

from loadtower.agents.workload.dataset_feed import dataset_rows, load_dataset, worker_datasets
from loadtower.agents.workload.keys import load_slice


def _spec(tmp_path: Path, rows: int) -> dict:
    path = tmp_path / "d.csv"
    path.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(rows)))
    return {
        "model": {"datasets": {"d": {"file": str(path), "columns": {"id": "bigint"}},
                               "other": {"file": str(path), "format": "csv",
                                         "columns": {"name": "text"}}}},
        "ops": {"put": {"bind": {"id": {"gen": "dataset", "column": "id", "dataset": "d"},
                                 "x": {"gen": "int"}}}},
        "load": "put",
    }


def test_the_load_ops_data_set_is_loaded_once_across_workers(tmp_path: Path) -> None:
    wf = _spec(tmp_path, 1003)
    assert load_dataset(wf) == "d" and dataset_rows(wf, "d") == 1003  # type: ignore[arg-type]
    seen = []
    for worker in range(4):
        first, end = load_slice(0, 1003, worker, 4)
        rows = worker_datasets(wf, worker, 4, ("d", first, end))  # type: ignore[arg-type]
        seen += [r["id"] for r in rows["d"]]
        other = rows["other"]
        assert [next(other)["name"] for _ in range(3)] == [f"n{worker + 4 * i}" for i in range(3)]
    assert seen == list(range(1003))


def test_run_phases_cycle_and_a_tiny_data_set_is_shared(tmp_path: Path) -> None:
    wf = _spec(tmp_path, 2)
    rows = worker_datasets(wf, 3, 4)["d"]  # type: ignore[arg-type]  # share of 2 rows: empty
    assert [next(rows)["id"] for _ in range(5)] == [0, 1, 0, 1, 0]
    assert load_dataset({"ops": {"put": {"bind": {"x": {"gen": "int"}}}},  # type: ignore[arg-type]
                         "load": "put"}) is None
