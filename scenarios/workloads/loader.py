"""Read a workload file (TOML, or a YCSB core workload .properties file) into a
checked model; a bad file gives one line naming file, line and key (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loadtower.errors import ConfigError
from loadtower.scenarios.builtin_additions import with_additions
from loadtower.scenarios.loader import parse_toml, read_text
from loadtower.scenarios.workloads.checks import Checked, check
from loadtower.scenarios.workloads.dataset_files import check_dataset_files
from loadtower.scenarios.workloads.model_errors import validate_workload
from loadtower.scenarios.workloads.variables import Scalar, substitute
from loadtower.scenarios.workloads.ycsb_workload import ycsb_workload

PROPERTIES_SUFFIXES = (".properties", ".props")


def is_properties(path: Path) -> bool:
    """A YCSB workload file (``workloada``, ``x.properties``) rather than TOML."""
    return path.suffix.lower() in PROPERTIES_SUFFIXES or (
        path.suffix == "" and path.name.startswith("workload")
    )


def load_workload_text(
    source: str, file: str, overrides: dict[str, Scalar] | None = None
) -> Checked:
    data = parse_toml(source, file)
    return checked_from_data(data, source, file, overrides)


def checked_from_data(
    data: dict[str, Any], source: str, file: str, overrides: dict[str, Scalar] | None = None
) -> Checked:
    data = substitute(data, overrides or {}, source, file)
    model = validate_workload(data, source, file)
    return check(model, source, file)


def load_workload_file(path: Path, overrides: dict[str, Scalar] | None = None) -> Checked:
    """A workload file by its path: TOML, or YCSB properties (by its name)."""
    source = with_additions(path, read_text(path))
    if is_properties(path):
        return ycsb_workload(source, str(path), overrides)
    checked = load_workload_text(source, str(path), overrides)
    check_dataset_files(checked, source, path)
    return checked


def declared_overrides(
    checked_vars: dict[str, Any], given: dict[str, Scalar], where: str
) -> dict[str, Scalar]:
    """`given` when each is a variable the file declares."""
    for name in given:
        if name not in checked_vars:
            raise ConfigError(where, None, f"vars.{name}", "not a variable of the workload file "
                              f"(its [vars]: {', '.join(checked_vars) or 'none'})")
    return given
