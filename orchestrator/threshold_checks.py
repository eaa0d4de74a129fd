"""A run's ``[[thresholds]]`` judged at the end of each phase, from the figures its result
and phase_summary give (``LiveStats.phase``), and live for the ones with ``abort = true``.

Each verdict is a row of the store's ``threshold_results`` and a ``threshold`` event; a
breach found live stops the run. The headless run exits 1 with one line per breach
(``headless_session.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from loadtower.orchestrator.context import PhaseContext
from loadtower.scenarios.models import Threshold
from loadtower.scenarios.thresholds import Verdict, applies, judge

LIVE_EVERY_S = 1.0  # the live check looks at the phase's figures so far this often


@dataclass
class ThresholdChecks:
    thresholds: list[Threshold]
    verdicts: list[Verdict] = field(default_factory=list)
    aborted: Verdict | None = None  # the live breach that stopped the run

    @property
    def breaches(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.passed]

    def _record(self, ctx: PhaseContext, verdict: Verdict) -> None:
        self.verdicts.append(verdict)
        now = ctx.clock()
        ctx.store.threshold_result(ctx.run_id, now, verdict.row())
        ctx.event("threshold", f"threshold {verdict.line()}", data=verdict.row())

    def phase_ended(
        self, ctx: PhaseContext, label: str, scenario_label: str, clock: tuple[float, float]
    ) -> list[Verdict]:
        """Judge the thresholds of the phase that just ended (`label`: its stored label,
        with a target's prefix; `scenario_label`: its label in the scenario). A threshold
        without phase judges only the phases that measured ops."""
        out = []
        for threshold in self.thresholds:
            if not applies(threshold, scenario_label):
                continue
            if self.aborted is not None and self.aborted.threshold is threshold:
                continue  # its live breach is its verdict in this phase
            figures = ctx.stats.phase(label, threshold.op, clock=clock)
            if threshold.phase is None and not figures.ops:
                continue
            verdict = judge(threshold, label, figures)
            self._record(ctx, verdict)
            out.append(verdict)
        return out

    def live(self, ctx: PhaseContext, label: str, scenario_label: str) -> asyncio.Task[None] | None:
        """A task checking the phase's abort thresholds until cancelled; None without any."""
        watched = [t for t in self.thresholds if t.abort and applies(t, scenario_label)]
        if not watched:
            return None
        return asyncio.create_task(self._watch(ctx, label, watched))

    async def _watch(self, ctx: PhaseContext, label: str, watched: list[Threshold]) -> None:
        started = ctx.clock()
        while not ctx.control.stop_requested.is_set():
            await asyncio.sleep(LIVE_EVERY_S)
            elapsed = ctx.clock() - started
            for threshold in watched:
                if elapsed < threshold.abort_after:
                    continue
                figures = ctx.stats.phase(label, threshold.op)
                if not figures.ops:
                    continue
                verdict = judge(threshold, label, figures, live=True)
                if not verdict.passed:
                    self.aborted = verdict
                    self._record(ctx, verdict)
                    ctx.control.stop(f"threshold breached: {verdict.line()}")
                    return

    @staticmethod
    async def stop(task: asyncio.Task[None] | None) -> None:
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
