"""No screen of the TUI shows a database password.

Two runs are recorded the way the orchestrator records one (orchestrator/
runner.py: `writer.secrets = known_secrets(plan)`, then `writer.start_run` with the plan's
scenario and inventory text, and events through its Sinks) from a plan whose inventory
holds an inline password, and whose scenario, events, host output, phase parameters and
failure reason repeat it. Then every screen is rendered (runs, replay dashboard, SQL
console over the stored texts, compare) and its text searched for the password.

A canary store, where the same texts were written without the redaction, shows that the
search would find a leak: there the password is on the dashboard and in the SQL console.
"""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from loadtower.orchestrator.secrets import known_secrets
from loadtower.orchestrator.sinks import Sinks
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreWriter
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.compare import CompareScreen
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.screens.sql_console import SqlScreen
from tests.scenarios.conftest import INVENTORY, SCENARIO
from tests.tui.fixture_store import _hist
from tests.tui.helpers import screen_text, settle

pytestmark = pytest.mark.timeout(120)

PASSWORD = "Zq7-hunter-s3cret"
RUNS = ("20261001-100000-aaaa", "20261001-110000-bbbb")
T0 = 1_790_000_000
SECONDS = 12
WIDE = (700, 40)  # the SQL console's widest result fits without scrolling sideways
# the password early in both texts: within the 80 characters a SQL console cell shows
SCENARIO_TEXT = f"# the cluster's password is {PASSWORD}\n" + SCENARIO
INVENTORY_TEXT = (f'[cassandra]\nusername = "loadtower"\npassword = "{PASSWORD}"\n\n'
                  + INVENTORY.replace('[cassandra]\nusername = "loadtower"\n'
                                      'password_env = "LT_PW"\n', ""))
QUERIES = ("SELECT * FROM runs", "SELECT * FROM events", "SELECT * FROM logs",
           "SELECT * FROM phases")


def record(store: Path, folder: Path) -> None:
    """Two runs, recorded through the orchestrator's redaction path."""
    scenario, inventory = folder / "scenario.toml", folder / "inventory.toml"
    scenario.write_text(SCENARIO_TEXT)
    inventory.write_text(INVENTORY_TEXT)
    plan = load_plan(scenario, inventory)
    assert plan.inventory.credentials("cassandra").password == PASSWORD
    writer = StoreWriter(store)
    writer.secrets = known_secrets(plan)  # as Orchestrator.run does
    rng = random.Random(7)
    try:
        for n, run_id in enumerate(RUNS):
            start = T0 + 3600 * n
            writer.start_run(plan.scenario.name, plan.scenario.name, plan.scenario_text,
                             plan.inventory_text, {"loadtower": "test"}, {"db1": {"cpus": 2}},
                             {"scenario_path": str(scenario), "inventory_path": str(inventory)},
                             run_id=run_id, started=start)
            sinks = Sinks(writer, run_id, plan)
            sinks.phase = "run"
            sinks.event("run", f"run {run_id} started: scenario {plan.scenario.name}", ts=start)
            writer.phase_started(run_id, 0, "run", "run", start,
                                 {"type": "run", "auth": f"loadtower:{PASSWORD}"})
            for sec in range(SECONDS):
                ts = start + sec
                ops = {"read": {"ops": 100, "errors": {}, "late": 0,
                                "service_hist": _hist(rng, 100, 800),
                                "response_hist": _hist(rng, 100, 900)}}
                writer.add_interval(run_id, {"type": "interval", "agent": "agent1/0",
                                             "host": "agent1", "ts": ts, "phase": "run",
                                             "cpu_pct": 20.0, "ops": ops})
                writer.add_agent_sample(run_id, ts, "agent1/0", "agent1", 20.0, 100.0, "running")
                writer.add_node_sample(run_id, ts, "db1", 40.0, 8_000_000_000, 24_000_000_000,
                                       0.0, 0.0, 0.0, 0.0)
            sinks.event("warning", f"cqlsh -u loadtower -p {PASSWORD} failed on db1",
                        host="db1", ts=start + 5)
            writer.log(run_id, start + 3, "db1", "stderr",  # Sinks.log stamps "now"
                       sinks.mask(f"nodetool -pw {PASSWORD} status: UN 127.0.0.1"))
            writer.log(run_id, start + 4, "db1", "stdout", f"auth with {PASSWORD} ok")
            writer.phase_ended(run_id, 0, start + SECONDS, {"password_used": PASSWORD})
            writer.end_run(run_id, "failed" if n else "completed",
                           f"db1 refused password {PASSWORD}" if n else None,
                           ended=start + SECONDS)
    finally:
        writer.close()


def unredact(store: Path) -> None:
    """The canary: put the password back where the redaction took it out."""
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE runs SET scenario_text = ?, inventory_text = ?",
                    [SCENARIO_TEXT, INVENTORY_TEXT])
        for table, column in (("events", "message"), ("logs", "text")):
            con.execute(f"UPDATE {table} SET {column} = replace({column}, '*****', ?)",
                        [PASSWORD])


async def every_screen(app: LoadtowerApp, pilot: Pilot) -> dict[str, str]:
    """The text of each screen, as the terminal shows it."""
    shown: dict[str, str] = {}
    await settle(pilot)
    assert isinstance(app.screen, RunsScreen) and len(app.screen.runs) == 2
    shown["runs"] = screen_text(pilot)

    app.open_run(RUNS[0])
    await settle(pilot)
    dash = app.screen
    assert isinstance(dash, RunDashboard) and dash.snap is not None
    shown["replay"] = screen_text(pilot)
    await pilot.press("escape")

    app.open_compare(*RUNS)
    await settle(pilot)
    assert isinstance(app.screen, CompareScreen) and app.screen.error is None
    assert app.screen.query_one("#compare-table", DataTable).row_count == 1
    shown["compare"] = screen_text(pilot)
    await pilot.press("escape")

    await pilot.press("2")
    console = app.screen
    assert isinstance(console, SqlScreen)
    for query in QUERIES:
        console.run_query(query)
        await settle(pilot)
        assert console.last_error is None and len(console.last_rows) >= 2, query
        table = console.query_one("#sql-results", DataTable)
        assert table.virtual_size.width <= table.size.width, f"{query}: columns off screen"
        shown[query] = screen_text(pilot)
    return shown


async def test_no_screen_shows_the_password(tmp_path: Path) -> None:
    store = tmp_path / "store.duckdb"
    record(store, tmp_path)
    app = LoadtowerApp(store)
    async with app.run_test(size=WIDE) as pilot:
        shown = await every_screen(app, pilot)
    for name, text in shown.items():
        assert PASSWORD not in text, f"the password is on the {name} screen"
    # what was masked is there, masked: the search looked at the right text
    assert "-p ***** failed on db1" in shown["replay"]  # the warning event
    assert "nodetool -pw ***** status" in shown["replay"]  # the host output pane
    assert 'password = *****' in shown["SELECT * FROM runs"].replace("↵", "\n")
    assert "the cluster's password is *****" in shown["SELECT * FROM runs"]


async def test_the_canary_leak_is_seen(tmp_path: Path) -> None:
    """The same screens over texts stored without redaction: the search finds them."""
    store = tmp_path / "store.duckdb"
    record(store, tmp_path)
    unredact(store)
    app = LoadtowerApp(store)
    async with app.run_test(size=WIDE) as pilot:
        shown = await every_screen(app, pilot)
    assert PASSWORD in shown["replay"]
    assert PASSWORD in shown["SELECT * FROM runs"]
    assert PASSWORD in shown["SELECT * FROM events"] and PASSWORD in shown["SELECT * FROM logs"]
