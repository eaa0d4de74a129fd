"""Where a run waits, on request: ``kill -USR1 PID`` makes a running ``loadtower run``
print, to its stderr, every asyncio task of the run with the chain of awaits it is
suspended in (file, line, function: innermost last), then every thread's stack; ``kill
-USR2 PID`` prints the threads' stacks alone, from the interpreter's C handler, so that
it answers even when the event loop's thread is stuck in a call. A run that does not
end can so be asked what it waits for before it is killed; the
integration tests' run helpers do so when a run overstays its time
(tests/orchestrator/run_helpers.py). Nothing else changes: the run goes on."""

from __future__ import annotations

import asyncio
import faulthandler
import signal
import sys
from collections.abc import Iterator
from typing import Any, TextIO

SIGNAL = signal.SIGUSR1
THREADS_SIGNAL = signal.SIGUSR2
HEADER = "loadtower run: where it waits (SIGUSR1)"


def await_chain(coro: Any) -> Iterator[str]:
    """``file:line function`` for each coroutine (or generator) frame of the chain a
    suspended coroutine awaits, outermost first; then what the innermost awaits, when
    it is not a coroutine (a Future, a Task: its repr)."""
    seen = 0
    while coro is not None and seen < 200:
        seen += 1
        frame = (getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
                 or getattr(coro, "ag_frame", None))
        if frame is None:
            if not hasattr(coro, "cr_code") and not hasattr(coro, "gi_code"):
                yield f"awaiting {_short(repr(coro))}"
            return
        code = frame.f_code
        yield f"{code.co_filename}:{frame.f_lineno} {code.co_qualname}"
        coro = (getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
                or getattr(coro, "ag_await", None))


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_tasks(loop: asyncio.AbstractEventLoop) -> list[str]:
    """One block of lines per unfinished task of ``loop``: its name, then its chain."""
    out: list[str] = []
    for task in sorted(asyncio.all_tasks(loop), key=lambda t: t.get_name()):
        out.append(f"task {task.get_name()}:")
        out.extend(f"    {step}" for step in await_chain(task.get_coro()))
    return out


def dump(loop: asyncio.AbstractEventLoop, out: TextIO | None = None) -> None:
    stream = out if out is not None else sys.stderr
    lines = [HEADER, *describe_tasks(loop), "threads:"]
    stream.write("\n".join(lines) + "\n")
    stream.flush()
    try:
        faulthandler.dump_traceback(file=stream, all_threads=True)
    except (AttributeError, OSError, ValueError):  # not a real file: the tasks are said
        stream.write("(the threads' stacks need a real file)\n")
    stream.write(f"{HEADER}: end\n")
    stream.flush()


def install(loop: asyncio.AbstractEventLoop) -> None:
    """SIGUSR1 prints where the run waits (on the loop's thread, between its steps);
    SIGUSR2 the threads' stacks at once."""
    loop.add_signal_handler(SIGNAL, dump, loop)
    try:  # the C handler needs a real file: not a captured or replaced stderr
        faulthandler.register(THREADS_SIGNAL, file=sys.stderr, all_threads=True)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        pass


def uninstall(loop: asyncio.AbstractEventLoop) -> None:
    loop.remove_signal_handler(SIGNAL)
    faulthandler.unregister(THREADS_SIGNAL)  # False (no error) when it was not registered
