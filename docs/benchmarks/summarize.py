#!/usr/bin/env python3
"""Summarizes a JMH JSON result file: per benchmark and parameters, the median of all
measured iterations (over every fork), the interquartile range, and the JMH mean with its
99.9% error, plus gc.alloc.rate.norm when the run used -prof gc.

usage: summarize.py RESULT.json [--per-op N]   (N: operations per single-shot batch)
"""
import json
import statistics
import sys


def quartiles(values):
    values = sorted(values)
    if len(values) < 4:
        return values[0], values[-1]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def secondary(result, scale):
    gc = result.get("secondaryMetrics", {}).get("gc.alloc.rate.norm")
    return "" if gc is None else f"{gc['score'] / scale:.2f}"


def main():
    path = sys.argv[1]
    per_op = 1
    if "--per-op" in sys.argv:
        per_op = int(sys.argv[sys.argv.index("--per-op") + 1])
    with open(path) as f:
        results = json.load(f)
    print("| benchmark | params | median | IQR | mean ± 99.9% | unit | alloc B/op |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        name = r["benchmark"].rsplit(".", 1)[-1]
        params = ", ".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()))
        m = r["primaryMetric"]
        if "rawData" not in m:
            pct = m["scorePercentiles"]
            print(f"| {name} | {params} | p50 {pct['50.0']:.0f} | p90 {pct['90.0']:.0f}, p99 {pct['99.0']:.0f}, "
                  f"p99.9 {pct['99.9']:.0f} | {m['score']:.1f} ± {m['scoreError']:.1f} | {m['scoreUnit']} | "
                  f"{secondary(r, 1)} |")
            continue
        raw = [x for fork in m["rawData"] for x in fork]
        lo, hi = quartiles(raw)
        scale = per_op if r["mode"] == "ss" else 1
        alloc = secondary(r, scale)
        unit = m["scoreUnit"] + (f" per {per_op} ops" if scale != 1 else "")
        print(f"| {name} | {params} | {statistics.median(raw):.3f} | {lo:.3f} - {hi:.3f} | "
              f"{m['score']:.3f} ± {m['scoreError']:.3f} | {unit} | {alloc} |")


if __name__ == "__main__":
    main()
