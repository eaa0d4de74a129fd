"""What an agent spends on each (second, op) the Rust core measured, from the core's
harvest to the interval line's histograms: kept as the core encoded them (issue 28: one
encoding from the core to the store) against decoded into hdrh histograms and encoded
again (the path before, and still the path of a second with more than one sample in it).

The samples are the core's own encodings (``encode_values``, its recorder's serializer) of
--values latencies a second per op drawn from a lognormal around 1 ms, with lateness for
every one (the open model); each path turns --seconds of them into lines, alternated
--rounds times. Prints the CPU per (second, op) of each path and their ratio, and the
bytes of a line's histograms in each form. The machine is shared and noisy: the rounds'
spread is printed with the medians.

usage: python bench/core_seconds.py [--values 20000] [--seconds 200] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

import loadtower_core as core

from loadtower.agents.measure import IntervalRecorder
from loadtower.protocol.hdr_encoding import decode_v2


def samples(values: int, seconds: int, seed: int = 7) -> list[tuple[int, dict[str, Any]]]:
    """`seconds` of one op's core samples, `values` latencies each (us)."""
    rng = random.Random(seed)
    out = []
    for second in range(seconds):
        service = [int(rng.lognormvariate(6.9, 0.6)) + 1 for _ in range(values)]
        late = [int(rng.lognormvariate(3.0, 1.0)) + 1 for _ in range(values)]
        response = [s + lt for s, lt in zip(service, late, strict=True)]
        lateness = core.encode_values(late)
        out.append((1_000 + second, {
            "ops": values, "late": 0, "errors": {}, "first": 1_000.0 + second,
            "last": 1_000.5 + second, "service": core.encode_values(service),
            "response": core.encode_values(response), "lateness": lateness,
            "lateness_max_us": decode_v2(lateness).get_max_value()}))
    return out


def lines(batch: list[tuple[int, dict[str, Any]]], decoded: bool) -> tuple[float, list]:
    """CPU seconds to turn `batch` into lines; `decoded`: a histogram made in each second
    first, so that the core's sample is decoded and merged (the path before)."""
    rec = IntervalRecorder("a/0", "a")
    rec.phase = "run"
    t0 = time.process_time()
    for second, sample in batch:
        if decoded:
            _ = rec._bucket("run", second).stats("read").service
        rec.add_encoded("run", second, "read", sample)
    out = rec.flush("run")
    return time.process_time() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--values", type=int, default=20_000)
    ap.add_argument("--seconds", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    batch = samples(args.values, args.seconds)
    per: dict[str, list[float]] = {"kept": [], "decoded": []}
    size: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, decoded in (("decoded", True), ("kept", False)):
            cpu, out = lines(batch, decoded)
            per[name].append(cpu / args.seconds * 1e3)
            op = out[0]["ops"]["read"]
            size[name] = sum(len(op[k]) for k in ("service_hist", "response_hist",
                                                  "lateness_hist"))
    med = {k: statistics.median(v) for k, v in per.items()}
    result = {"values_per_second": args.values, "seconds": args.seconds,
              "rounds": args.rounds,
              "ms_per_second_op": {k: [round(x, 4) for x in v] for k, v in per.items()},
              "median_ms": {k: round(v, 4) for k, v in med.items()},
              "decoded_over_kept": round(med["decoded"] / med["kept"], 1),
              "histogram_text_bytes": size}
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.values} values a second per op, {args.seconds} seconds, "
          f"{args.rounds} rounds alternated")
    for name in ("decoded", "kept"):
        runs = ", ".join(f"{x:.3f}" for x in per[name])
        print(f"  {name:8} {med[name]:.3f} ms CPU per (second, op)   [{runs}]   "
              f"histogram text {size[name]} B")
    print(f"  decoded / kept: {result['decoded_over_kept']}x")


if __name__ == "__main__":
    main()
