#!/usr/bin/env python3
"""Turns the results of docs/benchmarks/scale.sh into markdown tables (standard output) and an
SVG chart: JMH ScaleBenchmark ns/op (median of every measured iteration over all forks, with
the interquartile range), heap bytes per cached MB from HeapFootprint, and the stress harness's
summaries. Python standard library only.

usage: scale_report.py RESULTS_DIR CHART.svg
"""
import glob
import json
import os
import statistics
import sys
from html import escape


def size_key(size):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)


def nbytes(n):
    return f"{n / 1e6:,.1f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


def human(size):
    return f"{size >> 30} GB" if size >= 1 << 30 else f"{size >> 20} MB"


def quartiles(values):
    values = sorted(values)
    if len(values) < 4:
        return values[0], values[-1]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def load_jmh(path):
    """{(benchmark, cacheSize, segments, truncate): (median, q1, q3, n)}"""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        results = json.load(f)
    out = {}
    for r in results:
        name = r["benchmark"].rsplit(".", 1)[-1]
        p = r.get("params", {})
        raw = [x for fork in r["primaryMetric"]["rawData"] for x in fork]
        lo, hi = quartiles(raw)
        out[(name, p.get("cacheSize"), p.get("segments"), p.get("truncate"))] = (statistics.median(raw), lo, hi, len(raw))
    return out


def fmt_ns(m):
    median, lo, hi, _ = m
    return f"{median:,.0f} ({lo:,.0f}-{hi:,.0f})"


def jmh_tables(cache, store, untruncated):
    lines = []
    sizes = sorted({k[1] for k in list(cache) + list(store)}, key=size_key)
    segments = sorted({int(k[2]) for k in store}, key=int)
    lines.append("### Block cache, full, 10 KB entries, random keys (ns/op: median (IQR))\n")
    lines.append("| cache size | replace (delete + insert) | copying get |")
    lines.append("|---|---|---|")
    for s in sizes:
        rep = cache.get(("cacheReplace", s, None, None))
        get = cache.get(("cacheGet", s, None, None))
        if rep or get:
            lines.append(f"| {s} | {fmt_ns(rep) if rep else '-'} | {fmt_ns(get) if get else '-'} |")
    for op, title in (("storeAppend", "append 1 KB to a random segment"), ("storeTailRead", "read the last 1 KB of a random segment")):
        lines.append(f"\n### Segment store without log, full, {title} (ns/op: median (IQR))\n")
        lines.append("| cache size | " + " | ".join(f"{n:,} segments" for n in segments) + " |")
        lines.append("|---|" + "---|" * len(segments))
        for s in sizes:
            cells = [store.get((op, s, str(n), "true")) for n in segments]
            if any(cells):
                lines.append(f"| {s} | " + " | ".join(fmt_ns(c) if c else "-" for c in cells) + " |")
    if untruncated:
        lines.append("\n### Segment store without truncation (evicted entries stay in the read index) (ns/op: median (IQR))\n")
        usizes = sorted({k[1] for k in untruncated}, key=size_key)
        lines.append("| operation | cache size | " + " | ".join(f"{n:,} segments" for n in segments) + " |")
        lines.append("|---|---|" + "---|" * len(segments))
        for op in ("storeAppend", "storeTailRead"):
            for s in usizes:
                cells = [untruncated.get((op, s, str(n), "false")) for n in segments]
                lines.append(f"| {op} | {s} | " + " | ".join(fmt_ns(c) if c else "-" for c in cells) + " |")
    return lines


