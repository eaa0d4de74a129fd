"""The open model's schedule alone: how late each op is sent (send - intended start), no
database (issue 33; docs/agent-protocol.md, "Sending on time").

The Rust core's clock over local no-op sends (``Core.start_echo``: the same clock,
spawn and recorder as its real ops) and the agent's Python lane over a no-op op, each at
--rate ops/s for --seconds: lateness p50 / p99 / p99.9 / max (us, from the merged
per-second lateness histograms the interval lines carry) and the process CPU the
schedule used (the core's spin before each deadline costs CPU: --spin-us 0 turns it off).
The goal (issue 33): lateness p99 < 0.2 ms on an idle machine at 1,000 ops/s. `floor`
measures the machine itself with two schedules that do no work: one that spins a whole
core (no schedule can beat it; it also counts how often the thread loses the CPU for over
0.2 ms: on a VM, the host's steal) and one that sleeps to each intended start (the
machine's wake-up latency, which any schedule that does not spin all the time pays).

The machine is shared and noisy: say its load average with the figures.

usage: python bench/schedule_lateness.py [--rate 1000] [--seconds 10] [--spin-us 50]
                                         [--paths core,python,floor] [--json]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import resource
import time
from typing import Any

from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.agents.measure import decode_v2
from loadtower.agents.workload.keys import OpMix
from loadtower.protocol.hdr_encoding import decode, new_hist

PR_SET_TIMERSLACK = 29
WAIT_S = 30.0  # a bound on waiting for a stop, not a measured time


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def figures(hist: Any, ops: int, cpu: float, seconds: float) -> dict[str, Any]:
    return {
        "ops": ops,
        "lateness_p50_us": hist.get_value_at_percentile(50.0),
        "lateness_p99_us": hist.get_value_at_percentile(99.0),
        "lateness_p999_us": hist.get_value_at_percentile(99.9),
        "lateness_max_us": hist.get_max_value(),
        "cpu_pct": round(100.0 * cpu / seconds, 1),
    }


def core_run(rate: float, seconds: float, spin_us: int) -> dict[str, Any]:
    import loadtower_core

    core = loadtower_core.Core()
    core.set_spin_us(spin_us)
    before = cpu_s()
    core.start_echo(rate, 0)
    time.sleep(seconds)
    core.stop(WAIT_S)
    used = cpu_s() - before
    hist, ops = new_hist(), 0
    for _second, _op, sample in core.harvest(2**40, True):
        if sample.get("lateness"):  # none in a second without a send
            hist.add(decode_v2(sample["lateness"]))
        ops += sample["ops"]
    return figures(hist, ops, used, seconds)


def python_run(rate: float, seconds: float) -> dict[str, Any]:
    lines: list[dict[str, Any]] = []
    engine = DriverLoop("bench/0", "bench", out=lines.append)
    engine.start()
    cfg = PhaseConfig(phase="run", mode="run", spec={}, contact_points=[], port=None,
                      username=None, password=None, driver="auto", lane_rate=rate,
                      max_in_flight=128)

    async def noop() -> None:
        return None

    async def begin() -> None:
        engine.ops = {"echo": noop}
        engine.mix = OpMix({"echo": 1.0}, random.Random(1))
        engine.begin_phase(cfg)

    try:
        engine.call(begin(), WAIT_S)
        before = cpu_s()
        engine.add_lane(1)
        time.sleep(seconds)
        engine.stop_lanes().result(WAIT_S)
        used = cpu_s() - before
    finally:
        engine.shutdown(WAIT_S)
    hist, ops = new_hist(), 0
    for line in lines:
        if line.get("type") == "interval":
            for s in line["ops"].values():
                ops += s["ops"]
                if s.get("lateness_hist"):
                    hist.add(decode(s["lateness_hist"]))
    return figures(hist, ops, used, seconds)


def precise_timers() -> None:
    """This thread's timer slack down to 1 us, as the core's clock thread has it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the default slack


