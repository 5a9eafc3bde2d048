#!/usr/bin/env bash
# The Flink labelling job through a Kafka broker crash (io.flywheel.stream.bench.BrokerKillCheck): one KRaft node in
# a child JVM is killed with SIGKILL mid-stream and started again on the same logs and port; every episode must end
# with exactly one label_history entry, equal to the truth. Prints one JSON line; exit 1 when it fails. Kept out of
# the test suite for its cost (two broker starts in child JVMs and a 45 s idleness, two to three minutes on
# 2 cores).
#
# usage: bench/stream-broker-kill.sh [EPISODES]   (default 30)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/stream-broker-kill"
cd "$ROOT"
mkdir -p "$(dirname "$SCRATCH")"
mvn -B -q -ntp -o -pl flywheel-stream -am test-compile dependency:build-classpath -Dmdep.outputFile="$SCRATCH.cp" \
    -Dmdep.includeScope=test 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/tmp"
CP="flywheel-stream/target/classes:flywheel-stream/target/test-classes:$(cat "$SCRATCH.cp")"
java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx2g -Djava.io.tmpdir="$SCRATCH/tmp" -cp "$CP" \
    io.flywheel.stream.bench.BrokerKillCheck "$SCRATCH/run" "${1:-30}" 2>"$SCRATCH/stderr.log" | grep '^{'