def heap_table(path):
    if not os.path.exists(path):
        return [], []
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    lines = ["\n### Heap bytes per cached MB (after a full GC; HeapFootprint)\n",
             "| cache size | what | segments | cached | heap, empty (cache objects + segments) | heap, full | "
             "heap B per cached MB (block cache: without the caller's int[] of addresses) | empty heap / segments |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        heap = r["heapFull"] - r["heapBefore"]
        per_mb = r["heapBytesPerCachedMBWithoutCallerIndex"] if r["what"] == "cache" else r["heapBytesPerCachedMB"]
        lines.append(f"| {human(r['cacheSize'])} | {'block cache' if r['what'] == 'cache' else 'store'} | "
                     f"{r['segments'] if r['what'] == 'store' else '-'} | {r['cachedBytes'] / 2**20:,.0f} MB | "
                     f"{(r['heapEmpty'] - r['heapBefore']) / 2**20:,.2f} MB | {heap / 2**20:,.2f} MB | "
                     f"{per_mb:,.0f} | {r['heapBytesPerSegmentEmpty']:,.0f} B |")
    return lines, rows


def harness_table(directory):
    rows = []
    for path in glob.glob(os.path.join(directory, "harness-*", "summary.json")):
        with open(path) as f:
            rows.append(json.load(f))
    rows.sort(key=lambda r: (r["config"]["cacheSize"], r["config"]["segments"]))
    lines = ["\n### Stress harness (log on, durability never, prefilled; append / read = ops/s over the run)\n",
             "| cache | segments | verdict | appends/s | MB/s in | append avg / p99 | tail read avg / p50 | hit ratio "
             "| tail lag mean | catch-up lag mean | disk max | heap B per cached MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c, t, lat, lag = r["config"], r["throughput"], r["latencyMicros"], r["readerLag"]
        mem, log = r["memory"], r["log"]
        lines.append(
            f"| {human(c['cacheSize'])} | {c['segments']:,} | {'pass' if r['passed'] else 'FAIL'} | {t['appendsPerSec']:,.0f} | "
            f"{t['appendMBps']:,.0f} | {lat['append']['avg']:,.0f} / {lat['append']['p99']:,.0f} us | "
            f"{lat['tailRead']['avg']:,.1f} / {lat['tailRead']['p50']:,.1f} us | {r['cache']['hitRatio'] * 100:.1f}% | "
            f"{nbytes(lag['tailMeanBytes'])} ({lag['tailMeanSeconds']:,.2f} s) | "
            f"{nbytes(lag['catchupMeanBytes'])} ({lag['catchupMeanSeconds']:,.1f} s) | {log['diskBytesMax'] / 1e9:,.2f} GB | "
            f"{mem['heapBytesPerCachedMB']:,.0f} |")
    return lines, rows


# ------------------------------------------------------------------------------------------ SVG

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf"]


def panel(x0, y0, w, h, title, xlabels, series, ylabel, log_y=True):
    """series: [(name, [(median, lo, hi) or None per x])]"""
    import math
    out = []
    values = [v for _, pts in series for p in pts if p for v in p if v and v > 0]
    if not values:
        return ""
    lo_v, hi_v = min(values), max(values)
    if log_y:
        ymin = 10 ** math.floor(math.log10(lo_v))
        ymax = 10 ** math.ceil(math.log10(hi_v))
        ticks = [10 ** e for e in range(int(math.log10(ymin)), int(math.log10(ymax)) + 1)]

        def ty(v):
            return y0 + h - h * (math.log10(v) - math.log10(ymin)) / (math.log10(ymax) - math.log10(ymin))
    else:
        ymin, ymax = 0, hi_v * 1.1
        ticks = [ymax * i / 5 for i in range(6)]

        def ty(v):
            return y0 + h - h * (v - ymin) / (ymax - ymin)
    out.append(f'<text x="{x0}" y="{y0 - 12}" font-size="13" font-weight="bold">{escape(title)}</text>')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 + h}" stroke="#999"/>')
    out.append(f'<line x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0 + h}" stroke="#999"/>')
    for t in ticks:
        y = ty(t)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 5}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{t:,.0f}</text>')
    out.append(f'<text x="{x0 - 48}" y="{y0 + h / 2}" font-size="10" transform="rotate(-90 {x0 - 48} {y0 + h / 2})" '
               f'text-anchor="middle">{escape(ylabel)}</text>')
    n = len(xlabels)

    def tx(i):
        return x0 + w * (i + 0.5) / n
    for i, label in enumerate(xlabels):
        out.append(f'<text x="{tx(i):.1f}" y="{y0 + h + 15}" font-size="10" text-anchor="middle">{escape(label)}</text>')
    for k, (name, pts) in enumerate(series):
        color = COLORS[k % len(COLORS)]
        coords = [(tx(i), p) for i, p in enumerate(pts) if p]
        if len(coords) > 1:
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="'
                       + " ".join(f"{x:.1f},{ty(p[0]):.1f}" for x, p in coords) + '"/>')
        for x, p in coords:
            out.append(f'<circle cx="{x:.1f}" cy="{ty(p[0]):.1f}" r="3" fill="{color}"/>')
            if p[1] and p[2]:
                out.append(f'<line x1="{x:.1f}" y1="{ty(p[1]):.1f}" x2="{x:.1f}" y2="{ty(p[2]):.1f}" stroke="{color}"/>')
        ly = y0 + h + 30 + 13 * k
        out.append(f'<rect x="{x0}" y="{ly - 8}" width="12" height="4" fill="{color}"/>'
                   f'<text x="{x0 + 16}" y="{ly - 3}" font-size="10">{escape(name)}</text>')
    return "\n".join(out)


