"""How each kind of run event looks: its glyph on the timeline bar and in the event
list, its style, and which one wins when several fall into one cell of the bar."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    glyph: str
    style: str  # a Rich style: for the glyph, and for the message in the event list
    rank: int  # the higher one is drawn where events share a cell
    label: str  # in the timeline's legend


KINDS: dict[str, Kind] = {
    "fault": Kind("×", "bold red", 9, "fault"),
    "errors": Kind("×", "red", 8, "errors"),
    "error": Kind("×", "bold red", 8, "error"),  # an agent's, the master's: the run may end on it
    "warning": Kind("!", "bold yellow", 7, "warning"),
    "scale_out": Kind("+", "bold magenta", 6, "scale-out"),
    "rate_change": Kind("⇅", "bold bright_cyan", 6, "rate change"),  # steered by the operator
    "users_change": Kind("⇅", "bold bright_cyan", 6, "users change"),
    "compaction": Kind("≡", "bold blue", 5, "compaction"),
    "flush": Kind("≡", "blue", 5, "flush"),
    "action": Kind("•", "magenta", 4, "action"),
    "ramp_result": Kind("•", "bold green", 3, "ramp"),
    "ramp_step": Kind("·", "green", 2, "ramp step"),
    "search_result": Kind("•", "bold green", 3, "search"),
    "search_step": Kind("·", "green", 2, "search step"),
    "phase_start": Kind("│", "cyan", 1, "phase"),
    "phase_end": Kind("│", "cyan", 1, "phase end"),
    "run": Kind("■", "bold", 1, "run"),
}
OTHER = Kind("·", "dim", 0, "other")


def kind(name: str) -> Kind:
    return KINDS.get(name, OTHER)
