"""Does compare's significance hold? The A/A false rate and the power, old vs new.

Pairs of AR(1) series (per-second samples with memory) from the SAME process are
compared (A/A: every "significant" is false), then pairs whose B is the same process
shifted by --shift (power: the share found, in the right direction). "old" is Welch's
t-test over the raw samples at p < 0.01 (compare before issue 32); "new" is
store/significance.py's 99% interval of the change. With --p99, the same for the p99 of
synthetic per-second HDR histograms (slower: one pair at a time), and for issue 32's
case: a median drifting with memory phi 0.9 and a tail sampled at ~0.5 ops beyond p99 a
second (30 and 60 s; B's tail 10% or 100x slower).

    python bench/significance.py                # 400 pairs, cv 5%, shift 10%
    python bench/significance.py --cv 0.10 --pairs 2000
    python bench/significance.py --p99 --pairs 200
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.store.*

from tests.store.significance_harness import PHIS, percentile_trials, rate_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--cv", type=float, default=0.05, help="per-second sd / mean")
    parser.add_argument("--shift", type=float, default=0.10, help="true change for power")
    parser.add_argument("--p99", action="store_true", help="also the p99 of histograms")
    args = parser.parse_args()
    print(f"ops/s: {args.pairs} pairs of {args.seconds} s per phi, cv {args.cv:.0%}, "
          f"power at a {args.shift:+.0%} shift; alpha 1% (99% interval)")
    print("| phi | false 'significant', old (Welch) | new | new: too short to tell "
          "| power, old | power, new |")
    print("|---|---|---|---|---|---|")
    for r in rate_table(PHIS, args.pairs, args.seconds, args.cv, args.shift, exact=True):
        print(f"| {r.phi} | {r.false_old:.1%} | {r.false_new:.1%} | {r.too_short_aa:.1%} "
              f"| {r.power_old:.1%} | {r.power_new:.1%} |")
    if not args.p99:
        return
    print(f"\np99 of merged per-second histograms (400 ops/s, log-level sd 5% with memory "
          f"phi): {args.pairs} pairs")
    print("| phi | A/A: false change | A/A: too short | +10%: found | +10%: interval holds it |")
    print("|---|---|---|---|---|")
    for phi in PHIS:
        same = percentile_trials(phi, args.pairs, 1.0, args.seconds, seed=5)
        slower = percentile_trials(phi, args.pairs, 1.0 + args.shift, args.seconds, seed=6)
        n = len(same)
        false = sum(v in ("regression", "improvement") for *_, v in same) / n
        short = sum(v == "too short to tell" for *_, v in same) / n
        found = sum(v == "regression" for *_, v in slower) / n
        holds = sum(ci is not None and ci[0] <= t <= ci[1] for t, ci, _ in slower) / n
        print(f"| {phi} | {false:.1%} | {short:.1%} | {found:.1%} | {holds:.1%} |")
    print(f"\np99, drifting median (AR(1) phi 0.9, log-level sd 25%) and a sampled tail "
          f"(3% of 50 ops/s around 4 ms): {args.pairs} pairs")
    print("| seconds | A/A: false change | A/A: too short | tail +10%: found "
          "| tail 100x: found |")
    print("|---|---|---|---|---|")
    for seconds in (30, 60):
        same = percentile_trials(0.9, args.pairs, 1.0, seconds, seed=8, drifting=True)
        slower = percentile_trials(0.9, args.pairs, 1.0 + args.shift, seconds, seed=9,
                                   drifting=True)
        much = percentile_trials(0.9, args.pairs, 100.0, seconds, seed=10, drifting=True)
        n = len(same)
        false = sum(v in ("regression", "improvement") for *_, v in same) / n
        short = sum(v == "too short to tell" for *_, v in same) / n
        found = sum(v == "regression" for *_, v in slower) / n
        found_100 = sum(v == "regression" for *_, v in much) / n
        print(f"| {seconds} | {false:.1%} | {short:.1%} | {found:.1%} | {found_100:.1%} |")


if __name__ == "__main__":
    main()
