"""A store with one synthetic run, shared by the read-side tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.store.synth import make_lines, write_run

SECONDS = 130  # two whole minutes plus edges: exercises the minute rollup


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from loadtower.store import StoreWriter

    path = Path(tmp_path_factory.mktemp("store")) / "s.duckdb"
    lines, raw = make_lines(seconds=SECONDS, agents=4)
    with StoreWriter(path) as writer:
        run_id = write_run(writer, lines, SECONDS)
    return {"path": path, "run_id": run_id, "lines": lines, "raw": raw}
