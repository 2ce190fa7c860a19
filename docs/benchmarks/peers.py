#!/usr/bin/env python3
"""Tables and a chart of the peer benchmarks (Caffeine, OHC, RocksDB beside the block cache) from one JMH JSON result file of
BlockCacheBenchmark and BlockCacheBenchmarkTwoThreads, run with -prof gc.

usage: peers.py RESULT.json [--svg CHART.svg]

Prints Markdown tables: per workload and thread count, each store's throughput (median of
all measured batches over all forks, turned into operations per second of the whole store,
and the JMH 99.9% error relative to the mean), bytes copied per second, heap bytes allocated
per operation, and the ratios of its median throughput to the block cache's and to memcpy's
in the same run; then the single-threaded steady state (insert, copy out, delete).
With --svg, also writes a bar chart of the throughputs (log scale), standard library only.
"""
import json
import math
import statistics
import sys

STORES = ["blockcache", "hashmap", "concurrenthashmap", "memcpy", "caffeine", "ohc", "rocksdb"]
COLORS = {
    "blockcache": "#1b9e77", "hashmap": "#7570b3", "concurrenthashmap": "#7570b3",
    "memcpy": "#999999", "caffeine": "#d95f02", "ohc": "#e7298a", "rocksdb": "#66a61e",
}
WORKLOADS = ["sequentialInsert", "sequentialGet", "sequentialDelete", "random"]
# Operations per single-shot batch and per thread (BlockCacheBenchmark.SEQUENTIAL_COUNT, RANDOM_COUNT).
BATCH = 20_000


def label(method, length):
    kb = f"{length // 1024} KB"
    return {
        "sequentialInsert": f"sequential insert {kb}",
        "sequentialGet": f"sequential get {kb} (copy)",
        "sequentialDelete": f"sequential delete {kb}",
        "random": f"random {kb}",
    }[method]


def bytes_copied(method, length):
    """Bytes copied per operation: the random test inserts in 60% of its operations and copies
    one entry out in every one."""
    return {"sequentialInsert": length, "sequentialGet": length, "sequentialDelete": 0,
            "random": 1.6 * length}[method]


def load(path):
    with open(path) as f:
        results = json.load(f)
    rows = {}
    steady = {}
    for r in results:
        method = r["benchmark"].rsplit(".", 1)[-1]
        params = r.get("params", {})
        store = params["store"]
        metric = r["primaryMetric"]
        raw = [x for fork in metric["rawData"] for x in fork]
        gc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm")
        if method == "insertCopyDelete":
            steady[store] = {"median": statistics.median(raw), "raw": raw,
                             "alloc": None if gc is None else gc["score"]}
            continue
        if method not in WORKLOADS:
            continue
        length = int(params.get("entryLength") or params.get("randomEntryLength"))
        threads = r["threads"]
        seconds = statistics.median(raw) / 1000.0  # scores are ms per batch (per thread)
        ops = BATCH * threads / seconds
        rows[(method, length, threads, store)] = {
            "ops": ops,
            "error": metric["scoreError"] / metric["score"] if metric["score"] else float("nan"),
            "gbs": bytes_copied(method, length) * ops / 1e9,
            # In single-shot mode JMH counts one batch of one thread as the operation.
            "alloc": None if gc is None else gc["score"] / BATCH,
        }
    return rows, steady


def fmt_ops(ops):
    if ops >= 1e6:
        return f"{ops / 1e6:.2f} M"
    return f"{ops / 1e3:.0f} k"


def fmt_alloc(alloc):
    if alloc is None:
        return ""
    return f"{alloc:,.0f}" if alloc >= 10 else f"{alloc:.1f}"


def workloads(rows):
    keys = sorted({(m, l, t) for (m, l, t, _) in rows},
                  key=lambda k: (k[2], WORKLOADS.index(k[0]), k[1]))
    return keys


