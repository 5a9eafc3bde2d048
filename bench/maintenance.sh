#!/usr/bin/env bash
# Random take from the frames table after 1,000 small appends (one lake commit of one 10-frame episode each, the
# maintenance routine off), before and after compaction: a copy of the lake is compacted and cleaned up (what
# `flywheel lake compact` and `flywheel lake cleanup --older-than 0s` do), then both are read in one JVM, rounds
# alternating which goes first (the machine is shared: compare the ratios). Each round takes 64 random rows (a training
# batch: state, action, timestamp, image locators) and 1 random row from each lake; every 10th round also times
# opening the table. Every row read is checked by value (row r has state[0] = r). The appended lake is built once under
# the scratch folder and reused.
#
# usage: bench/maintenance.sh [APPENDS] [ROWS] [ROUNDS] [BATCH]    (defaults: 1000 appends of 10 rows, 400 rounds, 64)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/maintenance"
mkdir -p "$SCRATCH"
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx2g -Djava.io.tmpdir="$SCRATCH" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.MaintenanceBench "$SCRATCH" \
  "${1:-1000}" "${2:-10}" "${3:-400}" "${4:-64}"
