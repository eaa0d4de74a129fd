"""Built-in scenarios (scenarios/builtin/*.toml) and command-line overrides."""

from __future__ import annotations

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
    raise ConfigError(
        name_or_path,
        None,
        None,
        f"no such scenario file, and not a built-in scenario ({', '.join(builtin_names())})",
    )


_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _parse_value(text: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
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
        if scale <= 0:
            raise ConfigError("--scale", None, None, "must be a positive number")
        dataset = data.setdefault("dataset", {})
        dataset["records"] = max(1, int(dataset.get("records", 10_000) * scale))
        for phase in data.get("phases", []):
            if not isinstance(phase, dict):
                continue
            if isinstance(phase.get("records"), int):
                phase["records"] = max(1, int(phase["records"] * scale))
            if isinstance(phase.get("start_key"), int):  # new keys stay past the data set
                phase["start_key"] = int(phase["start_key"] * scale)
    return data
