#!/usr/bin/env bash
# Embedding throughput per model (images/s), ONNX Runtime intra-op threads 1 and 2, batch 1, 8 and 32,
# on the real 640x480 camera images of shared/data/camera/widowx-tictactoe (decoded before timing).
# Models: the built-in ones from the user's model cache (`flywheel models pull --model all`), else the
# reference files in shared/models (the MAC model only from the cache). One JSON line per configuration; vs_batch1 is the speed-up over
# batch 1 at the same thread count. InceptionV3 runs a quarter of the images (it is ~12x slower).
#
# usage: bench/embed.sh [IMAGES] [RUNS]     (defaults: 64 images, best of 3 runs)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
IMAGES="${1:-64}"
RUNS="${2:-3}"
SHARED="${FLYWHEEL_SHARED:-$ROOT/../shared}"
CACHE="${FLYWHEEL_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flywheel/models}"
MODELS=()
for id in mobilenet_v2_block10_gap inception_v3_mixed5_gap; do
  if [ -f "$CACHE/$id.onnx" ]; then MODELS+=("$CACHE/$id.onnx"); else MODELS+=("$SHARED/models/$id.onnx"); fi
done
# the MAC model has no reference file: only from the cache (`flywheel models pull --model mobilenet_v2_mac`)
if [ -f "$CACHE/mobilenet_v2_block10_mac.onnx" ]; then MODELS+=("$CACHE/mobilenet_v2_block10_mac.onnx"); fi
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
exec taskset -c 0,1 java -Xmx2g -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" \
  io.flywheel.bench.EmbedBench "$SHARED/data/camera/widowx-tictactoe" "$IMAGES" "$RUNS" "${MODELS[@]}"
