"""The phase labels of a ramp's steps, and the way back from a step to its ramp.

Each step of a ramp runs under its own phase label, ``RAMP@LEVEL``: the ramp's label,
``@`` and the level the step asked for (ops/s with ``rates``, users with ``users``),
e.g. ``saturation@40`` or ``east:saturation@400`` (a target's ramp). A level asked twice in one ramp
gets the step's number too (``saturation@40#3``). The labels are stable (the same
scenario gives the same labels in every run, so ``compare`` pairs the steps of two
runs) and the store keeps one op_phase/phase_summary row per step and op.

The ramp itself keeps its one ``phases`` row (its clock, its result); the steps are
found from the ramp's result (``steps[].label``) or, for a label alone, by
``ramp_of``.
"""

from __future__ import annotations

from collections.abc import Collection

SEP = "@"


def step_label(ramp: str, level: float, number: int, taken: set[str] | None = None) -> str:
    """The label of step `number` (1-based) at `level` of the ramp labelled `ramp`."""
    label = f"{ramp}{SEP}{level:g}"
    if taken is not None and label in taken:
        label = f"{label}#{number}"
    return label


def ramp_of(label: str, phases: Collection[str]) -> str | None:
    """The ramp (one of `phases`, the run's phase names) that `label` is a step of."""
    if label in phases or SEP not in label:
        return None
    ramp = label.rsplit(SEP, 1)[0]
    return ramp if ramp in phases else None
