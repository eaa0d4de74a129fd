"""The sandbox's engine hosts as the tests ask for them: whichever engines are
registered (an engine package may add one), not a list kept here."""

from __future__ import annotations

from loadtower.sandbox import engine_services


def none_of_the_engines() -> dict[str, bool]:
    """`Sandbox(engines=...)` with every engine host off (--no-NAME for each)."""
    return {svc.name: False for svc in engine_services.services()}
