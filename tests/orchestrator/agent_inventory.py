"""The sandbox's inventory with agent1's Python swapped (a bare one, an agent-set venv)."""

from __future__ import annotations

import re
from pathlib import Path


def agent_inventory(sandbox: dict, tmp_path: Path, python: str, extra: str = "") -> Path:
    """A copy of the sandbox inventory whose [hosts.agent1] runs `python` (`extra`: more
    lines for that host, e.g. bootstrap = true)."""
    text = (Path(sandbox["dir"]) / "inventory.toml").read_text()
    section = re.search(r"\[hosts\.agent1\]\n(?:(?!\n\[).)*", text, re.S)
    assert section, "the sandbox inventory has no [hosts.agent1]"
    body = re.sub(r'(?m)^python = ".*"$', lambda _m: f'python = "{python}"{extra}',
                  section.group(0))  # fmt: skip
    out = tmp_path / "inventory.toml"
    out.write_text(text.replace(section.group(0), body))
    return out
