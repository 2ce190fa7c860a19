#!/usr/bin/env bash
# Runs the scale matrix (cache size x segment count) and writes its table and chart:
#   1. JMH ScaleBenchmark: the full block cache (random 10 KB replace, copy get) at every cache
#      size; the full log-less segment store (1 KB appends, tail reads) at every cache size and
#      segment count; the store without truncation at the smallest size (the placeholder finding);
#   2. HeapFootprint: heap after GC per cached MB, block cache alone and store, one JVM per measure;
#   3. the stress harness (full store with its log) at every cache size and segment count, prefilled.
# Then scale_report.py turns the results into scale-table.md and scale.svg.
#
# usage: docs/benchmarks/scale.sh            (build first: mvn -B -q package -DskipTests)
# environment (defaults in brackets):
#   SIZES ["1g 4g 16g"]  SEGMENTS ["10 1000 100000"]  FORKS [2]  WI [2]  I [4]  (JMH, 1 s iterations)
#   HARNESS_SECONDS [25]  STEPS ["jmh untruncated heap harness report"] (jmh = cache + store)  OUT [docs/benchmarks/scale-data]
#   JMH_LOCK [wait]: "ignore" runs JMH while another JMH holds /tmp/jmh.lock (a shared machine)
# A 16 GB cache needs about 19 GB of free memory (cache + 2 GB heap + the JVM); the script stops
# before a size that does not fit in MemAvailable rather than have the kernel kill something.
set -euo pipefail
cd "$(dirname "$0")/../.."
JAR=cache-bench/target/streamcache-bench.jar
OUT=${OUT:-docs/benchmarks/scale-data}
SIZES=${SIZES:-"1g 4g 16g"}
SEGMENTS=${SEGMENTS:-"10 1000 100000"}
FORKS=${FORKS:-2}
WI=${WI:-2}
I=${I:-4}
HARNESS_SECONDS=${HARNESS_SECONDS:-25}
STEPS=${STEPS:-"jmh untruncated heap harness report"}
JVM=(-Xms2g -Xmx2g -XX:MaxDirectMemorySize=17g)
JMH_JVM=()
[ "${JMH_LOCK:-wait}" = ignore ] && JMH_JVM=(-Djmh.ignoreLock=true)

[ -f "$JAR" ] || { echo "scale.sh: $JAR missing; build first: mvn -B -q package -DskipTests" >&2; exit 2; }
mkdir -p "$OUT"
csv() { echo "$*" | tr ' ' ','; }
has() { [[ " $STEPS " == *" $1 "* ]]; }
mib() { # 1g -> 1024, 512m -> 512
    case "$1" in *g) echo $(( ${1%g} * 1024 ));; *m) echo "${1%m}";; *) echo $(( $1 >> 20 ));; esac
}
fits() { # whether a cache of $1 plus 3 GB fits in the memory available now
    local avail_mib
    avail_mib=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
    if (( $(mib "$1") + 3072 > avail_mib )); then
        echo "scale.sh: a $1 cache needs $(( $(mib "$1") + 3072 )) MiB, ${avail_mib} MiB available: stopping" >&2
        return 1
    fi
}
for size in $SIZES; do fits "$size"; done

if has jmh || has cache; then
    java "${JMH_JVM[@]}" -jar "$JAR" jmh 'ScaleBenchmark.cache' -p cacheSize="$(csv $SIZES)" \
        -f "$FORKS" -wi "$WI" -i "$I" -w 1s -r 1s -rf json -rff "$OUT/jmh-cache.json" | tee "$OUT/jmh-cache.log"
fi
if has jmh || has store; then
    java "${JMH_JVM[@]}" -jar "$JAR" jmh 'ScaleBenchmark.store' -p cacheSize="$(csv $SIZES)" -p segments="$(csv $SEGMENTS)" -p truncate=true \
        -f "$FORKS" -wi "$WI" -i "$I" -w 1s -r 1s -rf json -rff "$OUT/jmh-store.json" | tee "$OUT/jmh-store.log"
fi
if has untruncated; then
    first_size=${SIZES%% *}
    java "${JMH_JVM[@]}" -jar "$JAR" jmh 'ScaleBenchmark.store' -p cacheSize="$first_size" -p segments="$(csv $SEGMENTS)" -p truncate=false \
        -f "$FORKS" -wi "$WI" -i "$I" -w 1s -r 1s -rf json -rff "$OUT/jmh-store-untruncated.json" | tee "$OUT/jmh-store-untruncated.log"
fi
if has heap; then
    : > "$OUT/heap.jsonl"
    for size in $SIZES; do
        java "${JVM[@]}" -cp "$JAR" io.streamcache.bench.scale.HeapFootprint --cache-size "$size" --what cache | tee -a "$OUT/heap.jsonl"
        for segments in $SEGMENTS; do
            java "${JVM[@]}" -cp "$JAR" io.streamcache.bench.scale.HeapFootprint --cache-size "$size" --segments "$segments" \
                --what store | tee -a "$OUT/heap.jsonl"
        done
    done
fi
if has harness; then
    for size in $SIZES; do
        # Retention 1.25 x the cache: the cache fills (truncation would free it otherwise) and
        # catch-up readers still read the oldest fifth through the log.
        retention="$(( $(mib "$size") * 5 / 4 ))m"
        for segments in $SEGMENTS; do
            name="harness-$size-$segments"
            java "${JVM[@]}" -jar "$JAR" stress --cache-size "$size" --segments "$segments" --duration "${HARNESS_SECONDS}s" \
                --prefill --retention "$retention" --durability never --out "$OUT/$name" > "$OUT/$name.log" 2>&1 \
                || echo "scale.sh: $name exited $?" >&2
            rm -f "$OUT/$name/report.html"
            tail -n 12 "$OUT/$name.log"
        done
    done
fi
if has report; then
    python3 docs/benchmarks/scale_report.py "$OUT" docs/benchmarks/scale.svg > docs/benchmarks/scale-table.md
    cat docs/benchmarks/scale-table.md
fi
