#!/usr/bin/env bash
# Alignment speed: flywheel-core's Aligner (linear merge) against a naive per-frame scan, one core, one JVM run.
# Prints one JSON line per method (nearest, asof, interpolate).
#
# usage: bench/align.sh [MESSAGES] [NAIVE_MESSAGES]   (defaults: 10000000 and 20000)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
mvn -B -q -pl flywheel-core -am test-compile >/dev/null
CP="flywheel-core/target/classes:flywheel-core/target/test-classes"
exec taskset -c 0 java -Xmx3g -XX:+UseParallelGC -cp "$CP" io.flywheel.align.AlignBench "${1:-10000000}" "${2:-20000}"
