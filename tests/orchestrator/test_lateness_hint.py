"""The agents' `lateness_max_us` beside each `lateness_hist` (agents/measure.py), and the
orchestrator's self-saturation check that reads it instead of decoding the histogram
(orchestrator/sinks.py `within_bound`): the hint is exactly the decoded histogram's
highest bucket top, a line within the bound is settled by it, and anything else (no
hint, a wrong type, a value over the bound) goes through the decode as before."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from loadtower.agents.measure import IntervalRecorder
from loadtower.orchestrator import sinks as sinks_module
from loadtower.orchestrator.sinks import AGENT_LATENESS_WARN_MS, Sinks, within_bound
from loadtower.store.hdr import HIGH_VALUES, sparse_counts


def _recorded(lateness_s: list[float]) -> dict[str, Any]:
    """One open-model op type's sample whose ops were sent these many seconds late."""
    rec = IntervalRecorder("h/0", "h")
    rec.phase = "p"
    base = 100.0
    for i, late in enumerate(lateness_s):
        intended = base + i * 1e-4
        rec.ok("p", "read", intended, intended + late, intended + late + 0.001, False,
               open_model=True)
    lines = rec.flush("p")
    return dict(lines[0]["ops"]["read"])


@pytest.mark.parametrize("seed", range(6))
def test_the_hint_is_the_decoded_histograms_highest_bucket_top(seed: int) -> None:
    rng = random.Random(seed)
    # from under a microsecond (counted as 1 us) to past the 60 s clamp
    spread = [rng.choice([1e-7, 1e-6, 3e-5, 2e-3, 0.5, 61.0]) * rng.random()
              for _ in range(rng.randint(1, 300))]
    sample = _recorded(spread)
    [(index, _count)] = sparse_counts([sample["lateness_hist"]])
    assert sample["lateness_max_us"] == int(HIGH_VALUES[index[-1]])
    assert type(sample["lateness_max_us"]) is int


def test_within_bound_takes_only_a_whole_set_of_good_hints() -> None:
    bound_us = int(AGENT_LATENESS_WARN_MS * 1000)
    ok = {"lateness_hist": "x", "lateness_max_us": bound_us}
    assert within_bound([ok, ok])
    assert not within_bound([ok, {"lateness_hist": "x"}])  # an older agent's sample
    assert not within_bound([{"lateness_hist": "x", "lateness_max_us": bound_us + 1}])
    for wrong in (True, -1, 1.5, "10", None):
        assert not within_bound([{"lateness_hist": "x", "lateness_max_us": wrong}])


def test_the_check_decodes_only_when_the_hints_do_not_settle_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[int] = []
    real = sinks_module.sparse_counts
    monkeypatch.setattr(sinks_module, "sparse_counts",
                        lambda texts: decoded.append(len(texts)) or real(texts))
    events: list[str] = []
    sinks = SimpleNamespace(
        _last_lateness_warning={}, event=lambda kind, text, **_: events.append(text))

    def check(ts: int, samples: dict[str, dict[str, Any]]) -> None:
        Sinks._warn_lateness(sinks, {"ts": ts, "ops": samples}, "a/0")  # type: ignore[arg-type]

    quiet = _recorded([1e-4] * 50)  # every op 0.1 ms late
    check(1, {"read": quiet, "update": quiet})
    assert decoded == [] and events == []
    # the same histograms from an agent without the hint: decoded, still no warning
    bare = {k: v for k, v in quiet.items() if k != "lateness_max_us"}
    check(2, {"read": bare, "update": quiet})
    assert decoded == [2] and events == []
    # one op type a tenth 5 ms late: over the bound by its hint, warned by its p99
    late = _recorded([1e-4] * 90 + [5e-3] * 10)
    assert late["lateness_max_us"] > AGENT_LATENESS_WARN_MS * 1000
    check(3, {"read": quiet, "update": late})
    assert decoded == [2, 2] and len(events) == 1 and "5.0 ms after" in events[0], events
    # a hint that says "within" for a histogram that is not is believed: the agent's own
    # figure of its own histogram (the field is the agents', like the histogram itself)
    lying = {**late, "lateness_max_us": 10}
    check(100, {"read": lying})
    assert decoded == [2, 2] and len(events) == 1
