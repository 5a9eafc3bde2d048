#!/usr/bin/env bash
# Per-image enrich work (decode + sharpness + pHash + thumbnail + hot copy) against ImageIO decode alone, one core,
# one JVM, modes taking turns. The frames are the simulator's 320x240 JPEGs (bench preset), written once and reused.
#
# usage: bench/enrich.sh [FRAMES] [RUNS]     (defaults: 1500 frames, 5 runs)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FRAMES="${1:-1500}"
RUNS="${2:-5}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/enrich"
FLEET="$SCRATCH/fleet-320x240"
mkdir -p "$SCRATCH"
if [ ! -f "$FLEET/ground_truth.json" ]; then
  "$ROOT/flywheel" sim --preset bench --episodes 2 --robots 1 --duration 10 --resolution 320x240 --out "$FLEET" \
      --force >/dev/null
fi
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec taskset -c 0 java --add-opens=java.base/java.nio=ALL-UNNAMED -XX:+UseParallelGC -Xmx2g \
  -Djava.io.tmpdir="$SCRATCH" -Dorg.bytedeco.javacpp.cachedir="${XDG_CACHE_HOME:-$HOME/.cache}/flywheel/javacpp" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.EnrichBench "$FLEET" "$FRAMES" "$RUNS"
