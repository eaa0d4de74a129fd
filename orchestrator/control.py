"""Run control: stop, skip to the next phase, pause/resume a phase, steer the load
(``rate``: an open-model phase's total ops/s; ``users``: a closed model's concurrency).

Commands arrive as JSON lines on a UNIX socket (the TUI and `loadtower control` use
it: its path and its client are scenarios/control_api.py's) or from signals: ``{"cmd": "stop"}``, ``{"cmd": "rate", "value": 1000}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from loadtower.errors import LoadtowerError
from loadtower.scenarios.control_api import STEER_COMMANDS
from loadtower.scenarios.private_dir import private_dir

T = TypeVar("T")
# steering: the current phase's handler changes its load (kind, value) and says what it did
Steer = Callable[[str, float], Awaitable[str]]


class RunStopped(LoadtowerError):
    """The operator stopped the run while it was setting up (its reason is the stop's)."""


class RunControl:
    def __init__(self) -> None:
        self.stop_requested = asyncio.Event()
        self.skip_requested = asyncio.Event()
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.reason: str | None = None
        self.history: list[str] = []
        self._on_stop: list[Callable[[], None]] = []
        # set by the phase whose load can be steered (a run phase) while it runs
        self.steer: Steer | None = None

    def handle(self, command: str) -> str:
        handlers = {
            "stop": self.stop,
            "skip_phase": self.skip_requested.set,
            "pause_phase": self.resumed.clear,
            "resume_phase": self.resumed.set,
        }
        action = handlers.get(command)
        if action is None:
            return f"unknown command '{command}' (known: {', '.join(handlers)})"
        action()
        self.history.append(command)
        return "ok"

    async def command(self, command: str, value: object = None) -> str:
        """A command from the socket: the phase commands at once, the steering ones
        (``rate``, ``users`` with a number) by the phase that runs the load."""
        if command not in STEER_COMMANDS:
            return self.handle(command)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"'{command}' needs a number (e.g. {command} 1000)"
        if self.steer is None or self.stop_requested.is_set():
            return f"no phase to steer now: '{command}' changes a run phase's load while it runs"
        reply = await self.steer(command, float(value))
        if reply.startswith("ok"):
            self.history.append(f"{command} {value:g}")
        return reply

    def stop(self, reason: str = "stopped by the operator") -> None:
        """Stop the run: its load at once (the `on_stop` callbacks, on the first stop
        only), then the phase handler ends its phase and the run ends."""
        self.reason = self.reason or reason
        first = not self.stop_requested.is_set()
        self.stop_requested.set()
        self.resumed.set()
        if first:
            for callback in self._on_stop:
                callback()

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call `callback` (synchronous, quick) when the run is stopped; at once when it
        is stopped already."""
        self._on_stop.append(callback)
        if self.stop_requested.is_set():
            callback()

    async def unless_stopped(self, awaitable: Awaitable[T]) -> T:
        """`awaitable`'s result, unless the run is stopped first: then it is cancelled
        and RunStopped is raised (a run stopped while it sets up ends at once)."""
        task = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self.stop_requested.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # this caller is cancelled: nothing of it goes on
            task.cancel()
            raise
        finally:
            stop.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise RunStopped(self.reason or "stopped")

    def new_phase(self) -> None:
        self.skip_requested.clear()

    @property
    def interrupted(self) -> bool:
        return self.stop_requested.is_set() or self.skip_requested.is_set()

    async def sleep(self, seconds: float) -> bool:
        """Sleep unless stopped/skipped (True when the full time passed). Paused time does not count."""
        loop = asyncio.get_running_loop()
        remaining = seconds
        while remaining > 0 and not self.interrupted:
            if not self.resumed.is_set():
                waiter = asyncio.ensure_future(self.resumed.wait())
                stopper = asyncio.ensure_future(self.stop_requested.wait())
                await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                stopper.cancel()
                continue
            start = loop.time()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._either(), timeout=min(remaining, 0.25))
            remaining -= loop.time() - start
        return not self.interrupted

    async def _either(self) -> None:
        stop = asyncio.ensure_future(self.stop_requested.wait())
        skip = asyncio.ensure_future(self.skip_requested.wait())
        try:
            await asyncio.wait({stop, skip}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            skip.cancel()


class ControlServer:
    """A UNIX socket accepting one JSON command per line: {"cmd": "stop"}."""

    def __init__(self, control: RunControl, path: Path) -> None:
        self.control = control
        self.path = path
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        private_dir(self.path.parent)  # made 0700, or refused when someone else's
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._server = await asyncio.start_unix_server(self._client, path=str(self.path))
        self.path.chmod(0o600)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await asyncio.wait_for(reader.readline(), timeout=30):
                value: object = None
                try:
                    message = json.loads(line)
                    command, value = str(message.get("cmd", "")), message.get("value")
                except (ValueError, AttributeError):
                    command = "<malformed>"
                reply = await self.control.command(command, value)
                writer.write((json.dumps({"reply": reply}) + "\n").encode())
                await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
