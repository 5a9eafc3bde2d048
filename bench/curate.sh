#!/usr/bin/env bash
# Curation speed: Lance IVF-PQ vector search (recall@10, queries/s, index build) against exact brute force
# (Java loop, and Lance's flat scan), pHash pair search by multi-index hashing against the all-pairs baseline,
# and training-set build time on a generated lake; one JVM, all cores.
# Prints one JSON line per measurement (see io.flywheel.bench.CurateBench).
#
# usage: bench/curate.sh [MODE N P]...   MODE N P: vectors ROWS DIM | phash HASHES T | trainset EPISODES FRAMES
#   (default: phash 1000000 4, phash 1000000 8, vectors 100000 96, vectors 1000000 96, vectors 100000 768,
#    trainset 5000 200)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/curate"
mkdir -p "$SCRATCH"
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
if [ $# -eq 0 ]; then
  set -- phash 1000000 4 phash 1000000 8 vectors 100000 96 vectors 1000000 96 vectors 100000 768 \
    trainset 5000 200
fi
exec java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx6g -XX:+UseParallelGC -Djava.io.tmpdir="$SCRATCH" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.CurateBench "$SCRATCH" "$@" \
  2> >(grep -v 'SLF4J' >&2)
