#!/usr/bin/env bash
# Ingest throughput against plain MCAP reading of the same files, one core, one JVM: RUNS rounds (after a
# warm-up round), each a plain read then an ingest; prints every round's ratio and their median.
# The fleet is written once by the simulator (bench preset, 320x240) and reused.
#
# usage: bench/ingest.sh [EPISODES] [SECONDS] [RUNS]     (defaults: 12 episodes of 20 s, 9 rounds)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EPISODES="${1:-12}"
SECONDS_PER_EPISODE="${2:-20}"
RUNS="${3:-9}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/ingest"
FLEET="$SCRATCH/fleet-$EPISODES-$SECONDS_PER_EPISODE"
mkdir -p "$SCRATCH"
if [ ! -f "$FLEET/ground_truth.json" ]; then
  "$ROOT/flywheel" sim --preset bench --episodes "$EPISODES" --robots 4 --duration "$SECONDS_PER_EPISODE" \
      --resolution 320x240 --out "$FLEET" --force >/dev/null
fi
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec taskset -c 0 java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx4g -Djava.io.tmpdir="$SCRATCH" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.IngestBench "$FLEET" "$SCRATCH" "$RUNS"