def chart(path, cache, store, heap_rows):
    sizes = sorted({k[1] for k in list(cache) + list(store)}, key=size_key)
    segments = sorted({int(k[2]) for k in store})
    mid_segments = str(segments[len(segments) // 2]) if segments else None
    first_size = sizes[0] if sizes else None
    pw, ph, top = 300, 220, 50
    parts = []
    s1 = [("block cache replace", [cache.get(("cacheReplace", s, None, None)) for s in sizes]),
          ("block cache copying get", [cache.get(("cacheGet", s, None, None)) for s in sizes]),
          (f"store append ({mid_segments} segments)", [store.get(("storeAppend", s, mid_segments, "true")) for s in sizes]),
          (f"store tail read ({mid_segments} segments)", [store.get(("storeTailRead", s, mid_segments, "true")) for s in sizes])]
    parts.append(panel(80, top, pw, ph, "ns/op against cache size", sizes, s1, "ns/op (log)"))
    s2 = [(f"store append ({s})", [store.get(("storeAppend", s, str(n), "true")) for n in segments]) for s in sizes] + \
         [(f"store tail read ({s})", [store.get(("storeTailRead", s, str(n), "true")) for n in segments]) for s in sizes]
    parts.append(panel(80 + pw + 90, top, pw, ph, "ns/op against segments", [f"{n:,}" for n in segments], s2, "ns/op (log)"))
    hs = []
    for s in sizes:
        b = size_key(s)
        pts = []
        for n in segments:
            row = next((r for r in heap_rows if r["what"] == "store" and r["cacheSize"] == b and r["segments"] == n), None)
            pts.append((row["heapBytesPerCachedMB"], None, None) if row else None)
        hs.append((f"store, {s} cache", pts))
    parts.append(panel(80 + 2 * (pw + 90), top, pw, ph, "heap bytes per cached MB", [f"{n:,}" for n in segments], hs, "bytes (log)"))
    width = 80 + 3 * pw + 2 * 90 + 30
    height = top + ph + 30 + 13 * max(len(s1), len(s2), len(hs)) + 20
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif" role="img" aria-label="streamcache scale results">\n'
           f'<rect width="{width}" height="{height}" fill="#fff"/>\n' + "\n".join(p for p in parts if p) + "\n</svg>\n")
    with open(path, "w") as f:
        f.write(svg)


def main():
    directory, svg = sys.argv[1], sys.argv[2]
    cache = load_jmh(os.path.join(directory, "jmh-cache.json"))
    store = load_jmh(os.path.join(directory, "jmh-store.json"))
    untruncated = load_jmh(os.path.join(directory, "jmh-store-untruncated.json"))
    lines = jmh_tables(cache, store, untruncated)
    hl, heap_rows = heap_table(os.path.join(directory, "heap.jsonl"))
    lines += hl
    hr, _ = harness_table(directory)
    lines += hr
    print("\n".join(lines))
    chart(svg, cache, store, heap_rows)


if __name__ == "__main__":
    main()
