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

_validated: dict[tuple[str, int, int, str, tuple[tuple[str, str], ...]], int] = {}


def _validate(path: Path, fmt: str, columns: dict[str, str]) -> int:
    """`validate`, once per file contents (path, size, mtime) and declaration: a scenario
    loads its workload files more than once."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns, fmt, tuple(columns.items()))
    if key not in _validated:
        _validated[key] = validate(path, fmt, columns)
    return _validated[key]


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
            rows[name] = _validate(path, fmt, dict(dataset.columns))
        except DatasetError as exc:
            raise fail(str(exc)) from None
        resolved[name] = dataset.model_copy(update={"file": str(path), "format": fmt})
    checked.model = model.model_copy(update={"datasets": resolved})
    return rows


def dataset_load_rows(checked: Checked) -> int | None:
    """The rows a load phase of this file loads when its load op binds a data set
    (that data set's rows), else None (the phase's records decide)."""
    model = checked.model
    op = model.ops.get(checked.load_op or "")
    if op is None:
        return None
    for gen in op.bind.values():
        if getattr(gen, "gen", None) == "dataset":
            name = getattr(gen, "dataset", None) or next(iter(model.datasets))
            dataset = model.datasets[name]
            path = Path(dataset.file)
            return _validate(path, dataset.file_format() or "", dict(dataset.columns))
    return None
