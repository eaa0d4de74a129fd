"""Load inventory and scenario TOML files into typed models, with errors naming file, line, key.

Input files are regular files of at most MAX_INPUT_BYTES (1 MiB): a device, a FIFO or a
bigger file is refused after reading at most MAX_INPUT_BYTES + 1 bytes. A UTF-8 byte
order mark at the start is accepted (and dropped). An error on a secret key (password,
token, ...) never shows the value.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from loadtower.errors import ConfigError
from loadtower.protocol.engine_kinds import default_engine
from loadtower.scenarios.builtin_additions import with_additions
from loadtower.scenarios.catalog import apply_overrides, resolve_scenario
from loadtower.scenarios.inventory_checks import check_inventory_values
from loadtower.scenarios.key_suggestions import did_you_mean, known_keys
from loadtower.scenarios.models import PHASE_TYPES, Inventory, Scenario
from loadtower.scenarios.toml_lines import LineIndex, format_path

M = TypeVar("M", bound=BaseModel)
MAX_INPUT_BYTES = 1 << 20  # 1 MiB: far above any real scenario or inventory
BOM = "\ufeff"
_SECRET_KEY = re.compile(r"password|passwd|secret|token", re.IGNORECASE)
_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}

_TYPE_NAMES = {
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "bool": "true or false",
    "list": "a list",
    "dict": "a table",
    "model": "a table",
}


def _type_of(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "table",
    }.get(type(value), type(value).__name__)


def _walk_loc(data: Any, loc: tuple[Any, ...]) -> tuple[tuple[str | int, ...], Any]:
    """The key path in the file for a pydantic error location, dropping union tags."""
    path: list[str | int] = []
    node: Any = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            path.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            path.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and part in PHASE_TYPES:
            continue  # discriminated-union tag, not a key in the file
        else:
            path.append(part)
            node = None
    return tuple(path), node


def _problem(error: dict[str, Any], value: Any, key_error: bool, secret: bool = False) -> str:
    kind = error["type"]
    if secret:  # the type and the rule, never the value
        base = kind.split("_")[0]
        if kind.endswith("_type") and base in _TYPE_NAMES:
            return f"wrong type: expected {_TYPE_NAMES[base]}, got {_type_of(value)} (not shown)"
        if kind not in ("extra_forbidden", "missing"):
            return f"invalid value (not shown: a secret): {kind.replace('_', ' ')}"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "missing required key"
    if kind == "union_tag_invalid":
        return f"unknown phase type {value!r} (expected one of: {', '.join(PHASE_TYPES)})"
    if kind == "union_tag_not_found":
        return f"missing 'type' (one of: {', '.join(PHASE_TYPES)})"
    if kind == "literal_error" and key_error:
        expected = error.get("ctx", {}).get("expected", "")
        return f"unknown name {value!r} (expected {expected})"
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        return f"invalid value {value!r} (expected {expected})"
    base = kind.split("_")[0]
    if kind.endswith("_type") and base in _TYPE_NAMES:
        return f"wrong type: expected {_TYPE_NAMES[base]}, got {_type_of(value)} {value!r}"
    message = str(error.get("msg", kind))
    return message.removeprefix("Value error, ")


# unknown keys first (a misspelled key also makes its real name "missing"), missing last
_ORDER = {"extra_forbidden": 0, "missing": 2}


def _first_error(exc: ValidationError) -> dict[str, Any]:
    errors = exc.errors()
    return dict(min(errors, key=lambda e: _ORDER.get(e["type"], 1)))


def validate(model: type[M], data: dict[str, Any], source: str, file: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = _first_error(exc)
        loc = tuple(error["loc"])
        is_key = bool(loc) and loc[-1] == "[key]"
        path, value = _walk_loc(data, loc[:-1] if is_key else loc)
        if is_key:
            value = path[-1]
        if error["type"] == "union_tag_invalid" and isinstance(value, dict):
            path, value = (*path, "type"), value.get("type")
        line = LineIndex(source).line_of(path) if path else None
        if error["type"] == "missing" and line is None:
            line = 1  # a missing top-level key: the file as a whole
        key = format_path(path) or None
        secret = any(isinstance(p, str) and _SECRET_KEY.search(p) for p in path)
        problem = _problem(error, value, is_key, secret)
        if error["type"] == "extra_forbidden" and loc:
            problem += _misplaced(model, loc) or did_you_mean(
                str(loc[-1]), known_keys(model, loc[:-1])
            )
        raise ConfigError(file, line, key, problem) from None


def _misplaced(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """A hint for a key that belongs elsewhere: `engine` in [target] (it is the scenario's
    top-level key, or a key of each [targets.NAME])."""
    if model is Scenario and loc[:1] == ("target",) and loc[-1] == "engine":
        return (
            f" ('engine' is a top-level key, engine = \"{default_engine()}\", or a key of each "
            "[targets.NAME] when the scenario runs on several)"
        )
    return ""


def parse_toml(source: str, name: str) -> dict[str, Any]:
    try:
        return tomllib.loads(source.removeprefix(BOM))
    except RecursionError:
        raise ConfigError(name, None, None, "invalid TOML: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        if not isinstance(exc, tomllib.TOMLDecodeError):
            raise ConfigError(name, None, None, f"invalid TOML: {exc}".split(";")[0]) from None
        line = getattr(exc, "lineno", None)
        message = str(exc).split(" (at line")[0]
        if line is None and "(at line " in str(exc):
            try:
                line = int(str(exc).split("(at line ")[1].split(",")[0])
            except ValueError:
                line = None
        raise ConfigError(name, line, None, f"invalid TOML: {message}") from None


def load_scenario_text(source: str, file: str) -> Scenario:
    source = source.removeprefix(BOM)
    return validate(Scenario, parse_toml(source, file), source, file)


def load_scenario(
    path: Path, overrides: list[str] | None = None, scale: float | None = None
) -> tuple[Scenario, str]:
    """The validated scenario and its source text (a built-in name is accepted too)."""
    scenario, source, _notes = load_scenario_noted(path, overrides, scale)
    return scenario, source


def load_scenario_noted(
    path: Path, overrides: list[str] | None = None, scale: float | None = None
) -> tuple[Scenario, str, tuple[str, ...]]:
    """load_scenario, and the defaults taken when the file is a YCSB property file or a
    workload file run as it is (scenarios/direct_scenario.py; none for a scenario)."""
    # deferred: a cycle (direct_scenario imports workloads/loader.py, which imports this
    # module)
    from loadtower.scenarios.direct_scenario import direct_scenario

    path = resolve_scenario(str(path))
    text = with_additions(path, read_text(path))
    direct = direct_scenario(path, text)
    notes: tuple[str, ...] = ()
    if direct is None:
        source = text
        data = parse_toml(source, str(path))
    else:
        data, source, notes = direct.data, direct.source, direct.notes
    if overrides or scale is not None:
        data = apply_overrides(data, overrides or [], scale)
    file = str(path) if direct is None else f"{path} (as a scenario)"
    return validate(Scenario, data, source, file), source, notes


def load_inventory(path: Path) -> tuple[Inventory, str]:
    data, source = read_toml(path)
    inventory = validate(Inventory, data, source, str(path))
    check_inventory_values(inventory, source, str(path))
    return inventory, source


def read_input(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (reads at most limit + 1)."""
    name = str(path)
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConfigError(name, None, None, "file not found") from None
    except OSError as exc:
        raise ConfigError(name, None, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise ConfigError(name, None, None, f"not a regular file ({kind})")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ConfigError(name, None, None, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise ConfigError(
            name, None, None, f"larger than {limit:,} bytes (the most an input file may hold)"
        )
    return b"".join(chunks)


def read_text(path: Path) -> str:
    """A UTF-8 input file's text (see read_input), without a byte order mark."""
    data = read_input(path)
    try:
        return data.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(str(path), line, None, f"not UTF-8 text: {exc.reason}") from None


def read_toml(path: Path) -> tuple[dict[str, Any], str]:
    source = read_text(path)
    return parse_toml(source, str(path)), source
