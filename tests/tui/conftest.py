"""Fixtures of the TUI tests: the fixture store (built once, copied into each test)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.tui.fixture_store import build_fixture_store


@pytest.fixture(scope="session")
def fixture_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_fixture_store(tmp_path_factory.mktemp("tui-fixture") / "store.duckdb")


@pytest.fixture
def store(fixture_source: Path, tmp_path: Path) -> Path:
    """A fresh copy of the fixture store for this test (tests may delete runs)."""
    target = tmp_path / "store.duckdb"
    shutil.copy(fixture_source, target)
    return target
