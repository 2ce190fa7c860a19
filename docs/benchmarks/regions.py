#!/usr/bin/env python3
"""Region bandwidth table from a RegionBenchmark JMH JSON file: per direction, chunk size and
memory, the median of all measured iterations (over every fork) in GB/s, the interquartile
range, JMH's mean with its 99.9% error, and the ratio of the median to memcpy's median for the
same direction and chunk. The benchmark's score is MiB/s (one operation copies 1 MiB): runs made
with -bs N are refused, since a batch multiplies the bytes per operation.

usage: regions.py RESULT.json
"""
import json
import statistics
import sys

GB_PER_MIB = 1.048576 / 1000


def quartiles(values):
    values = sorted(values)
    if len(values) < 4:
        return values[0], values[-1]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main():
    with open(sys.argv[1]) as f:
        results = json.load(f)
    rows = {}
    for r in results:
        if r.get("measurementBatchSize", 1) != 1:
            sys.exit(f"{r['benchmark']}: batch size {r['measurementBatchSize']}: scores are not MiB/s")
        m = r["primaryMetric"]
        raw = [x * GB_PER_MIB for fork in m["rawData"] for x in fork]
        key = (r["benchmark"].rsplit(".", 1)[-1], int(r["params"]["chunk"]), r["params"]["memory"])
        rows[key] = (statistics.median(raw), quartiles(raw), m["score"] * GB_PER_MIB, m["scoreError"] * GB_PER_MIB,
                     len(raw), r["params"].get("workingSetMiB"))
    order = ["memcpy", "direct", "mapped-shm", "pmem-file"]
    print("| direction | chunk | memory | median GB/s | IQR | mean ± 99.9% | vs memcpy |")
    print("|---|---|---|---|---|---|---|")
    for direction in ["write", "read"]:
        for chunk in sorted({k[1] for k in rows}):
            base = rows.get((direction, chunk, "memcpy"))
            for memory in order + sorted({k[2] for k in rows} - set(order)):
                row = rows.get((direction, chunk, memory))
                if row is None:
                    continue
                median, (lo, hi), mean, error, n, _ = row
                ratio = f"{median / base[0]:.2f}" if base else ""
                size = f"{chunk // 1024} KB" if chunk < 1 << 20 else f"{chunk >> 20} MB"
                print(f"| {direction} | {size} | {memory} | {median:.2f} | {lo:.2f} - {hi:.2f} | "
                      f"{mean:.2f} ± {error:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