def floor_run(rate: float, seconds: float) -> dict[str, Any]:
    """What the machine itself allows, two schedules with no work to do, each --seconds:

    - `spinning`: a loop that only reads the clock (a whole core) and sends (records) each
      op of the --rate schedule at its first read at or after the op's intended start. It
      also counts the gaps between its reads (time the thread was not running: the kernel
      or, in a VM, the host ran something else). No schedule beats it.
    - `sleeping`: a thread that sleeps to each intended start (nanosleep, 1 us timer
      slack) and sends on waking: the wake-up latency any schedule that does not spin
      through its whole interval pays, in part."""
    gaps_200 = gaps_1000 = 0
    widest = 0
    spun = new_hist()
    now = time.perf_counter_ns
    interval = int(1e9 / rate)
    start = previous = now()
    due = start + interval
    end = start + int(seconds * 1e9)
    before = cpu_s()
    while previous < end:
        t = now()
        gap = t - previous
        previous = t
        if gap > 200_000:
            gaps_200 += 1
            gaps_1000 += gap > 1_000_000
            widest = max(widest, gap)
        while due <= t:
            spun.record_value(max(1, (t - due) // 1000))
            due += interval
    spin_cpu = cpu_s() - before
    precise_timers()
    slept = new_hist()
    before = cpu_s()
    due = now() + interval
    end = due + int(seconds * 1e9)
    while due < end:
        t = now()
        if due > t:
            time.sleep((due - t) / 1e9)
        slept.record_value(max(1, (now() - due) // 1000))
        due += interval
    sleep_cpu = cpu_s() - before
    return {"seconds": seconds, "gaps_over_200us": gaps_200, "gaps_over_1ms": gaps_1000,
            "widest_gap_us": widest // 1000,
            "spinning": figures(spun, spun.get_total_count(), spin_cpu, seconds),
            "sleeping": figures(slept, slept.get_total_count(), sleep_cpu, seconds)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--spin-us", type=int, default=50, help="the core's spin before a deadline")
    p.add_argument("--paths", default="core,python,floor",
                   help="core, python, floor (a spinning and a sleeping schedule of no work)")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    load = os.getloadavg()[0]
    result: dict[str, Any] = {"rate": a.rate, "seconds": a.seconds, "spin_us": a.spin_us,
                              "loadavg_1m": round(load, 2), "cores": os.cpu_count()}
    for path in [x.strip() for x in a.paths.split(",") if x.strip()]:
        if path == "core":
            result["core"] = core_run(a.rate, a.seconds, a.spin_us)
        elif path == "python":
            result["python"] = python_run(a.rate, a.seconds)
        elif path == "floor":
            result["floor"] = floor_run(a.rate, a.seconds)
        else:
            p.error(f"--paths: {path} (known: core, python, floor)")
    if a.json:
        print(json.dumps(result))
        return
    print(f"open-model schedule at {a.rate:,.0f} ops/s for {a.seconds:g} s, no database "
          f"(load average {load:.1f} on {os.cpu_count()} cores; core spin {a.spin_us} us)")
    print(f"{'path':8} {'ops':>7} {'p50 us':>8} {'p99 us':>8} {'p99.9 us':>9} {'max us':>8} "
          f"{'CPU %':>6}")
    for path in ("core", "python"):
        r = result.get(path)
        if r:
            print(f"{path:8} {r['ops']:>7} {r['lateness_p50_us']:>8} {r['lateness_p99_us']:>8} "
                  f"{r['lateness_p999_us']:>9} {r['lateness_max_us']:>8} {r['cpu_pct']:>6}")
    floor = result.get("floor")
    if floor:
        for name, what in (("spinning", "a schedule that spins a whole core: no schedule beats it"),
                           ("sleeping", "one that sleeps to each start: the machine's wake-up")):
            r = floor[name]
            print(f"{name:8} {r['ops']:>7} {r['lateness_p50_us']:>8} {r['lateness_p99_us']:>8} "
                  f"{r['lateness_p999_us']:>9} {r['lateness_max_us']:>8} {r['cpu_pct']:>6}"
                  f"   ({what})")
        print(f"floor: the spinning thread lost the CPU {floor['gaps_over_200us']} times "
              f"for over 0.2 ms in {floor['seconds']:g} s ({floor['gaps_over_1ms']} over 1 ms, "
              f"the widest {floor['widest_gap_us']:,} us): ops due in such a gap are sent late "
              "whatever the schedule")

if __name__ == "__main__":
    main()
