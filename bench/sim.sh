#!/usr/bin/env bash
# Fleet simulator speed: real-time factor on one core at 320x240 (three cameras at 30 Hz, joints at
# 200 Hz, commands at 50 Hz), with the libjpeg-turbo encoder (OpenCV) against the pure-Java ImageIO
# encoder as the peer, in one script run. Prints one JSON line per encoder and the ratio.
#
# usage: bench/sim.sh [EPISODES] [SECONDS]     (defaults: 8 episodes of 30 s = 240 s of recording)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EPISODES="${1:-8}"
SECONDS_PER_EPISODE="${2:-30}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/sim"
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
"$ROOT/flywheel" --version >/dev/null # build first, outside the timing

declare -A RTF
for enc in opencv imageio; do
  out="$SCRATCH/$enc"
  line=$(taskset -c 0 "$ROOT/flywheel" sim --preset bench --episodes "$EPISODES" --robots 2 \
      --duration "$SECONDS_PER_EPISODE" --resolution 320x240 --threads 1 --jpeg "$enc" --out "$out" --json \
      2>/dev/null | tr -d '\n ')
  rtf=$(echo "$line" | sed -E 's/.*"real_time_factor":([0-9.eE+-]+).*/\1/')
  fps=$(echo "$line" | sed -E 's/.*"frames_per_second":([0-9.eE+-]+).*/\1/')
  mb=$(echo "$line" | sed -E 's/.*"bytes":([0-9]+).*/\1/')
  RTF[$enc]=$rtf
  echo "{\"encoder\":\"$enc\",\"episodes\":$EPISODES,\"seconds_per_episode\":$SECONDS_PER_EPISODE,\"real_time_factor\":$rtf,\"camera_frames_per_s\":$fps,\"bytes\":$mb}"
  rm -rf "$out"
done
python3 - "${RTF[opencv]}" "${RTF[imageio]}" <<'PY'
import sys
o, i = float(sys.argv[1]), float(sys.argv[2])
print(f"one core, 320x240: {o:.1f}x real time with libjpeg-turbo (OpenCV), {i:.1f}x with ImageIO: ratio {o/i:.2f}; goal >= 10x real time")
PY
