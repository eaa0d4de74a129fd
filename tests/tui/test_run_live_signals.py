"""`loadtower run` under the live TUI: a SIGINT to it goes on to the run (a child in a
session of its own, which a terminal's signals do not reach) and closes the TUI."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

from loadtower.tui.launch import passed_on

WAIT_S = 30.0  # a bound on waiting for the child, not a measured time


class RecordingApp:
    def __init__(self) -> None:
        self.exits = 0

    def exit(self) -> None:
        self.exits += 1


def test_a_sigint_goes_on_to_the_run_and_closes_the_tui() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             start_new_session=True)
    app = RecordingApp()
    try:
        async def tui() -> list[int]:  # the TUI's loop, running while the signal comes
            with passed_on(child, app) as received:
                os.kill(os.getpid(), signal.SIGINT)
                while app.exits == 0:
                    await asyncio.sleep(0.01)
                return received

        received = asyncio.run(asyncio.wait_for(tui(), WAIT_S))
        assert received == [signal.SIGINT] and app.exits == 1
        assert child.wait(timeout=WAIT_S) == -signal.SIGINT  # the run got it
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=WAIT_S)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
