#!/usr/bin/env bash
# rosbag2 sqlite3 storage against MCAP on the same messages, one core, one JVM, the readers taking turns each
# round: the real twins of ../shared/data (talker, cdr_test: the same recording in both storages, read whole
# PASSES times), and a generated arm recording of MESSAGES JointState messages written once as a sqlite3 bag
# and as MCAP (uncompressed and zstd chunks), read with decoding and ingested. Prints a markdown table of medians
# and the sqlite3 / MCAP ratios (see BENCHMARKS.md).
#
# usage: bench/rosbag2-sqlite.sh [ROUNDS] [MESSAGES] [PASSES]     (defaults: 7 rounds, 200000 messages, 200 passes)
set -euo pipefail
ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
ROUNDS="${1:-7}"
MESSAGES="${2:-200000}"
PASSES="${3:-200}"
SHARED="${FLYWHEEL_SHARED:-$ROOT/../shared}/data"
[ -d "$SHARED/rosbag2-sqlite3" ] || SHARED="${FLYWHEEL_SHARED:-$ROOT/../shared}"
[ -d "$SHARED/rosbag2-sqlite3" ] || { echo "rosbag2-sqlite.sh: no rosbag2-sqlite3 folder under ../shared/data" >&2; exit 1; }
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/rosbag2-sqlite"
mkdir -p "$SCRATCH"
cd "$ROOT"
{ mvn -B -q -o -ntp -DskipTests package -pl flywheel-bench -am || mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am; } \
  2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec taskset -c 0 java --add-opens=java.base/java.nio=ALL-UNNAMED -XX:+UseParallelGC -Xmx2g -Djava.io.tmpdir="$SCRATCH" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.Rosbag2SqliteBench \
  "$SHARED" "$SCRATCH" "$ROUNDS" "$MESSAGES" "$PASSES"
