#!/usr/bin/env bash
# Spark ingest against the one-machine ingest on the same simulated fleet: `spark ingest` on local[1] and local[2]
# (each a child JVM with a fresh Spark session, its start included) and `ingest`, each into a fresh lake. Prints the
# wall time of each and the ratios: local[1] / local[2] (the speed-up of a second core) and local[1] / ingest (Spark's
# overhead on one core). Each Spark run also reports its job and commit times on its summary line.
#
# usage: bench/spark.sh [EPISODES] [SECONDS]     (defaults: 16 episodes of 10 s, 320x240)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EPISODES="${1:-16}"
SECONDS_PER_EPISODE="${2:-10}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/spark"
FLEET="$SCRATCH/fleet-$EPISODES-$SECONDS_PER_EPISODE"
mkdir -p "$SCRATCH"
if [ ! -f "$FLEET/ground_truth.json" ]; then
  "$ROOT/flywheel" sim --preset bench --episodes "$EPISODES" --robots 4 --duration "$SECONDS_PER_EPISODE" \
      --resolution 320x240 --out "$FLEET" --force >/dev/null
fi
run() { # NAME COMMAND...: prints NAME and seconds, keeps the summary line
  local name="$1"; shift
  local lake="$SCRATCH/lake-$name"
  rm -rf "$lake"
  "$ROOT/flywheel" init "$lake" >/dev/null
  local t0 t1
  t0=$(date +%s.%N)
  "$@" "$lake" "$FLEET" >"$SCRATCH/$name.out" 2>"$SCRATCH/$name.err"
  t1=$(date +%s.%N)
  echo "$name $(echo "$t1 - $t0" | bc -l)"
  tail -1 "$SCRATCH/$name.out" >&2
}
ingest=$(run ingest "$ROOT/flywheel" ingest | cut -d' ' -f2)
one=$(run local1 "$ROOT/flywheel" spark ingest --master 'local[1]' | cut -d' ' -f2)
two=$(run local2 "$ROOT/flywheel" spark ingest --master 'local[2]' | cut -d' ' -f2)
printf '{"episodes": %d, "ingest_s": %.1f, "spark_local1_s": %.1f, "spark_local2_s": %.1f, "speedup_local2_over_local1": %.2f, "overhead_local1_over_ingest": %.2f}\n' \
  "$EPISODES" "$ingest" "$one" "$two" "$(echo "$one / $two" | bc -l)" "$(echo "$one / $ingest" | bc -l)"
