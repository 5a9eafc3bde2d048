#!/usr/bin/env bash
# MCAP read + decode benchmark: Flywheel's Java reader against the reference TypeScript stack
# (@mcap/core + @foxglove/rosmsg2-serialization in Node) on the SAME file, each pinned to one core,
# in one script run. Prints a table of ratios; raw JSON lines go to $SCRATCH/results-*.jsonl.
#
# usage: bench/mcap-read.sh [--scratch DIR] [--duration SECONDS] [--rounds N] [--runs N] [--warmup N]
#                           [--cpu N] [--no-twin] [--regen]
#   --scratch   where the recording, the peer's node_modules and the results go (default /tmp/flywheel-bench;
#               an existing recording of the same duration and seed is reused)
#   --duration  recording length in seconds (default 275, about 1.0 GB)
#   --rounds    rounds (default 3); each round runs one JVM (every mode --warmup times untimed, then
#               --runs times timed, modes taking turns; defaults 2 and 3) and then one Node process per
#               peer mode, so that the noise of a shared machine falls on both sides alike; the table
#               shows the median over all timed runs of each mode
#   --cpu       the core both sides are pinned to with taskset (default 0)
#   --no-twin   skip the uncompressed twin file
#   --regen     write the recording again even if present
set -euo pipefail
ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
SCRATCH=/tmp/flywheel-bench
DURATION=275
ROUNDS=3
RUNS=3
WARMUP=2
CPU=0
TWIN=1
REGEN=0
SEED=1
while [ $# -gt 0 ]; do
  case "$1" in
    --scratch) SCRATCH="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --cpu) CPU="$2"; shift 2 ;;
    --no-twin) TWIN=0; shift ;;
    --regen) REGEN=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "mcap-read.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
PEER_SRC="$ROOT/../shared/tools/mcap-peer-bench"
CAMERA_DIR="${FLYWHEEL_SHARED:-$ROOT/../shared/data}/camera"
for tool in java mvn node npm taskset; do
  command -v "$tool" >/dev/null 2>&1 || { echo "mcap-read.sh: '$tool' is required" >&2; exit 127; }
done
[ -d "$PEER_SRC" ] || { echo "mcap-read.sh: peer benchmark not found at $PEER_SRC" >&2; exit 1; }
[ -d "$CAMERA_DIR" ] || { echo "mcap-read.sh: camera stills not found at $CAMERA_DIR" >&2; exit 1; }
mkdir -p "$SCRATCH"

echo "== building flywheel-bench" >&2
(cd "$ROOT" && { mvn -B -q -o -ntp -DskipTests package -pl flywheel-bench -am >&2 \
  || mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am >&2; })
CP="$ROOT/flywheel-bench/target/flywheel-bench.jar:$ROOT/flywheel-bench/target/lib/*"
# One core: the JIT and GC share it with the reading thread, as the peer's V8 does.
JAVA=(taskset -c "$CPU" java -XX:+UseParallelGC -Xms3g -Xmx3g -XX:+AlwaysPreTouch -cp "$CP")

ZST="$SCRATCH/robot_zstd_${DURATION}s_seed${SEED}.mcap"
NONE="$SCRATCH/robot_none_${DURATION}s_seed${SEED}.mcap"
if [ "$REGEN" = 1 ] || [ ! -f "$ZST.gen.json" ] || { [ "$TWIN" = 1 ] && [ ! -f "$NONE" ]; }; then
  echo "== writing the recording ($DURATION s) with McapWriter into $SCRATCH (takes a few minutes)" >&2
  rm -f "$ZST" "$ZST.gen.json" "$NONE"
  GEN=(--camera-dir "$CAMERA_DIR" --out "$ZST" --duration "$DURATION" --seed "$SEED")
  [ "$TWIN" = 1 ] && GEN+=(--out-none "$NONE")
  java -Xmx2g -cp "$CP" io.flywheel.bench.McapBenchFile "${GEN[@]}" >&2
else
  echo "== reusing $ZST" >&2
fi

PEER="$SCRATCH/peer"
if [ ! -d "$PEER/node_modules" ] || ! cmp -s "$PEER_SRC/package-lock.json" "$PEER/package-lock.json"; then
  echo "== installing the Node peer into $PEER (npm ci)" >&2
  rm -rf "$PEER"; mkdir -p "$PEER"
  cp "$PEER_SRC"/package.json "$PEER_SRC"/package-lock.json "$PEER_SRC"/*.mjs "$PEER/"
  (cd "$PEER" && npm ci --no-audit --no-fund --loglevel=error >&2)
else
  cp "$PEER_SRC"/*.mjs "$PEER/"
fi

OUT="$SCRATCH/results-$(date +%Y%m%d-%H%M%S).jsonl"
: > "$OUT"
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
peer() { # label mode file [flags]
  local label=$1; shift
  (cd "$PEER" && taskset -c "$CPU" node bench.mjs "$@") | sed "s/^{/{\"impl\":\"node-peer\",\"label\":\"$label\",/" \
    | tee -a "$OUT" >&2
}
for round in $(seq "$ROUNDS"); do
  echo "== round $round/$ROUNDS: ours (java, core $CPU), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  "${JAVA[@]}" io.flywheel.bench.McapReadBench "$ZST" --runs "$RUNS" --warmup "$WARMUP" --label zstd \
    | tee -a "$OUT" >&2
  if [ "$TWIN" = 1 ]; then
    "${JAVA[@]}" io.flywheel.bench.McapReadBench "$NONE" --modes indexed-generic,indexed-fast,stream \
      --runs "$RUNS" --warmup "$WARMUP" --label none | tee -a "$OUT" >&2
  fi
  echo "== round $round/$ROUNDS: peer (node, core $CPU)" >&2
  peer zstd indexed-all "$ZST"
  peer zstd-nocopy indexed-all "$ZST" --no-copy
  peer zstd indexed-none "$ZST"
  peer zstd stream "$ZST"
  peer zstd zstd "$ZST"
  if [ "$TWIN" = 1 ]; then
    peer none indexed-all "$NONE"
  fi
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg); results: $OUT" >&2
node "$ROOT/bench/mcap-read-table.mjs" "$OUT" "$ZST.gen.json"
