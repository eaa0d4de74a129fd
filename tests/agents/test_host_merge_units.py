"""A host's merged interval line (agents/host_merge.py) and the merger's buffer."""

from __future__ import annotations

from typing import Any

from loadtower.agents.host_merge import HostMerger, merge_lines, merged_agent
from loadtower.protocol.hdr_encoding import decode, encode, new_hist


def _hist(*values: int) -> str:
    hist = new_hist()
    for value in values:
        hist.record_value(value)
    return encode(hist)


def _line(agent: str, ts: int, seq: int, values: tuple[int, ...], **extra: Any) -> Any:
    sample: dict[str, Any] = {"ops": len(values), "errors": {}, "late": 0,
                              "service_hist": _hist(*values), "response_hist": _hist(*values)}
    sample.update(extra.pop("sample", {}))
    line = {"type": "interval", "agent": agent, "host": "h", "ts": ts, "phase": "run",
            "cpu_pct": 10.0, "cpu_s": 0.1, "span": [ts - 0.5, ts + 0.9],
            "ops": {"read": sample}, "seq": seq}
    line.update(extra)
    return line


def test_a_merged_line_adds_counts_and_histograms_and_names_what_it_covers() -> None:
    a = _line("h/0", 100, 7, (100, 200, 300), cpu_pct=80.0, cpu_s=0.8, span=[99.2, 100.5],
              sample={"errors": {"Timeout": 2}, "late": 1,
                      "lateness_hist": _hist(50, 4000), "lateness_max_us": 4001})
    b = _line("h/1", 100, 3, (5000, 7), cpu_pct=30.0, cpu_s=0.3, span=[99.0, 100.2],
              sample={"errors": {"Timeout": 1, "Unavailable": 4}})
    merged = merge_lines("h", [a, b])
    assert merged["agent"] == merged_agent("h") == "h/*"
    assert (merged["ts"], merged["phase"], merged["host"]) == (100, "run", "h")
    assert merged["cpu_pct"] == 80.0  # the busiest worker's (the saturation check's figure)
    assert merged["cpu_s"] == 1.1
    assert merged["span"] == [99.0, 100.5]
    assert merged["covers"] == [["h/0", 7], ["h/1", 3]]  # type: ignore[typeddict-item]
    assert merged["workers"] == 2  # type: ignore[typeddict-item]
    assert "seq" not in merged  # it is in no spool: its parts are
    op = merged["ops"]["read"]
    assert (op["ops"], op["late"], op["errors"]) == (5, 1, {"Timeout": 3, "Unavailable": 4})
    expected = decode(_hist(100, 200, 300))
    expected.add(decode(_hist(5000, 7)))
    for name in ("service_hist", "response_hist"):
        got = decode(op[name])  # type: ignore[literal-required]
        assert got.total_count == 5
        for q in (1.0, 50.0, 99.0, 100.0):
            assert got.get_value_at_percentile(q) == expected.get_value_at_percentile(q)
    # one worker had open-model sends in it: its lateness as it came, with its top
    assert op["lateness_hist"] == a["ops"]["read"]["lateness_hist"]
    assert op["lateness_max_us"] == 4001


def test_an_op_only_one_worker_had_keeps_its_encoding() -> None:
    a = _line("h/0", 5, 1, (10,))
    b = _line("h/1", 5, 1, (20,))
    b["ops"] = {"write": b["ops"]["read"]}
    merged = merge_lines("h", [a, b])
    assert merged["ops"]["read"]["service_hist"] == a["ops"]["read"]["service_hist"]
    assert merged["ops"]["write"]["service_hist"] == b["ops"]["write"]["service_hist"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_second_goes_once_every_worker_has_passed_it() -> None:
    clock = Clock()
    merger = HostMerger("h", bound_s=1.0, clock=clock)
    for worker in ("h/0", "h/1", "h/2"):
        merger.join(worker)
    assert merger.add("h/0", _line("h/0", 10, 1, (1,)), "t0") == []
    assert merger.add("h/1", _line("h/1", 10, 1, (2,)), "t1") == []
    # h/2 is at second 11 already (it had nothing in 10): 10 is complete
    out = merger.add("h/2", _line("h/2", 11, 1, (3,)), "t2")
    assert [(o.line["ts"], o.tokens) for o in out] == [(10, ["t0", "t1"])]
    assert out[0].line["covers"] == [["h/0", 1], ["h/1", 1]]  # type: ignore[typeddict-item]
    assert merger.pending() == 1


def test_a_stalled_worker_delays_its_hosts_second_by_the_bound_at_most() -> None:
    clock = Clock()
    merger = HostMerger("h", bound_s=1.0, clock=clock)
    merger.join("h/0")
    merger.join("h/1")
    assert merger.add("h/0", _line("h/0", 10, 1, (1,)), "a") == []
    clock.now = 0.9
    assert merger.due() == []
    clock.now = 1.0
    out = merger.due()
    assert [o.tokens for o in out] == [["a"]]
    assert out[0].line["agent"] == "h/*"  # one part: the host's form all the same
    # its part comes late: a line of its own for the same second, at once
    late = merger.add("h/1", _line("h/1", 10, 1, (2,)), "b")
    assert [(o.line["ts"], o.tokens, o.line["covers"]) for o in late] == [  # type: ignore[typeddict-item]
        (10, ["b"], [["h/1", 1]])]


def test_a_worker_that_leaves_no_longer_holds_a_second_back() -> None:
    merger = HostMerger("h", bound_s=60.0, clock=Clock())
    merger.join("h/0")
    merger.join("h/1")
    assert merger.add("h/0", _line("h/0", 10, 1, (1,)), "a") == []
    assert [o.tokens for o in merger.leave("h/1")] == [["a"]]


def test_flushing_a_worker_sends_every_second_holding_its_parts() -> None:
    merger = HostMerger("h", bound_s=60.0, clock=Clock())
    merger.join("h/0")
    merger.join("h/1")
    merger.add("h/1", _line("h/1", 10, 1, (1,)), "a")
    merger.add("h/1", _line("h/1", 11, 2, (1,)), "b")
    merger.add("h/0", _line("h/0", 12, 1, (1,)), "c")  # only h/0's: stays
    # second 10 and 11 are complete now? h/0 passed them (12), h/1 too: they went already
    assert merger.pending() == 1
    # h/1 passes 12 too: it goes; 13 waits for h/0
    assert [o.tokens for o in merger.add("h/1", _line("h/1", 13, 3, (1,)), "d")] == [["c"]]
    merger.add("h/1", _line("h/1", 14, 4, (1,)), "e")
    out = merger.flush_worker("h/1")  # h/1's next line is not an interval line
    assert [(o.line["ts"], o.tokens) for o in out] == [(13, ["d"]), (14, ["e"])]
    assert merger.flush_all() == []
    assert merger.pending() == 0
