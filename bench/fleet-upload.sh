#!/usr/bin/env bash
# N robots uploading one file each at once to a `flywheel gateway` upload service on loopback (io.flywheel.bench.
# UploadBench: real gRPC channels, one per robot, BEGIN/CHUNK/END with a window of unacknowledged chunks), against a
# plain copy of the same bytes to the same disk by N threads, in the same JVM and run. Prints total MB/s of each, the
# ratio, the chunk acknowledgement latency (p50, p99) and the heap in use at most.
#
# usage: bench/fleet-upload.sh [ROBOTS] [MIB_PER_ROBOT] [CHUNK_KIB] [WINDOW]    (defaults: 25 64 256 8)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROBOTS="${1:-25}"
MIB="${2:-64}"
CHUNK="${3:-256}"
WINDOW="${4:-8}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/fleet-upload"
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/tmp"
java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx512m -Djava.io.tmpdir="$SCRATCH/tmp" \
    -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.UploadBench \
    "$SCRATCH/run" "$ROBOTS" "$MIB" "$CHUNK" "$WINDOW" 2>/dev/null | tee "$SCRATCH/result.json"
python3 - "$SCRATCH/result.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print("%d robots x %d MiB: upload %.1f MB/s vs plain copy %.1f MB/s (%.2fx of the copy); chunk ack p50 %.2f ms,"
      " p99 %.2f ms; %d/%d landed, bytes %s; heap at most %d MB (-Xmx512m); %.1f CPU-s in %.1f s" % (r["robots"],
      r["mib_per_robot"],
      r["upload_mb_s"], r["copy_mb_s"], r["ratio_to_copy"], r["ack_p50_ms"], r["ack_p99_ms"], r["landed"], r["robots"],
      "ok" if r["landed_bytes_ok"] else "WRONG", r["heap_max_mb"], r["cpu_s"], r["upload_s"]))
PY
rm -rf "$SCRATCH/run"
