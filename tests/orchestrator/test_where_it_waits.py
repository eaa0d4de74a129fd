"""A run that does not end can be asked where it waits (SIGUSR1: its asyncio tasks and
their chains of awaits; SIGUSR2: its threads), and the tests' run helper asks before it
kills one that overstays, so that a hang in CI names what it waited for."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import pytest

from loadtower.orchestrator.where_it_waits import (
    HEADER,
    await_chain,
    describe_tasks,
    dump,
)
from tests.orchestrator.run_helpers import run_argv

HANGS = """
import asyncio
from loadtower.orchestrator.where_it_waits import install

async def waits_for_the_ack(event):
    await event.wait()

async def closes_the_load():
    await waits_for_the_ack(asyncio.Event())

async def main():
    install(asyncio.get_running_loop())
    print("ready", flush=True)
    await closes_the_load()

asyncio.run(main())
"""


async def _inner(event: asyncio.Event) -> None:
    await event.wait()


async def _outer(event: asyncio.Event) -> None:
    await _inner(event)


def test_the_chain_names_each_await_from_the_task_to_the_innermost() -> None:
    async def main() -> list[str]:
        event = asyncio.Event()
        task = asyncio.create_task(_outer(event), name="the-load")
        await asyncio.sleep(0.01)
        chain = list(await_chain(task.get_coro()))
        lines = describe_tasks(asyncio.get_running_loop())
        event.set()
        await task
        return chain + ["--", *lines]

    out = asyncio.run(main())
    chain = out[: out.index("--")]
    assert [step.rsplit(" ", 1)[-1] for step in chain[:3]] == ["_outer", "_inner", "Event.wait"]
    assert chain[-1].startswith("awaiting ")  # the Future the innermost waits on
    assert "task the-load:" in out


def test_dump_writes_the_tasks_then_the_threads() -> None:
    async def main() -> str:
        event = asyncio.Event()
        task = asyncio.create_task(_outer(event), name="the-load")
        await asyncio.sleep(0.01)
        with tempfile.TemporaryFile("w+") as f:  # faulthandler writes to a real file
            dump(asyncio.get_running_loop(), f)
            f.seek(0)
            text = f.read()
        event.set()
        await task
        return text

    text = asyncio.run(main())
    assert text.index("task the-load:") < text.index("_inner") < text.index("threads:")
    assert "most recent call first" in text and text.rstrip().endswith(": end")


def test_a_run_that_overstays_is_asked_where_it_waits_before_it_is_killed(
    tmp_path: Path,
) -> None:
    script = tmp_path / "hangs.py"
    script.write_text(HANGS)
    with pytest.raises(AssertionError) as failed:
        run_argv([sys.executable, "-X", "utf8", str(script)], timeout=5)
    said = str(failed.value)
    assert "did not end within 5 s" in said
    tasks = said[said.index(HEADER):]
    assert tasks.index("closes_the_load") < tasks.index("waits_for_the_ack")
    assert "most recent call first" in said  # the threads' stacks too
