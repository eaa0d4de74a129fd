"""A YCSB property file (or a workload file) run as it is: `loadtower check workloada
-i INV` takes YCSB's client defaults, prints which, and refuses a file with no end."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.scenarios.direct_scenario import DEFAULT_RUN_S, direct_scenario
from loadtower.scenarios.models import SteadyPhase
from loadtower.scenarios.plan import load_plan

from .conftest import INVENTORY

EXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "examples" / "workloads"


def test_workloada_as_shipped_checks_with_its_defaults(write, tmp_path: Path, capsys) -> None:
    inv = write("inv.toml", INVENTORY)
    assert main(["check", str(EXAMPLES / "workloada.properties"), "-i", str(inv)]) == 0
    out = capsys.readouterr().out
    assert "YCSB property file" in out
    assert "closed model, 1 users (threadcount)" in out
    assert "operationcount 1000 is not counted" in out
    plan = load_plan(EXAMPLES / "workloada.properties", inv)
    assert plan.scenario.dataset.records == 1000
    load, run = plan.scenario.phases
    assert load.type == "load" and isinstance(run, SteadyPhase)
    assert run.users == 1 and run.duration == DEFAULT_RUN_S
    assert plan.workloads["main"].model.ops["read"].weight == pytest.approx(0.5)


def test_a_file_named_workload_without_suffix(write, tmp_path: Path) -> None:
    path = tmp_path / "workloadb"
    shutil.copy(EXAMPLES / "workloada.properties", path)
    path.write_text(path.read_text() + "target=200\noperationcount=3000\nthreadcount=8\n")
    plan = load_plan(path, write("inv.toml", INVENTORY))
    load, run = plan.scenario.phases
    assert isinstance(run, SteadyPhase) and run.rate == 200 and run.duration == 15.0
    assert load.concurrency == 8  # type: ignore[union-attr]
    assert any("open model" in n for n in plan.notes)


def test_maxexecutiontime_comes_first(tmp_path: Path) -> None:
    path = tmp_path / "w.properties"
    path.write_text("recordcount=10\noperationcount=100000\ntarget=100\nmaxexecutiontime=20\n")
    direct = direct_scenario(path, path.read_text())
    assert direct is not None and direct.data["phases"][1]["duration"] == "20s"


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("recordcount=0\n", 1, "recordcount"),
        ("recordcount=10\ntarget=50\n", None, "operationcount"),
        ("recordcount=ten\n", 1, "recordcount"),
        ("recordcount=10\n\nthreadcount=-1\n", 3, "threadcount"),
    ],
)
def test_a_file_with_no_load_or_no_end_is_one_line(tmp_path: Path, text, line, key) -> None:
    path = tmp_path / "w.properties"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        direct_scenario(path, text)
    assert err.value.line == line and err.value.key == key


def test_a_workload_toml_runs_as_it_is(write) -> None:
    plan = load_plan(EXAMPLES / "user-profiles.toml", write("inv.toml", INVENTORY))
    assert plan.notes[0].startswith("user-profiles.toml is a workload file")
    assert any(n.startswith("recordcount not given: loadtower's default") for n in plan.notes)
    assert [p.type for p in plan.scenario.phases] == ["load", "run"]
    assert plan.scenario.dataset.records > 0


def test_a_scenario_file_is_not_taken_for_one(write) -> None:
    plan = load_plan("quickstart", write("inv.toml", INVENTORY))
    assert plan.notes == ()


def test_set_changes_a_default(write) -> None:
    inv = write("inv.toml", INVENTORY)
    plan = load_plan(EXAMPLES / "workloada.properties", inv, ["phases[1].duration=5s"])
    assert plan.scenario.phases[1].duration == 5.0  # type: ignore[union-attr]
