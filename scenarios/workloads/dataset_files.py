"""A workload file's data sets on the orchestrator: each ``file`` resolved against the
workload file's folder, where it must stay (an absolute path, ``..`` or a symlink leading
out of the folder is refused unless the data set says ``allow_outside = true``), and read once through the agents' own reader
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


def dataset_path(workload_file: Path, file: str, allow_outside: bool = False) -> Path:
    """A data set's file, relative to the workload file's folder, every symlink resolved;
    ValueError (the problem) when it is absolute or resolves outside the folder and
    `allow_outside` is off."""
    folder = workload_file.parent.resolve()
    given = Path(file).expanduser()
    if given.is_absolute() and not allow_outside:
        raise ValueError(f"{file} is an absolute path: a data set file is relative to the "
                         f"workload file's folder {folder} (allow_outside = true to read "
                         "a file elsewhere)")
    real = (folder / given).resolve()
    if not allow_outside and not real.is_relative_to(folder):
        raise ValueError(f"{file} leads out of the workload file's folder {folder} (to "
                         f"{real}, through '..' or a symlink): refused (allow_outside = "
                         "true to read it)")
    return real


def outside_datasets(checked: Checked) -> dict[str, str]:
    """The data sets read from outside their workload file's folder (allow_outside):
    name -> the resolved path (``loadtower check`` prints them)."""
    return {name: d.file for name, d in checked.model.datasets.items() if d.allow_outside}


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

        try:
            path = dataset_path(workload_file, dataset.file, dataset.allow_outside)
        except ValueError as exc:
            raise fail(str(exc)) from None
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
