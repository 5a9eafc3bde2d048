#!/usr/bin/env bash
# Random batches of 64 samples (state, action, ~20 KB 320x240 JPEG): the Flywheel loader against Lance take alone
# and the same rows in Parquet (parquet-java, default writer and tuned for random access), warm and cold (page
# the bench files evicted from the page cache before each batch, posix_fadvise through dd), loader throughput with image bytes and decoded images, and the
# loader with the lake behind an S3 API (s3proxy, loopback) against a cache warmed from it. One JVM, all methods
# interleaved in one run (the machine is shared: compare ratios, not absolute numbers). Every batch is checked by
# value. The lake and the Parquet files are built once under the scratch folder and reused.
#
# The Parquet peer reads, per batch, only the pages holding the asked rows (row ranges through the page index, one
# ParquetFileReader kept open with its footer and page indexes, as Lance keeps its manifest). The decoded-image
# throughput is reported next to a plain OpenCV decode loop over the same JPEGs on as many threads, run
# alternately with it (the ratio is what to compare on a shared machine).
#
# usage: bench/loader.sh [ROWS] [WARM_BATCHES] [COLD_BATCHES]    (defaults: 20000 rows, 200, 10)
#        LOADER_BENCH_PARTS=latency,cold,throughput,s3 (the default: all) runs only the parts named
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROWS="${1:-20000}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/loader-$ROWS"
mkdir -p "$SCRATCH"
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx6g -Djava.io.tmpdir="$SCRATCH" \
  -Dorg.bytedeco.javacpp.cachedir="$SCRATCH/javacpp" \
  -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.LoaderBench "$SCRATCH" "$ROWS" \
  "${2:-200}" "${3:-10}"
