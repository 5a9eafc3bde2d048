#!/usr/bin/env bash
# LeRobot export rate: `LeRobotExporter.export` (what `flywheel export lerobot` runs) of a training set of every frame
# of the LeRobot import benchmark's dataset, against a plain write of the same data (the data rows written with
# parquet-java, and an FFmpeg remux of the same H.264 packets, no re-encode). The dataset is ingested into two lakes,
# enriched with 64x48 hot copies (the source size; exported at the default resolution) and 32x24 ones (exported with
# `--resolution hot`), a set of ratio 1 built in each; all untimed. One JVM, one core, the modes taking turns after 2
# untimed rounds. Prints one JSON line per mode and a rough profile of the export runs.
#
# usage: bench/lerobot-export.sh [EPISODES] [FRAMES] [RUNS]    (defaults: 20, 500, 5)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/lerobot-export"
mkdir -p "$SCRATCH"
cd "$ROOT"
mvn -B -q -ntp -o -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec taskset -c 0 java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx3g -Djava.io.tmpdir="$SCRATCH" \
  -Dorg.bytedeco.javacpp.cachedir="$SCRATCH/javacpp" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.LeRobotExportBench \
  "${1:-20}" "${2:-500}" "${3:-5}"
