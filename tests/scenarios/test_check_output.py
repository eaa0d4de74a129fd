"""`loadtower check`'s plan output: names from a file are plain text (never markup, no
link), control characters are spelled out (no ESC, BEL or CR reaches the terminal),
tables never cut a name."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from loadtower.cli import main
from loadtower.scenarios.plan import load_plan, render_plan

from .conftest import INVENTORY, SCENARIO


def check_output(write, name: str, capsys) -> str:
    text = SCENARIO.replace('name = "t"', f"name = {json.dumps(name)}")
    s, i = write("s.toml", text), write("inv.toml", INVENTORY)
    assert main(["check", str(s), "-i", str(i)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return out.out


def test_markup_in_a_name_is_shown_as_written(write, capsys) -> None:
    out = check_output(write, "x[/]", capsys)
    assert "Scenario x[/] (cassandra)" in out
    out = check_output(write, "[link=https://evil.example]click[/link] [bold red]b", capsys)
    assert "Scenario [link=https://evil.example]click[/link] [bold red]b (cassandra)" in out


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),
        ("\x1b[2J", "\\x1b[2J"),
        ("a\rb", "a\\x0db"),
        ("\x9b31m", "\\x9b31m"),
        ("\u202eevil", "\\u202eevil"),
    ],
)
def test_control_characters_are_spelled_out(write, capsys, raw: str, shown: str) -> None:
    out = check_output(write, f"n{raw}", capsys)
    for byte in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
        assert byte not in out
    assert f"Scenario n{shown} (cassandra)" in out


def test_on_a_terminal_no_link_and_no_raw_escape_from_a_name(write) -> None:
    name = "[link=https://evil.example]x[/link]\x1b]8;;https://evil.example\x07y"
    text = SCENARIO.replace('name = "t"', f"name = {json.dumps(name)}")
    plan = load_plan(write("s.toml", text), write("inv.toml", INVENTORY))
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=400, color_system="truecolor").print(
        render_plan(plan)
    )
    out = buffer.getvalue()
    assert "\x1b]8;" not in out and "\x07" not in out  # no OSC 8 hyperlink, no BEL
    assert "\\x1b]8;;https://evil.example\\x07y" in out


def test_a_long_name_is_never_cut_when_piped(write, capsys) -> None:
    name = "phase-" + "x" * 300 + "-end"
    text = SCENARIO.replace('type = "load"', f'type = "load"\nname = "{name}"')
    s, i = write("s.toml", text), write("inv.toml", INVENTORY)
    assert main(["check", str(s), "-i", str(i)]) == 0
    assert name in capsys.readouterr().out


def test_an_error_quoting_a_key_with_control_characters_is_one_line(write, capsys) -> None:
    text = SCENARIO.replace("records = 1000", 'records = 1000\n"rec\\nords\\u001b[2J" = 5')
    s, i = write("s.toml", text), write("inv.toml", INVENTORY)
    assert main(["check", str(s), "-i", str(i)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err
    assert "key 'dataset.rec\\x0aords\\x1b[2J': unknown key" in err
