"""The agent protocol's version: bumped when a line, command or spec changes meaning."""

from __future__ import annotations

# 1: the untyped dicts before this room existed; 3: the spec's connection.tls and
# target.local_dc / replication (an agent of 2 would ignore them and connect in plain);
# 4: signed worker messages, password_ref / tls.key_ref instead of the secrets; 5: interval
# lines as their JSON text (`lt_interval`, protocol/interval_message.py)
PROTOCOL_VERSION = 5


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
