#!/usr/bin/env bash
# Realtime labelling: the Flink job (io.flywheel.stream.flink.LabellingJob, MiniCluster, parallelism 2) against the
# plain consumer engine (StreamLabeller), in one run, each on its own in-JVM Kafka broker and lake, both on the same
# cores (taskset). Per engine: events/s through it on a backlog, and the latency from the producer's send of an
# episode's end event to its label being readable by a lake read, p50/p99, with the events sent live at RATE/s.
# The floor the latency cannot go under: the allowed lateness + the 2 s out-of-orderness bound (+ up to one
# checkpoint / commit interval).
#
# usage: bench/stream.sh [RATE] [SECONDS] [BACKLOG_EPISODES] [LATENESS_S] [CHECKPOINT_MS] [ENGINES] [CORES]
#        (defaults: 1000 20 3000 10 1000 flink,consumer 0,1)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RATE="${1:-1000}"
SECS="${2:-20}"
BACKLOG="${3:-3000}"
LATENESS="${4:-10}"
CHECKPOINT="${5:-1000}"
ENGINES="${6:-flink,consumer}"
CORES="${7:-0,1}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/stream"
cd "$ROOT"
mkdir -p "$(dirname "$SCRATCH")"
# one reactor: the modules' classes folders stand in for their jars; the last module written is flywheel-stream
mvn -B -q -ntp -o -pl flywheel-stream -am test-compile dependency:build-classpath -Dmdep.outputFile="$SCRATCH.cp" \
    -Dmdep.includeScope=test 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/tmp"
CP="flywheel-stream/target/classes:flywheel-stream/target/test-classes:$(cat "$SCRATCH.cp")"
taskset -c "$CORES" java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx3g -Djava.io.tmpdir="$SCRATCH/tmp" \
    -cp "$CP" io.flywheel.stream.bench.StreamBench "$SCRATCH/run" "$ENGINES" "$RATE" "$SECS" "$BACKLOG" "$LATENESS" \
    "$CHECKPOINT" 2>"$SCRATCH/stderr.log" | grep '^{' | tee "$SCRATCH/result.json"
python3 - "$SCRATCH/result.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("%-9s %9s %10s %9s %6s %9s %9s %9s %8s %10s" % ("engine", "backlog", "events/s", "live ev/s", "labels",
      "p50 s", "p99 s", "max s", "floor s", "duplicates"))
for r in rows:
    print("%-9s %9d %10.0f %9d %6d %9.2f %9.2f %9.2f %8.1f %10d" % (r["engine"], r["backlog_records"],
          r["events_per_s"], r["rate"], r["labelled"], r["latency_p50_s"], r["latency_p99_s"], r["latency_max_s"],
          r["floor_s"], r["episodes_with_two_rows"]))
PY
rm -rf "$SCRATCH/run"
