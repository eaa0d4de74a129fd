"""A value written into the sandbox's generated TOML (inventory files)."""

from __future__ import annotations

import json


def q(value: object) -> str:
    """A TOML value: JSON string/number literals are valid TOML."""
    return json.dumps(value)
