"""A workload file's data sets on one agent worker: which rows it reads.

- A load phase whose load op binds ``gen = "dataset"`` columns loads that data set:
  its rows are the load's key numbers (0 .. rows - 1), each worker the contiguous
  slice ``load_slice`` gives it (so the workers of all agents write each row once),
  read in order; the load ends at the data set's end.
- Other data sets, and every data set in run phases, are drawn in turn, cycling, over
  the worker's share of the rows (row i with i % workers == worker): one batch of rows
  in memory at a time (``DatasetReader.cycle``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loadtower.agents.workload.dataset_reader import DatasetReader, Share, connect, source_sql
from loadtower.protocol.workload_file_spec import WorkloadFileSpec


def _datasets(wf: WorkloadFileSpec) -> dict[str, dict[str, Any]]:
    return dict(wf.get("model", {}).get("datasets", {}))


def _path(dataset: dict[str, Any]) -> str:
    return str(Path(str(dataset["file"])).expanduser())


def _format(dataset: dict[str, Any]) -> str:
    given = dataset.get("format")
    if given:
        return str(given)
    suffix = str(dataset["file"]).rsplit(".", 1)[-1].lower()
    return {"jsonl": "json", "ndjson": "json"}.get(suffix, suffix)


def load_dataset(wf: WorkloadFileSpec) -> str | None:
    """The data set the file's load op binds (its first ``gen = "dataset"`` binding's)."""
    op = wf.get("ops", {}).get(wf.get("load") or "")
    names = list(_datasets(wf))
    for spec in (op or {}).get("bind", {}).values():
        if spec.get("gen") == "dataset":
            return str(spec.get("dataset") or (names[0] if names else ""))
    return None


def dataset_rows(wf: WorkloadFileSpec, name: str) -> int:
    """The data set's number of data rows (DuckDB: Parquet from its metadata, CSV and
    JSON by one streaming pass)."""
    dataset = _datasets(wf)[name]
    con = connect()
    try:
        found = con.execute(
            f"SELECT count(*) FROM {source_sql(_path(dataset), _format(dataset))}"
        ).fetchone()
    finally:
        con.close()
    return int(found[0]) if found else 0


def reader(wf: WorkloadFileSpec, name: str, share: Share) -> DatasetReader:
    dataset = _datasets(wf)[name]
    return DatasetReader(_path(dataset), _format(dataset), dict(dataset["columns"]), share)


def worker_datasets(
    wf: WorkloadFileSpec, worker: int, workers: int, load: tuple[str, int, int] | None = None,
) -> dict[str, Iterator[dict[str, Any]]]:
    """Each data set's rows for this worker (``Context.datasets``): `load` = (name,
    first, end): that data set's rows [first, end) once, in order; the others cycle
    over the worker's share."""
    out: dict[str, Iterator[dict[str, Any]]] = {}
    for name in _datasets(wf):
        if load is not None and name == load[0]:
            out[name] = reader(wf, name, Share(start=load[1], stop=load[2])).rows()
        else:
            out[name] = _cycle(wf, name, worker, workers)
    return out


def _cycle(wf: WorkloadFileSpec, name: str, worker: int, workers: int
           ) -> Iterator[dict[str, Any]]:
    """The worker's share in turn, or the whole file's rows when its share is empty
    (a data set of fewer rows than workers)."""
    workers = max(workers, 1)
    share = reader(wf, name, Share(worker % workers, workers))
    first = next(iter(share.rows()), None)
    if first is None:
        yield from reader(wf, name, Share()).cycle()
        return
    yield from share.cycle()


def peak_rss_mb() -> float:
    """This process's peak resident memory (Linux VmHWM), in MB (0 where unknown)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
