#!/usr/bin/env bash
# Simulated episodes streamed live (StreamObservations) through a `flywheel gateway` on loopback with the robot-side
# frame filter at several pHash thresholds and without it (io.flywheel.bench.LiveStreamBench), against the file upload
# of the same recordings in the same run. Prints per threshold: message bytes offered and sent, % of uplink saved,
# camera frames skipped, throughput (MB/s offered, messages/s, x real time), and the robot's cost per frame hashed.
#
# usage: bench/live-stream.sh [EPISODES] [SECONDS] [ROBOTS] [WIDTHxHEIGHT] [THRESHOLDS]
#        (defaults: 8 20 4 320x240 off,0,2,4,6,8,12). EPISODES may be a folder of recorded MCAP files instead, e.g.
#        ../shared/data/camera/bridge-mcap (real BridgeData frames): streamed as they are, SECONDS and the size ignored.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EPISODES="${1:-8}"
SECONDS_PER_EPISODE="${2:-20}"
ROBOTS="${3:-4}"
RES="${4:-320x240}"
THRESHOLDS="${5:-off,0,2,4,6,8,12}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/live-stream"
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/tmp"
java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx2g -Djava.io.tmpdir="$SCRATCH/tmp" \
    -Dorg.bytedeco.javacpp.cachedir="$SCRATCH/javacpp" \
    -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.LiveStreamBench \
    "$SCRATCH/run" "$EPISODES" "$SECONDS_PER_EPISODE" "$ROBOTS" "${RES%x*}" "${RES#*x}" "$THRESHOLDS" 2>/dev/null \
    | tee "$SCRATCH/result.json"
python3 - "$SCRATCH/result.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
fleet = next(r for r in rows if r["run"] == "fleet")
up = next(r for r in rows if r["run"] == "upload")
still = "n/a" if fleet["resolution"] == "recorded" else "%.1f%%" % (100 * fleet["static_share"])
print("%d episodes, %.0f s of %s video on %d robots (%.1f MB of MCAP; robots still %s of the time); pHash on the"
      " robot %.2f ms/frame (%.0f%% of a core at 90 frames/s); file upload of the same: %.1f MB/s" % (
      fleet["episodes"], fleet["episode_s"], fleet["resolution"], fleet["robots"], fleet["file_bytes"] / 1e6, still,
      fleet["hash_ms_per_frame"], fleet["hash_ms_per_frame"] * 9, up["mb_s"]))
print("%-9s %10s %9s %7s %14s %6s %9s %7s %7s %6s %8s  %s" % ("threshold", "offered MB", "sent MB", "saved",
      "frames skipped", "exact", "in still", "MB/s", "msg/s", "x real", "vs upload", "skipped per camera"))
for r in rows:
    if r["run"] != "live":
        continue
    t = "off" if r["threshold"] < 0 else "%d bits" % r["threshold"]
    cams = ", ".join("%s %.0f%%" % (k.strip("/").split("/")[0], 100 * v) for k, v in sorted(r["skipped_by_topic"].items()))
    print("%-9s %10.2f %9.2f %6.1f%% %8d/%-5d %6d %4d/%-4d %7.1f %7.0f %6.1f %8.2fx  %s" % (t,
          r["bytes_offered"] / 1e6, r["bytes_sent"] / 1e6, 100 * r["uplink_saved"], r["frames_skipped"], r["frames"],
          r["skipped_exact"], r["still_skipped"], r["still_frames"], r["mb_s_offered"], r["msgs_s"], r["x_real_time"],
          r["mb_s_offered"] / up["mb_s"], cams))
PY
rm -rf "$SCRATCH/run"
