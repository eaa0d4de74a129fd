"""Waiting for a Textual app under test to finish its work, and reading its screen."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerFailed, WorkerState

SIZE = (120, 36)
WAIT_S = 20.0  # a bound, never a measure: a test waits this long at most, then fails


async def settle(pilot: Pilot, timeout: float = WAIT_S) -> None:
    """Let the app's workers finish and the screen handle what they posted."""
    app = pilot.app
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        await pilot.pause()
        busy = [w for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        screen = app.screen
        stale = (getattr(screen, "up_to_date", True) is False or tables_pending(screen)
                 or footer_pending(screen))
        if not busy and not stale:
            await pilot.pause()
            return
        if loop.time() > deadline:
            raise AssertionError(f"the app is still busy after {timeout:g} s: {busy}")
        for worker in busy:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await asyncio.wait_for(worker.wait(), max(0.1, deadline - loop.time()))
        if stale:
            await pilot.pause(0.02)


def footer_pending(screen: object) -> bool:
    """A footer recomposes after the next refresh once the screen's bindings change (a
    live run that ends hides stop/skip/pause): until then it shows the old keys."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    for footer in screen.query(Footer):  # type: ignore[attr-defined]
        if not footer._bindings_ready:
            continue
        wanted = {binding.action for _node, binding, _on, _tip
                  in screen.active_bindings.values() if binding.show}  # type: ignore[attr-defined]
        shown = {key.action for key in footer.query(FooterKey)
                 if not key.has_class("-command-palette")}
        if shown != wanted:
            return True
    return False


def tables_pending(screen: object) -> bool:
    """A DataTable sizes its columns for new rows and cells on its next idle: until then
    a cell shows cut to its column's old width (a screenshot taken then differs)."""
    from textual.widgets import DataTable

    return any(t._require_update_dimensions or t._updated_cells
               for t in screen.query(DataTable))  # type: ignore[attr-defined]


async def wait_for(pilot: Pilot, predicate: Callable[[], object], what: str,
                   timeout: float = WAIT_S) -> None:
    """Pause until `predicate()` is true (fails naming `what` after `timeout`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await pilot.pause(0.02)


def screen_text(pilot: Pilot) -> str:
    """What the terminal shows, as plain text lines."""
    return "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())