def table(rows):
    print("| workload | threads | store | ops/s (median) | ± 99.9% | GB/s copied | B/op | x blockcache | x memcpy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (method, length, threads) in workloads(rows):
        base = rows.get((method, length, threads, "blockcache"))
        limit = rows.get((method, length, threads, "memcpy"))
        for store in STORES:
            row = rows.get((method, length, threads, store))
            if row is None:
                continue
            if method == "sequentialDelete" and store == "memcpy":
                print(f"| {label(method, length)} | {threads} | memcpy | (no-op) | | | | | |")
                continue
            vs_cache = f"{row['ops'] / base['ops']:.2f}" if base else ""
            vs_limit = "" if not limit or method == "sequentialDelete" else f"{row['ops'] / limit['ops']:.2f}"
            gbs = "" if method == "sequentialDelete" else f"{row['gbs']:.1f}"
            name = f"**{store}**" if store == "blockcache" else store
            # The delete batch's allocation includes its tear-down putting the deleted entries back.
            alloc = "" if method == "sequentialDelete" else fmt_alloc(row["alloc"])
            print(f"| {label(method, length)} | {threads} | {name} | {fmt_ops(row['ops'])} | "
                  f"{100 * row['error']:.0f}% | {gbs} | {alloc} | {vs_cache} | {vs_limit} |")


def steady_table(steady):
    if not steady:
        return
    print()
    print("| steady state: insert 10 KB, copy it out, delete it (1 thread) | ns/op (median, IQR) | B/op | x blockcache time |")
    print("|---|---|---|---|")
    base = steady.get("blockcache")
    for store in STORES:
        s = steady.get(store)
        if s is None:
            continue
        q = statistics.quantiles(s["raw"], n=4) if len(s["raw"]) >= 4 else [s["median"], 0, s["median"]]
        ratio = f"{s['median'] / base['median']:.2f}" if base else ""
        print(f"| {store} | {s['median']:,.0f} ({q[0]:,.0f}-{q[2]:,.0f}) | {fmt_alloc(s['alloc'])} | {ratio} |")


def svg(rows, path):
    """Horizontal bars, one group per workload and thread count, one bar per store; the
    x axis is operations per second of the whole store on a log scale."""
    groups = workloads(rows)
    bar, gap, left, right, top = 11, 14, 250, 90, 40
    width = 900
    plot = width - left - right
    values = [r["ops"] for (m, _, _, s), r in rows.items() if not (m == "sequentialDelete" and s == "memcpy")]
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values)))

    def x(ops):
        return left + plot * (math.log10(ops) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    height = top + 30
    for (m, l, t) in groups:
        height += bar * sum(1 for s in STORES if (m, l, t, s) in rows
                            and not (m == "sequentialDelete" and s == "memcpy")) + gap
    height += 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="13" font-weight="bold">Raw cache workloads: '
           f'operations per second of the whole store (log scale, higher is better)</text>']
    decade = lo
    while decade <= hi:
        xd = x(decade)
        out.append(f'<line x1="{xd:.1f}" y1="{top}" x2="{xd:.1f}" y2="{height - 40}" stroke="#ddd"/>')
        out.append(f'<text x="{xd:.1f}" y="{height - 26}" text-anchor="middle">{fmt_ops(decade).strip()}</text>')
        decade *= 10
    y = top + 4
    for (m, l, t) in groups:
        stores = [s for s in STORES if (m, l, t, s) in rows
                  and not (m == "sequentialDelete" and s == "memcpy")]
        out.append(f'<text x="{left - 8}" y="{y + bar * len(stores) / 2 + 4:.1f}" text-anchor="end" '
                   f'font-weight="bold">{label(m, l)}, {t} thread{"s" if t > 1 else ""}</text>')
        for s in stores:
            ops = rows[(m, l, t, s)]["ops"]
            out.append(f'<rect x="{left}" y="{y}" width="{x(ops) - left:.1f}" height="{bar - 2}" '
                       f'fill="{COLORS[s]}"/>')
            out.append(f'<text x="{x(ops) + 3:.1f}" y="{y + bar - 3}" font-size="9">{s} {fmt_ops(ops)}</text>')
            y += bar
        y += gap
    out.append(f'<text x="{left}" y="{height - 8}" font-size="10">memcpy: the physical limit (no bookkeeping); '
               f'hashmap / concurrenthashmap: the seed\'s baseline (2 threads: ConcurrentHashMap)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    path = sys.argv[1]
    rows, steady = load(path)
    table(rows)
    steady_table(steady)
    if "--svg" in sys.argv:
        svg(rows, sys.argv[sys.argv.index("--svg") + 1])


if __name__ == "__main__":
    main()
