"""Pilot tests of the start-a-run modal: validation errors inline, a valid pair shows
the plan and enables Start. Nothing is started here (the sandbox integration test
starts a run from the TUI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, Static

from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.screens.start_run import StartRun
from tests.scenarios.conftest import INVENTORY, SCENARIO
from tests.tui.helpers import SIZE, screen_text, settle

pytestmark = pytest.mark.timeout(60)


async def open_modal(pilot, scenario: str, inventory: str) -> StartRun:
    await settle(pilot)
    await pilot.press("N")
    modal = pilot.app.screen
    assert isinstance(modal, StartRun)
    modal.query_one("#start-scenario", Input).value = scenario
    modal.query_one("#start-inventory", Input).value = inventory
    await pilot.pause()
    return modal


def plan_text(modal: StartRun) -> str:
    return str(modal.query_one("#start-plan", Static).render())


async def test_bad_scenario_file_is_shown_inline(store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(SCENARIO.replace('preset = "ycsb-a"', 'preset = "ycsb-a"\nspeed = "[fast]"')
                   .replace("[dataset]", "[dataset]\nrecords_typo = 3"))
    inventory = tmp_path / "inv.toml"
    inventory.write_text(INVENTORY)
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        modal = await open_modal(pilot, str(bad), str(inventory))
        start = modal.query_one("#start", Button)
        assert start.disabled
        await pilot.click("#validate")
        await settle(pilot)
        text = plan_text(modal)
        assert str(bad) in text and "records_typo" in text  # file and key named
        assert start.disabled and not modal.valid
        assert isinstance(app.screen, StartRun)  # still open, for a fix


async def test_missing_file_is_shown_inline(store: Path, tmp_path: Path) -> None:
    inventory = tmp_path / "inv.toml"
    inventory.write_text(INVENTORY)
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        modal = await open_modal(pilot, str(tmp_path / "nope.toml"), str(inventory))
        await pilot.click("#validate")
        await settle(pilot)
        assert "nope.toml" in plan_text(modal)
        assert modal.query_one("#start", Button).disabled


async def test_valid_files_show_the_plan(store: Path, tmp_path: Path) -> None:
    scenario, inventory = tmp_path / "s.toml", tmp_path / "inv.toml"
    scenario.write_text(SCENARIO)
    inventory.write_text(INVENTORY)
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        modal = await open_modal(pilot, str(scenario), str(inventory))
        await pilot.click("#validate")
        await settle(pilot)
        assert modal.valid
        assert not modal.query_one("#start", Button).disabled
        text = screen_text(pilot)
        assert "Scenario t (cassandra)" in text and "db1" in text
        # editing a field takes the validation back
        modal.query_one("#start-scenario", Input).value = str(scenario) + " "
        await pilot.pause()
        assert not modal.valid and modal.query_one("#start", Button).disabled
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
