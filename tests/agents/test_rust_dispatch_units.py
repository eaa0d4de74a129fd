"""Which CQL phases the engine puts on the Rust core (agents/driver_loop.py `_rust_wanted`): a
workload file's load, open- and closed-model run phases when the target asks for the
core and it binds the file (the built-ins are shipped files); other engines never;
every Python-path phase has a `cql_path` event naming its phase, mode and why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.engines.cassandra.agent import rust_feed

FILE = {"ops": {"put": {"key": {"gen": "sequence"}, "bind": {"id": {"gen": "key"}},
                        "types": {"id": "text"}}},
        "run": {"put": {"statements": [{"text": "INSERT INTO t (id) VALUES (?)", "binds": ["id"],
                                        "insert_rows": False}], "weight": 1.0}},
        "load": "put"}
DATASET_FILE = {**FILE, "ops": {"put": {"bind": {"id": {"gen": "dataset", "column": "n"}},
                                        "types": {"id": "text"}}}}


def cfg(mode: str, rate: float | None, native_io: str = "rust", wf: Any = FILE,
        phase: str = "p") -> PhaseConfig:
    spec: dict[str, Any] = {"target": {"native_io": native_io}}
    if wf is not None:
        spec["workload_file"] = wf
    return PhaseConfig(phase=phase, mode=mode, spec=spec,  # type: ignore[arg-type]
                       contact_points=[], port=None, username=None, password=None,
                       driver="acsylla", lane_rate=rate)


@pytest.fixture()
def engine() -> Iterator[tuple[DriverLoop, list[dict]]]:
    lines: list[dict] = []
    eng = DriverLoop("a/0", "a", out=lines.append)
    try:
        yield eng, lines
    finally:
        eng.loop.close()  # never started: no thread to stop


def paths(lines: list[dict]) -> list[tuple[str, str]]:
    return [(x["phase"], x["message"]) for x in lines if x.get("kind") == "cql_path"]


@pytest.mark.parametrize(("mode", "rate"), [("load", None), ("run", None), ("run", 100.0)])
def test_a_workload_files_phases_go_on_the_core(engine: tuple[DriverLoop, list[dict]], mode: str,
                                                rate: float | None) -> None:
    eng, lines = engine
    wanted = eng._rust_wanted(cfg(mode, rate), "cassandra")
    if rust_feed.available():
        assert wanted and paths(lines) == []
    else:
        assert not wanted and "loadtower_core is not installed" in paths(lines)[0][1]


def test_only_cql_phases_of_a_workload_file_go_on_the_core(engine: tuple[DriverLoop, list[dict]]
                                                           ) -> None:
    eng, lines = engine
    for mode in ("load", "run"):  # (every phase spec has a file: the built-ins' are shipped)
        assert not eng._rust_wanted(cfg(mode, None, wf=None), "cassandra")
    assert not eng._rust_wanted(cfg("load", None), "clickhouse")
    assert paths(lines) == []


def test_python_path_phases_say_their_mode_and_why(engine: tuple[DriverLoop, list[dict]]) -> None:
    eng, lines = engine
    assert not eng._rust_wanted(cfg("load", None, "python", phase="L"), "cassandra")
    assert not eng._rust_wanted(cfg("run", None, "python", phase="C"), "cassandra")
    assert not eng._rust_wanted(cfg("run", None, "python", phase="C"), "cassandra")
    assert paths(lines) == [
        ("L", "native_io python; the load's inserts run from Python on acsylla"),
        ("C", "native_io python; closed-model sends run from Python on acsylla")]
    lines.clear()
    assert not eng._rust_wanted(cfg("load", None, wf=DATASET_FILE, phase="D"), "cassandra")
    ((phase, said),) = paths(lines)
    assert phase == "D" and said.endswith("; the load's inserts run from Python on acsylla")
    if rust_feed.available():
        assert 'binds id to gen = "dataset"' in said
