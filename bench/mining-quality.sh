#!/usr/bin/env bash
# Mining quality on a simulated fleet with ground truth: the curation issue's motivating result, through the CLI.
# Simulates a fleet (5% transparent/reflective objects, 5 glass-cup field failures), ingests and enriches it,
# deduplicates, mines 8 neighbours per failure, builds a uniform 30% training set and the same plus the mined
# episodes, and prints the hard-case share of each (failures are not in either set) and the mining precision
# (hard cases among the distinct mined episodes, from a set of the mined episodes only).
#
# usage: bench/mining-quality.sh OUT_DIR [SEED [EPISODES [MODEL [MINE_OPTIONS...]]]]
#   e.g. bench/mining-quality.sh /tmp/mq 7 300 mobilenet_v2_mac --cameras WRIST_TOPICS --whiten
#   defaults: seed 42, 300 episodes, the default model, mining on the episode embeddings (master camera);
#   STRIDE=k embeds every k-th frame (default: keyframes); HARD_OBJECTS=n sets the hard-object episodes (default
#   EPISODES / 20; the 539-episode preset has 22); REUSE_LAKE=1 keeps an enriched OUT_DIR/lake and only mines and
#   builds the sets again (new tags each run)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:?usage: bench/mining-quality.sh OUT_DIR [SEED [EPISODES [MODEL [MINE_OPTIONS...]]]]}"
SEED="${2:-42}"
EPISODES="${3:-300}"
MODEL="${4:-}"
shift $(( $# < 4 ? $# : 4 ))
FW="$ROOT/flywheel"
HARD="object=glass_cup,wine_glass,steel_tumbler"
mkdir -p "$OUT"
t0=$SECONDS
if [ ! -f "$OUT/fleet/ground_truth.json" ]; then
  "$FW" sim --preset motivating --episodes "$EPISODES" --hard-objects "${HARD_OBJECTS:-$(( EPISODES / 20 ))}" --glass-failures 5 \
    --duration 2 --resolution 320x240 --seed "$SEED" --out "$OUT/fleet" >/dev/null
fi
if [ -z "${REUSE_LAKE:-}" ] || [ ! -d "$OUT/lake" ]; then
  rm -rf "$OUT/lake"
  "$FW" init "$OUT/lake" >/dev/null
  "$FW" ingest "$OUT/lake" "$OUT/fleet" --json >/dev/null
  "$FW" enrich "$OUT/lake" --stride "${STRIDE:-keyframes}" ${MODEL:+--model "$MODEL"} --json >/dev/null
  "$FW" dedup "$OUT/lake" --json >/dev/null
fi
"$FW" mine "$OUT/lake" --failures -k 8 --out "$OUT/mined.json" "$@" --json >"$OUT/mine.json"
R="$(date +%s)" # tags of this run (a reused lake keeps the earlier runs' sets)
"$FW" trainset build "$OUT/lake" --tag "uniform-$R" --ratio 0.3 --seed 1 --json >/dev/null
"$FW" trainset build "$OUT/lake" --tag "mined-$R" --ratio 0.3 --seed 1 --mined "$OUT/mined.json" --json >/dev/null
"$FW" trainset build "$OUT/lake" --tag "mined-only-$R" --ratio 0 --seed 1 --mined "$OUT/mined.json" --json >/dev/null
"$FW" trainset diff "$OUT/lake" "uniform-$R" "mined-$R" --hard-case "$HARD" --no-chart --json >"$OUT/diff.json"
"$FW" trainset diff "$OUT/lake" "uniform-$R" "mined-only-$R" --hard-case "$HARD" --no-chart --json >"$OUT/precision.json"
"$FW" trainset build "$OUT/lake" --tag "pool-$R" --ratio 1 --seed 1 --json >/dev/null
"$FW" trainset diff "$OUT/lake" "uniform-$R" "pool-$R" --hard-case "$HARD" --no-chart --json >"$OUT/pool.json"
node -e '
const fs = require("fs");
const d = JSON.parse(fs.readFileSync(process.argv[1])), p = JSON.parse(fs.readFileSync(process.argv[2]));
const pool = JSON.parse(fs.readFileSync(process.argv[3]));
const hard = (x, side) => Math.round(x["hard_share_" + side] * x[side + "_episodes"]);
const u = d.hard_share_from, m = d.hard_share_to;
// The best any mining of this many episodes can do for this uniform draw: every hard case of the pool mined
// (those outside the uniform set first), the remaining slots non-hard, of which the uniform set already holds its
// share (expected value).
const U = d.from_episodes, HU = hard(d, "from"), N = pool.to_episodes, H = hard(pool, "to"), M = p.to_episodes;
const newHard = Math.min(M, H - HU), fill = Math.max(0, M - H) * (1 - (U - HU) / Math.max(1, N - H));
const best = (HU + newHard) / (U + newHard + fill);
console.log(JSON.stringify({seed: +process.argv[4], episodes: +process.argv[5], model: process.argv[6] || "default",
  mine_options: process.argv.slice(8).join(" "),
  uniform: {episodes: d.from_episodes, hard: hard(d, "from"), share: +u.toFixed(4)},
  uniform_plus_mined: {episodes: d.to_episodes, hard: hard(d, "to"), share: +m.toFixed(4)},
  lift: +(m / u).toFixed(2),
  lift_over_pool_share: +(m / (H / N)).toFixed(2),
  pool: {episodes: N, hard: H}, best_possible: {share: +best.toFixed(4), lift: +(best / u).toFixed(2)},
  mined_distinct: p.to_episodes, mined_hard: hard(p, "to"), precision: +p.hard_share_to.toFixed(4),
  seconds: +process.argv[7]}));
' "$OUT/diff.json" "$OUT/precision.json" "$OUT/pool.json" "$SEED" "$EPISODES" "$MODEL" $(( SECONDS - t0 )) "$@"
