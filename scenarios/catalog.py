"""Built-in scenarios (scenarios/builtin/*.toml) and command-line overrides."""

from __future__ import annotations

import math
import re
from importlib import resources
from pathlib import Path
from typing import Any

from loadtower.errors import ConfigError


def builtin_names() -> list[str]:
    folder = resources.files("loadtower.scenarios.builtin")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def resolve_scenario(name_or_path: str) -> Path:
    """A path to an existing file, or the name of a built-in scenario."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    if name_or_path in builtin_names():
        ref = resources.files("loadtower.scenarios.builtin") / f"{name_or_path}.toml"
        return Path(str(ref))
    if path.exists():  # a device, a FIFO, a folder: the loader refuses it, saying which
        return path
    raise ConfigError(
        name_or_path,
        None,
        None,
        f"no such scenario file, and not a built-in scenario ({', '.join(builtin_names())})",
    )


MAX_SCALE = 1e6
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _parse_value(text: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (ValueError, RecursionError):  # TOMLDecodeError is a ValueError
        return text


def apply_overrides(
    data: dict[str, Any], overrides: list[str], scale: float | None
) -> dict[str, Any]:
    """`--set dataset.records=1000000`, `--set phases[1].rate=5000`; `--scale 10` multiplies
    sizes: dataset.records and each phase's records and start_key."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(
                "--set", None, item, "expected KEY=VALUE, e.g. dataset.records=100000"
            )
        key, raw = item.split("=", 1)
        parts: list[str | int] = [
            m.group(1) if m.group(1) is not None else int(m.group(2))
            for m in _SEGMENT.finditer(key)
        ]
        node: Any = data
        for part in parts[:-1]:
            try:
                node = node[part] if isinstance(part, int) else node.setdefault(part, {})
            except (IndexError, TypeError, AttributeError):
                raise ConfigError("--set", None, key, "no such key in the scenario") from None
        try:
            node[parts[-1]] = _parse_value(raw.strip())
        except (IndexError, TypeError):
            raise ConfigError("--set", None, key, "no such key in the scenario") from None
    if scale is not None:
        if not (math.isfinite(scale) and 0 < scale <= MAX_SCALE):
            raise ConfigError(
                "--scale", None, None, f"must be a number above 0 and at most {MAX_SCALE:g}"
            )
        dataset = data.setdefault("dataset", {})
        if isinstance(dataset, dict):
            _scale_int(dataset, "records", scale, 10_000)
        phases = data.get("phases", [])
        for phase in phases if isinstance(phases, list) else []:
            if isinstance(phase, dict):
                _scale_int(phase, "records", scale)
                _scale_int(phase, "start_key", scale, minimum=0)  # new keys past the data set
    return data


def _scale_int(
    table: dict[str, Any], key: str, scale: float, default: int | None = None, minimum: int = 1
) -> None:
    """table[key] * scale for an integer (else left for validation to name the problem)."""
    value = table.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 63:
        table[key] = max(minimum, int(value * scale))
