"""Stores whose every stored text field holds what a careless or hostile source could put
there: terminal escapes (title, clear screen), BEL, CR, NUL, and Rich markup. Written
through the real StoreWriter, with real HDR histograms, so every screen reads them as it
reads any run."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from hdrh.histogram import HdrHistogram

T0 = 1_790_100_000
HOSTILE = "\x1b]0;PWNED\x07x\x1b[2J\r\x00[/][link=x]y[/link][bold]"
RAW_BYTES = ("\x1b", "\x07", "\r", "\x00")  # none of these may reach the screen
HOSTILE_RUN = "20260922-hostile-[/]"
OTHER_RUN = "20260922-other"


@dataclass(frozen=True)
class Texts:
    """What each stored field holds."""

    run_name: str = f"run {HOSTILE}"
    scenario: str = f"scn {HOSTILE}"
    reason: str = f"reason {HOSTILE}"
    phases: tuple[str, str] = (f"load {HOSTILE}", f"run {HOSTILE}")
    host: str = f"host{HOSTILE}"
    agent: str = f"agent{HOSTILE}/0"
    op: str = f"op{HOSTILE}"
    error_class: str = f"Err{HOSTILE}"
    event: str = f"event {HOSTILE}"
    log: str = f"log {HOSTILE}"


def _hist(rng: random.Random, count: int, median_us: float) -> str:
    hist = HdrHistogram(1, 60_000_000, 3)
    for _ in range(max(1, count)):
        hist.record_value(max(1, int(rng.lognormvariate(0, 0.5) * median_us)))
    return hist.encode().decode()


def write_run(writer: object, run_id: str, start: int, texts: Texts, seconds: int = 6,
              status: str = "failed") -> None:
    rng = random.Random(7)
    w = writer  # StoreWriter
    w.start_run(texts.run_name, texts.scenario, f"name = '{texts.scenario}'",  # type: ignore[attr-defined]
                None, {"loadtower": HOSTILE}, {texts.host: {"cpus": 2}}, {},
                run_id=run_id, started=start)
    w.event(run_id, start, "run", texts.event, host=texts.host)  # type: ignore[attr-defined]
    half = seconds // 2
    for index, label in enumerate(texts.phases):
        first, last = (0, half) if index == 0 else (half, seconds)
        w.phase_started(run_id, index, label, "run", start + first, {"type": "run"})  # type: ignore[attr-defined]
        w.event(run_id, start + first, "phase_start", f"phase {label} started", phase=label)  # type: ignore[attr-defined]
        for sec in range(first, last):
            ts = start + sec
            n = 100 + sec
            line = {"type": "interval", "agent": texts.agent, "host": texts.host, "ts": ts,
                    "phase": label, "cpu_pct": 50.0,
                    "ops": {texts.op: {"ops": n, "errors": {texts.error_class: 1}, "late": 0,
                                       "service_hist": _hist(rng, n, 700),
                                       "response_hist": _hist(rng, n, 800)}}}
            w.add_interval(run_id, line)  # type: ignore[attr-defined]
            w.add_agent_sample(run_id, ts, texts.agent, texts.host, 50.0, float(n), texts.event)  # type: ignore[attr-defined]
            w.add_node_sample(run_id, ts, texts.host, 40.0, 8e9, 24e9, 1e6, 5e7, 2e5, 1.8e5)  # type: ignore[attr-defined]
        w.phase_ended(run_id, index, start + last, {"ops": 1})  # type: ignore[attr-defined]
    w.event(run_id, start + 1, "warning", texts.event, host=texts.host, phase=texts.phases[0])  # type: ignore[attr-defined]
    w.event(run_id, start + 2, "fault", texts.event, host=texts.host, phase=texts.phases[0])  # type: ignore[attr-defined]
    w.log(run_id, start + 1, texts.host, "stderr", texts.log)  # type: ignore[attr-defined]
    w.log(run_id, start + 2, texts.host, "stdout", texts.log)  # type: ignore[attr-defined]
    w.end_run(run_id, status, texts.reason, ended=start + seconds)  # type: ignore[attr-defined]


def build_hostile_store(path: Path, texts: Texts = Texts()) -> Path:
    """Two runs (to compare) with `texts` in every stored field."""
    from loadtower.store import StoreWriter

    writer = StoreWriter(path)
    try:
        write_run(writer, HOSTILE_RUN, T0, texts)
        write_run(writer, OTHER_RUN, T0 + 3600, texts, status="completed")
    finally:
        writer.close()
    return path
