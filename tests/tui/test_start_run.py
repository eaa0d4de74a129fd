"""Pilot tests of the start-a-run modal: validation errors inline, a valid pair shows
the plan and enables Start. Nothing is started here (the sandbox integration test
starts a run from the TUI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, Select, Static

from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.screens.start_run import StartRun
from loadtower.tui.widgets.file_picker import FilePicker, TomlTree
from tests.scenarios.conftest import INVENTORY, SCENARIO
from tests.tui.helpers import SIZE, screen_text, settle, wait_for

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


async def test_pick_a_builtin_scenario_and_an_inventory_from_the_tree(
    store: Path, tmp_path: Path
) -> None:
    """The built-in list and the directory tree (only folders and .toml files) fill the
    fields; each pick is validated as it comes, no Validate press needed."""
    (tmp_path / "inv.toml").write_text(INVENTORY)
    (tmp_path / "notes.txt").write_text("not a candidate")
    (tmp_path / ".hidden.toml").write_text("")
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "other.toml").write_text("")
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        modal = await open_modal(pilot, "", str(tmp_path / "more"))
        await settle(pilot)
        assert "pick a scenario" in plan_text(modal) and not modal.valid

        builtin = modal.query_one("#start-builtin", Select)
        builtin.value = "ycsb-a"
        await settle(pilot)
        assert modal.query_one("#start-scenario", Input).value == "ycsb-a"
        assert not modal.valid  # the inventory is a folder yet: said inline
        assert "more" in plan_text(modal)

        await pilot.click("#browse-inventory")
        await wait_for(pilot, lambda: isinstance(app.screen, FilePicker), "the file picker")
        picker = app.screen
        tree = picker.query_one(TomlTree)
        assert Path(tree.path) == tmp_path / "more"  # opened where the field points
        await pilot.press("backspace")  # up to tmp_path

        def names() -> list[str]:
            return sorted(str(node.data.path.name) for node in tree.root.children)

        await wait_for(pilot, lambda: names() == ["inv.toml", "more"], "the folder listed")
        inv_line = next(i for i in range(tree.last_line + 1)
                        if tree.get_node_at_line(i).data.path.name == "inv.toml")
        tree.move_cursor_to_line(inv_line)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is modal, "the modal again")
        await settle(pilot)
        assert modal.query_one("#start-inventory", Input).value == str(tmp_path / "inv.toml")
        assert modal.valid and not modal.query_one("#start", Button).disabled
        assert "Scenario ycsb-a (cassandra)" in screen_text(pilot)

        # typing is validated too, once typing stops
        box = modal.query_one("#start-scenario", Input)
        box.focus()
        await pilot.press("ctrl+u", *"nope")  # ctrl+u: clear the field
        assert not modal.valid
        await wait_for(pilot, lambda: modal.up_to_date, "the check after typing")
        assert "nope" in plan_text(modal) and not modal.valid
        assert builtin.value == Select.NULL  # not a built-in name
        box.value = "quickstart"  # a built-in name typed: the list follows
        await settle(pilot)
        assert builtin.value == "quickstart" and modal.valid

        # escape in the picker picks nothing
        await pilot.click("#browse-scenario")
        await wait_for(pilot, lambda: isinstance(app.screen, FilePicker), "the file picker")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is modal, "the modal again")
        assert box.value == "quickstart"


HOSTILE = "\\u001b]0;PWNED\\u0007\\u001b[2J\\r[link=x]y[/link][/]"  # TOML escapes


async def test_hostile_names_in_the_plan_are_shown_as_written(store: Path,
                                                               tmp_path: Path) -> None:
    """A scenario named "x[/]" (and a description with terminal escapes and markup) used
    to end the app at the plan's first repaint; it is shown as plain text."""
    scenario, inventory = tmp_path / "s.toml", tmp_path / "inv.toml"
    scenario.write_text(SCENARIO.replace('name = "t"', f'name = "x[/]"\ndescription = "{HOSTILE}"'))
    inventory.write_text(INVENTORY)
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        modal = await open_modal(pilot, str(scenario), str(inventory))
        await pilot.click("#validate")
        await settle(pilot)
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, StartRun)
        assert modal.valid
        text = screen_text(pilot)
        assert "Scenario x[/] (cassandra)" in text
        assert "\\x1b]0;PWNED" in plan_text(modal)
        for byte in ("\x1b", "\x07", "\r", "\x00"):
            assert byte not in text and byte not in plan_text(modal)


def test_plan_lines_are_never_read_as_markup() -> None:
    from loadtower.tui.screens.start_run import lines_text

    shown = lines_text(["Scenario x[/] [link=x]y[/link]", "| [bold]a[/]\x1b[2J |"]).plain
    assert "Scenario x[/]" in shown and "[link=x]y[/link]" in shown
    assert "[bold]a[/]\\x1b[2J" in shown and "\x1b" not in shown


async def test_file_names_in_the_picker_are_plain_text(store: Path, tmp_path: Path) -> None:
    """A file named "x[bold]y.toml" (Tree reads names as markup: shown "xy", bold) or with an escape in it."""
    (tmp_path / "x[bold]y.toml").write_text("")
    (tmp_path / "t\x1b[2J.toml").write_text("")
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        modal = await open_modal(pilot, str(tmp_path / "x[bold]y.toml"), "")
        await settle(pilot)
        await pilot.click("#browse-scenario")
        await wait_for(pilot, lambda: isinstance(app.screen, FilePicker), "the file picker")
        tree = app.screen.query_one(TomlTree)
        await wait_for(pilot, lambda: len(tree.root.children) == 2, "the folder listed")
        await pilot.pause()
        text = screen_text(pilot)
        assert app.is_running and "x[bold]y.toml" in text and "t\\x1b[2J.toml" in text
        assert "\x1b" not in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is modal, "the modal again")
