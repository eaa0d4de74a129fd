"""A workload file's data sets on the orchestrator: each ``file`` resolved against the
workload file's directory (or absolute) and read once through the agents' own reader
(``agents/workload/dataset_reader.py``, bounded memory), so a missing file, a missing
column or a value that does not convert is one line before anything runs: the
workload file, the line and key of the data set's ``file``, then the data file's own
row and column."""

from __future__ import annotations

from pathlib import Path

from loadtower.agents.workload.dataset_reader import DatasetError, validate
from loadtower.errors import ConfigError
from loadtower.scenarios.toml_lines import LineIndex, format_path
from loadtower.scenarios.workloads.checks import Checked


def dataset_path(workload_file: Path, file: str) -> Path:
    """A data set's file: absolute, or relative to the workload file's directory."""
    given = Path(file).expanduser()
    return given if given.is_absolute() else (workload_file.parent / given).resolve()


def check_dataset_files(checked: Checked, source: str, workload_file: Path) -> dict[str, int]:
    """Resolve every data set's file (the model's ``file`` becomes the absolute path the
    orchestrator ships to the agents) and read it through DuckDB: its rows per data set,
    or one ConfigError naming the workload file, line and key."""
    model = checked.model
    if not model.datasets:
        return {}
    index, rows, resolved = LineIndex(source), {}, {}
    for name, dataset in model.datasets.items():
        key = ("datasets", name, "file")

        def fail(problem: str, key: tuple[str, ...] = key) -> ConfigError:
            return ConfigError(str(workload_file), index.line_of(key), format_path(key), problem)

        path = dataset_path(workload_file, dataset.file)
        if not path.is_file():
            raise fail(f"no such data set file {path}")
        fmt = dataset.file_format() or ""
        try:
            rows[name] = validate(path, fmt, dict(dataset.columns))
        except DatasetError as exc:
            raise fail(str(exc)) from None
        resolved[name] = dataset.model_copy(update={"file": str(path), "format": fmt})
    checked.model = model.model_copy(update={"datasets": resolved})
    return rows
