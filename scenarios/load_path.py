"""What `check` says of the load path each target asks for: one line per target whose
engine has a ``load_path`` hook (scenarios/engine_hooks.py; e.g. the agents'
sender, TLS and the local data centre)."""

from __future__ import annotations

from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.models import Inventory, Scenario, Target


def load_path_lines(scenario: Scenario, inventory: Inventory) -> list[str]:
    """One line per target that runs and whose engine says something of its path."""
    targets: list[tuple[str, str, Target]] = [
        (n, scenario.targets[n].engine, scenario.targets[n]) for n in scenario.target_names()
    ] or [("", scenario.engine, scenario.target)]
    lines = []
    for name, engine, target in targets:
        line = hook(engine, "load_path")
        if line is not None:
            label = f"{name} ({engine})" if name else engine
            lines.append(line(label, target, inventory.credentials(engine)))
    return lines
