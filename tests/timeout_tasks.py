"""pytest-timeout, when a test overstays, prints every thread's stack; a test stuck
inside asyncio shows only the event loop's `select`. This adds the loop's tasks with the
chain of awaits each is suspended in (orchestrator/where_it_waits.py), so
that a hang names what it waited for."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest_timeout

from loadtower.orchestrator.where_it_waits import describe_tasks


def with_tasks(dump: Any) -> Any:
    def dump_stacks(terminal: Any) -> None:
        dump(terminal)
        loop = asyncio._get_running_loop()  # the loop the timed-out test runs, if any
        if loop is None:
            return
        terminal.sep("~", title="asyncio tasks of the running loop")
        for line in describe_tasks(loop):
            terminal.write(line + "\n")

    dump_stacks.wrapped = True  # type: ignore[attr-defined]
    return dump_stacks


def install() -> None:
    if not getattr(pytest_timeout.dump_stacks, "wrapped", False):
        pytest_timeout.dump_stacks = with_tasks(pytest_timeout.dump_stacks)
