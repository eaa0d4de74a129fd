"""The agent protocol's version: bumped when a line, command or spec changes meaning."""

from __future__ import annotations

PROTOCOL_VERSION = 2  # 1: the untyped dicts before this room existed


def mismatch(side: str, got: object) -> str | None:
    """One line naming both versions when `got` (what `side` speaks) is not ours;
    None when they match. A missing version (None) is version 1."""
    theirs = 1 if got is None else got
    if theirs == PROTOCOL_VERSION:
        return None
    return (
        f"agent protocol mismatch: {side} speaks version {theirs}, this process "
        f"{PROTOCOL_VERSION}; install the same loadtower build on both"
    )
