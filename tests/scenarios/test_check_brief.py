"""`loadtower check --brief` (what `loadtower demo` prints before its run): the plan's
hosts and phases, without each workload's DDL, statements and bindings table."""

from __future__ import annotations

from loadtower.cli import main

from .conftest import INVENTORY


def _check(write, capsys, *extra: str) -> str:
    inv = write("inv.toml", INVENTORY)
    assert main(["check", "quickstart", "-i", str(inv), *extra]) == 0
    return capsys.readouterr().out


def test_brief_leaves_out_the_workload_details(write, capsys) -> None:
    full, brief = _check(write, capsys), _check(write, capsys, "--brief")
    assert "CREATE TABLE" in full and "CREATE TABLE" not in brief
    for line in ("Scenario quickstart", "ycsb-a", "are valid"):
        assert line in full and line in brief
    assert len(brief.splitlines()) < len(full.splitlines()) / 2
