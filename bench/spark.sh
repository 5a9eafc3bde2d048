#!/usr/bin/env bash
# The batch stages on Spark against the one-machine CLI on the same simulated fleet. For each stage in STAGES (default:
# ingest), the stage runs as the one-machine command, then as `spark STAGE` on local[1] and local[2] (each a child JVM
# with a fresh Spark session, its start included), each into a fresh lake. Prints one line per run (name, wall s,
# the command's summary line on stderr) and one JSON line per stage: wall times, the ratios local[1] / local[2] (the
# speed-up of a second core) and local[1] / CLI (Spark's overhead on one core), frames and recording bytes, the
# per-core rates (frames/s and MB/s of recordings on local[1]) and the load average before and after.
#
# usage: bench/spark.sh [EPISODES] [SECONDS]     (defaults: 16 episodes of 10 s, 320x240)
#        STAGES="ingest enrich" bench/spark.sh 200   (a stage NAME needs a function stage_NAME, see stage_ingest;
#        enrich: ENRICH_MODEL=none|mobilenet_v2|FILE.onnx, default none)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EPISODES="${1:-16}"
SECONDS_PER_EPISODE="${2:-10}"
STAGES="${STAGES:-ingest}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/spark"
FLEET="$SCRATCH/fleet-$EPISODES-$SECONDS_PER_EPISODE"
mkdir -p "$SCRATCH"
if [ ! -f "$FLEET/ground_truth.json" ]; then
  "$ROOT/flywheel" sim --preset bench --episodes "$EPISODES" --robots 4 --duration "$SECONDS_PER_EPISODE" \
      --resolution 320x240 --out "$FLEET" --force >/dev/null
fi
FLEET_BYTES=$(find "$FLEET" -type f \( -name '*.mcap' -o -name '*.mp4' \) -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')

loadavg() { cut -d' ' -f1 /proc/loadavg; }

run() { # NAME COMMAND...: prints NAME and seconds, keeps the output (last line: the summary or the JSON)
  local name="$1"; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$SCRATCH/$name.out" 2>"$SCRATCH/$name.err"
  t1=$(date +%s.%N)
  echo "$name $(echo "$t1 - $t0" | bc -l)"
  tail -1 "$SCRATCH/$name.out" >&2
}

fresh_lake() { # NAME: a new empty lake at $SCRATCH/lake-NAME
  rm -rf "$SCRATCH/lake-$1"
  "$ROOT/flywheel" init "$SCRATCH/lake-$1" >/dev/null
}

report() { # STAGE CLI_S LOCAL1_S LOCAL2_S FRAMES LOAD_BEFORE: the stage's JSON line
  printf '{"stage": "%s", "episodes": %d, "seconds_per_episode": %d, "frames": %d, "recording_bytes": %d, "cli_s": %.1f, "spark_local1_s": %.1f, "spark_local2_s": %.1f, "speedup_local2_over_local1": %.2f, "overhead_local1_over_cli": %.2f, "local1_frames_per_s": %.1f, "local1_mb_per_s": %.1f, "cli_frames_per_s": %.1f, "cli_mb_per_s": %.1f, "load_before": %s, "load_after": %s}\n' \
    "$1" "$EPISODES" "$SECONDS_PER_EPISODE" "$5" "$FLEET_BYTES" "$2" "$3" "$4" "$(echo "$3 / $4" | bc -l)" \
    "$(echo "$3 / $2" | bc -l)" "$(echo "$5 / $3" | bc -l)" "$(echo "$FLEET_BYTES / 1000000 / $3" | bc -l)" \
    "$(echo "$5 / $2" | bc -l)" "$(echo "$FLEET_BYTES / 1000000 / $2" | bc -l)" "$6" "$(loadavg)"
}

stage_ingest() { # `ingest` vs `spark ingest`; frames from the Spark run's --json
  local before cli one two frames
  before=$(loadavg)
  fresh_lake ingest; fresh_lake ingest-local1; fresh_lake ingest-local2
  cli=$(run ingest "$ROOT/flywheel" ingest "$SCRATCH/lake-ingest" "$FLEET" | cut -d' ' -f2)
  one=$(run spark-ingest-local1 "$ROOT/flywheel" spark ingest "$SCRATCH/lake-ingest-local1" "$FLEET" \
      --master 'local[1]' --json | cut -d' ' -f2)
  two=$(run spark-ingest-local2 "$ROOT/flywheel" spark ingest "$SCRATCH/lake-ingest-local2" "$FLEET" \
      --master 'local[2]' --json | cut -d' ' -f2)
  frames=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$SCRATCH/spark-ingest-local2.out")
  report ingest "$cli" "$one" "$two" "$frames" "$before"
}

stage_enrich() { # `enrich --threads 1` vs `spark enrich` (a task per episode, 1 decode thread each) on copies of
  # one ingested lake; model: $ENRICH_MODEL (default none: image metrics, pHash, hot JPEG, phase); frames from --json
  local before cli one two frames model="${ENRICH_MODEL:-none}"
  fresh_lake enrich
  "$ROOT/flywheel" ingest "$SCRATCH/lake-enrich" "$FLEET" >/dev/null 2>&1
  rm -rf "$SCRATCH/lake-enrich-local1" "$SCRATCH/lake-enrich-local2"
  cp -r "$SCRATCH/lake-enrich" "$SCRATCH/lake-enrich-local1"
  cp -r "$SCRATCH/lake-enrich" "$SCRATCH/lake-enrich-local2"
  before=$(loadavg)
  cli=$(run enrich "$ROOT/flywheel" enrich "$SCRATCH/lake-enrich" --threads 1 --model "$model" --json | cut -d' ' -f2)
  one=$(run spark-enrich-local1 "$ROOT/flywheel" spark enrich "$SCRATCH/lake-enrich-local1" --model "$model" \
      --master 'local[1]' --json | cut -d' ' -f2)
  two=$(run spark-enrich-local2 "$ROOT/flywheel" spark enrich "$SCRATCH/lake-enrich-local2" --model "$model" \
      --master 'local[2]' --json | cut -d' ' -f2)
  frames=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$SCRATCH/spark-enrich-local2.out")
  report enrich "$cli" "$one" "$two" "$frames" "$before"
}

for stage in $STAGES; do
  "stage_$stage"
done
