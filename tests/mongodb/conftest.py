"""Fixtures the MongoDB unit tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def write(tmp_path: Path):  # noqa: ANN201
    """Write a file into tmp_path (beside the password file the test inventories name)."""
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    (tmp_path / "mongo.pw").write_text("pw-of-mongo\n")
    return _write
