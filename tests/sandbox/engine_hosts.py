"""The sandbox's engine hosts as the tests ask for them: whichever engines are
registered (an engine package may add one), not a list kept here."""

from __future__ import annotations

from loadtower.sandbox import engine_services


def none_of_the_engines() -> dict[str, bool]:
    """`Sandbox(engines=...)` with every engine host off (--no-NAME for each)."""
    return {svc.name: False for svc in engine_services.services()}


def engine_hosts() -> set[str]:
    """The inventory host names the sandbox's engine services may add (ch1, mongo1, ...)."""
    return {svc.host for svc in engine_services.services()}


def running_engine_hosts(info: dict) -> set[str]:
    """The engine hosts a sandbox's `status --json` says it runs."""
    return {svc.host for svc in engine_services.services()
            if (info.get(svc.name) or {}).get("enabled")}
