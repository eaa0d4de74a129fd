"""Where everything the run produces goes: the store, the live stats, warnings."""

from __future__ import annotations

import time
from typing import Any

from loadtower.agents.spool import SeenSeqs
from loadtower.orchestrator.live_stats import LiveStats
from loadtower.orchestrator.secrets import known_secrets
from loadtower.protocol.hdr_encoding import new_hist
from loadtower.scenarios.plan import Plan
from loadtower.store.hdr import HIGH_VALUES, add_many_counts, release, sparse_counts

AGENT_CPU_WARN = 90.0
# an agent whose open-model ops of a second were sent this late (p99, ms) has fallen behind
# its schedule: the late-op mark (2 ms, docs/agent-protocol.md) is reached by 1 op in 100
AGENT_LATENESS_WARN_MS = 2.0
WARN_EVERY_S = 30.0
ERROR_EVENT_EVERY_S = 30.0  # an error class is announced again after this long without it


class Sinks:
    def __init__(self, writer: Any, run_id: str, plan: Plan) -> None:
        self.writer = writer
        self.run_id = run_id
        self.plan = plan
        self.stats = LiveStats()
        self.phase = ""
        self._last_cpu_warning: dict[str, float] = {}
        self._last_lateness_warning: dict[str, float] = {}
        self._error_seen: dict[str, float] = {}  # error class -> last second it occurred
        self.lines_received = 0
        self.duplicates = 0
        self.seen = SeenSeqs()  # (agent, seq) of the lines stored: live and backfilled
        # host -> its newest node sample's cpu_pct, mem_used_bytes, mem_total_bytes
        self.node_latest: dict[str, dict[str, float]] = {}
        self.secrets = known_secrets(plan)

    def mask(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "*****")
        return text

    def _mask_data(self, data: dict | None) -> dict | None:
        if data is None or not self.secrets:
            return data
        import json

        return json.loads(self.mask(json.dumps(data, default=str)))

    def event(
        self,
        kind: str,
        message: str,
        host: str | None = None,
        data: dict | None = None,
        ts: float | None = None,
        phase: str | None = None,
    ) -> None:
        self.writer.event(
            self.run_id,
            time.time() if ts is None else ts,
            kind,
            message,
            host=host,
            phase=phase or self.phase or None,
            data=data,
        )

    def drain(self, line: dict[str, Any]) -> None:
        """An agent's drain event (at a phase's end it waited for its in-flight ops) as a
        stored event of kind ``drain`` in the phase it drained."""
        raw = line.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        phase = str(data.get("phase") or line.get("phase") or self.phase or "")
        agent = str(line.get("agent") or line.get("worker") or "?")
        host = line.get("host") or (agent.split("/")[0] if "/" in agent else None)
        waited, took = int(data.get("waited_ops") or 0), float(data.get("drain_s") or 0.0)
        abandoned = int(data.get("abandoned") or 0)
        message = (
            f"phase {phase}: agent {agent} waited {took:.2f} s for {waited:,} in-flight ops"
            + (f"; {abandoned:,} did not finish (DrainTimeout errors)" if abandoned else "")
        )
        self.event(
            "drain",
            self.mask(message),
            host=str(host) if host else None,
            data={**data, "phase": phase, "agent": agent},
            phase=phase or None,
        )

    def first_time(self, line: dict[str, Any]) -> bool:
        """False for a line (with the agent's ``seq``) that was stored already. A host's
        merged line (agents/host_merge.py) names the worker lines it holds in ``covers``:
        it is stored only when none of them was (a spool's read may have stored some of
        them alone; the others are still in the spools, for its next read), and then
        marks them all."""
        covers = line.get("covers")
        if covers:
            try:
                pairs = [(str(worker), int(number)) for worker, number in covers]
            except (TypeError, ValueError):
                return True  # not the merger's form: the store says what it keeps of it
            if any(self.seen.known(worker, number) for worker, number in pairs):
                self.duplicates += 1
                return False
            for worker, number in pairs:
                self.seen.add(worker, number)
            return True
        seq = line.get("seq")
        if seq is None:
            return True
        if self.seen.add(str(line.get("agent", "?")), int(seq)):
            return True
        self.duplicates += 1
        return False

    def log(self, host: str, stream: str, text: str) -> None:
        self.writer.log(self.run_id, time.time(), host, stream, self.mask(text))

    def host_state(self, host: str, state: str, detail: str = "") -> None:
        kind = "warning" if state in ("lost", "gave_up") else "host"
        self.event(kind, f"SSH to {host}: {state}" + (f" ({detail})" if detail else ""), host=host)

    def interval(self, line: dict[str, Any], ascii_text: bool = False) -> bool:
        """One agent-protocol interval line (from any agent, live or backfilled from its
        spool); False when it was stored already. `ascii_text`: it was parsed from ASCII
        text without a \\u escape (the store need not look for text that is not UTF-8)."""
        if not self.first_time(line):
            return False
        if not line.get("phase"):
            line = {**line, "phase": self.phase}
            ascii_text = ascii_text and self.phase.isascii()
        self.lines_received += 1
        self.writer.add_interval(self.run_id, line, ascii_text)
        self.stats.add(line)
        self._announce_errors(line)
        agent = str(line.get("agent", "?"))
        cpu = float(line.get("cpu_pct", 0.0))
        ops = sum(int(s.get("ops", 0)) for s in (line.get("ops") or {}).values())
        self.writer.add_agent_sample(
            self.run_id,
            float(line["ts"]),
            agent,
            str(line.get("host", "")),
            cpu,
            float(ops),
            "running",
        )
        self._warn_cpu(line, agent, cpu)
        self._warn_lateness(line, agent)
        return True

    def _warn_lateness(self, line: dict[str, Any], agent: str) -> None:
        """The self-saturation warning from the schedule's side: the line's open-model ops
        (every op type's ``lateness_hist`` merged) were sent more than
        AGENT_LATENESS_WARN_MS after their intended starts at p99. Again for that agent
        only WARN_EVERY_S seconds (of the lines' own clock) after the last one."""
        samples = [s for s in (line.get("ops") or {}).values() if s.get("lateness_hist")]
        if not samples:
            return
        ts = float(line["ts"])
        last = self._last_lateness_warning.get(agent)
        if last is not None and ts - last < WARN_EVERY_S:
            return
        if within_bound(samples):
            return
        texts = [s["lateness_hist"] for s in samples]
        try:  # the line's histograms decoded in one pass
            parts = sparse_counts(texts)
        except (ValueError, TypeError):
            return  # the store says which line's histogram it left out
        # no op of the line later than the bound (a healthy agent's every line): its p99,
        # at most the highest bucket's value, is within it too; no histogram is made
        highest = max((int(HIGH_VALUES[index[-1]]) for index, _c in parts if index.size),
                      default=0)
        if highest / 1000.0 <= AGENT_LATENESS_WARN_MS:
            return
        merged = new_hist()  # the op types' histograms added: no histogram per op
        add_many_counts(merged, parts)
        # read, then freed at once (not at the cyclic collector's next full pass: this
        # runs for every line that carries lateness)
        p99_ms = merged.get_value_at_percentile(99.0) / 1000.0
        p50_ms = merged.get_value_at_percentile(50.0) / 1000.0
        release(merged)
        if p99_ms <= AGENT_LATENESS_WARN_MS:
            return
        self._last_lateness_warning[agent] = ts
        self.event(
            "warning",
            f"agent {agent} sent its ops {p99_ms:.1f} ms after their intended start "
            f"(p99; p50 {p50_ms:.2f} ms): it falls behind its schedule, its latency figures "
            f"are suspect (the loader itself is saturated, or its in-flight limit is reached)",
            host=str(line.get("host", "")),
            data={"agent": agent, "lateness_p50_ms": p50_ms, "lateness_p99_ms": p99_ms},
            ts=ts,
        )

    def _warn_cpu(self, line: dict[str, Any], agent: str, cpu: float) -> None:
        """A warning when an agent is above AGENT_CPU_WARN % CPU; again for that agent
        only WARN_EVERY_S seconds (of the lines' own clock) after the last one."""
        if cpu > AGENT_CPU_WARN:
            ts = float(line["ts"])
            last = self._last_cpu_warning.get(agent)
            if last is None or ts - last >= WARN_EVERY_S:
                self._last_cpu_warning[agent] = ts
                self.event(
                    "warning",
                    f"agent {agent} at {cpu:.0f}% CPU: its latency figures are "
                    f"suspect (the loader itself is saturated)",
                    host=str(line.get("host", "")),
                    data={"agent": agent, "cpu_pct": cpu},
                    ts=ts,
                )

    def _announce_errors(self, line: dict[str, Any]) -> None:
        """An event when an error class appears (again, after 30 s without it)."""
        ts = int(line["ts"])
        counts: dict[str, int] = {}
        for stats in (line.get("ops") or {}).values():
            for name, count in (stats.get("errors") or {}).items():
                counts[name] = counts.get(name, 0) + int(count)
        for name, count in counts.items():
            last = self._error_seen.get(name)
            self._error_seen[name] = max(ts, last or ts)
            if last is None or ts - last > ERROR_EVENT_EVERY_S:
                self.event(
                    "errors",
                    f"{count} {name} errors at agent {line.get('agent', '?')} ("
                    + ("the first in this run" if last is None else "again")
                    + ")",
                    host=str(line.get("host", "")) or None,
                    data={"error": name, "count": count, "agent": line.get("agent"), "ts": ts},
                    ts=float(ts),
                )

    def node_stats(self, host: str, engine: str, data: dict[str, Any]) -> int:
        """The database's own figures of `host` (an engine's ``node_stats`` hook) as rows of
        the store's ``node_stats`` table: nested dicts become dotted names
        (``opcounters_delta.insert``), only numbers are kept (a figure the server did not
        report is no row). ``data["ts"]`` is the reading's time. Returns the rows written."""
        data = dict(data)
        ts = float(data.pop("ts", None) or time.time())
        figures = numeric_figures(data)
        if figures:
            self.writer.node_stats(self.run_id, ts, host, engine, figures)
        return len(figures)

    def node_sample(self, sample: Any) -> None:
        s = sample if isinstance(sample, dict) else sample.__dict__
        self.node_latest[str(s["host"])] = {
            key: float(s[key]) for key in ("cpu_pct", "mem_used_bytes", "mem_total_bytes")
        }
        self.writer.add_node_sample(
            self.run_id,
            float(s["ts"]),
            str(s["host"]),
            float(s["cpu_pct"]),
            int(s["mem_used_bytes"]),
            int(s["mem_total_bytes"]),
            float(s["disk_read_bps"]),
            float(s["disk_write_bps"]),
            float(s["net_rx_bps"]),
            float(s["net_tx_bps"]),
        )


def within_bound(samples: list[dict[str, Any]]) -> bool:
    """Whether the agent says every op's lateness is within AGENT_LATENESS_WARN_MS: each
    sample's ``lateness_max_us`` (its histogram's highest bucket's top, what the decoded
    histogram's highest bucket gives) is there and within the bound. Then no p99 of theirs
    is over it, and the check needs no decode; a sample without the field (an older
    agent) or over the bound is decoded."""
    for sample in samples:
        top = sample.get("lateness_max_us")
        if type(top) is not int or top < 0 or top / 1000.0 > AGENT_LATENESS_WARN_MS:
            return False
    return True


def numeric_figures(data: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """`data`'s numbers by dotted name (nested dicts flattened; bools, text, None left out)."""
    out: dict[str, float] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(numeric_figures(value, f"{name}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = float(value)
    return out
