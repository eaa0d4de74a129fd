"""The command palette's own entries: every action of the screen it was opened on, the
app's actions, and the runs of the store (to open one).

Titles and help come from stored data (run names) and key bindings, so they are shown
as plain text, never parsed as markup."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Matcher, Provider
from textual.content import Content
from textual.markup import escape

from loadtower.store.terminal_text import visible
from loadtower.tui.actions import all_actions, run

RUNS_LISTED = 50


def highlight(matcher: Matcher, title: str) -> Content:
    """`title` as plain text, with the letters the query matched highlighted."""
    content = Content(title)
    score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    if score:
        for offset in offsets:
            if not title[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class ActionCommands(Provider):
    """The current screen's actions, the app's, and the store's runs."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        screen = self.screen
        found: list[tuple[str, str, Callable[[], object]]] = [
            (a.title, f"{a.keys}   {a.help}".rstrip(), partial(run, screen, a))
            for a in all_actions(screen)
        ]
        app = self.app
        open_run = getattr(app, "open_run", None)
        if not callable(open_run):
            return found
        for item in getattr(app, "known_runs", [])[:RUNS_LISTED]:
            found.append((visible(f"Open run {item.name} {item.id}", False),
                          visible(item.status, False),
                          partial(open_run, item.id, item.status == "running")))
        return found

    async def discover(self) -> AsyncIterator[DiscoveryHit]:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(Content(title), callback, text=title, help=escape(help_text))

    async def search(self, query: str) -> AsyncIterator[Hit]:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, highlight(matcher, title), callback, text=title,
                          help=escape(help_text))
