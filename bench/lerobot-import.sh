#!/usr/bin/env bash
# LeRobot import rate: `Ingest.read` of a LeRobotDataset v3.0 folder (metadata, data Parquet into Java values, one
# MP4 sample lookup per frame, SHA-256 of every file, the episode model; no lake commit) against a plain read of the
# same data (the data Parquet through parquet-java into Java values and the MP4's sample table). One JVM, one core,
# the two taking turns; the dataset (E episodes x F frames at 30 fps, 14-dim state and action, one 64x48 H.264
# camera) is written by the benchmark with Apache Parquet Java. Prints one JSON line per mode.
#
# usage: bench/lerobot-import.sh [EPISODES] [FRAMES] [RUNS]    (defaults: 20, 500, 5)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/lerobot-import"
mkdir -p "$SCRATCH"
cd "$ROOT"
mvn -B -q -ntp -o -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec taskset -c 0 java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx3g -Djava.io.tmpdir="$SCRATCH" \
  -Dorg.bytedeco.javacpp.cachedir="$SCRATCH/javacpp" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.LeRobotImportBench \
  "${1:-20}" "${2:-500}" "${3:-5}"
