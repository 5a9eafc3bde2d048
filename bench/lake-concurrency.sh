#!/usr/bin/env bash
# Two ingest processes against one, into one lake, in one run: the simulated fleet's recordings ingested by one
# `flywheel ingest`, then split in two halves ingested by two concurrent processes, then the whole fleet given to
# both processes at once (every recording offered twice). Prints wall times, the speed-up, and the row counts of each
# lake (raw_files, episodes, frames must be equal, with no duplicate episode or raw file).
#
# usage: bench/lake-concurrency.sh [EPISODES] [SECONDS]    (defaults: 24 episodes of 10 s, 320x240)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EPISODES="${1:-24}"
SECONDS_PER_EPISODE="${2:-10}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/lake-concurrency"
FLEET="$SCRATCH/fleet-$EPISODES-$SECONDS_PER_EPISODE"
FW="$ROOT/flywheel"
mkdir -p "$SCRATCH"
if [ ! -f "$FLEET/ground_truth.json" ]; then
  "$FW" sim --preset bench --episodes "$EPISODES" --robots 4 --duration "$SECONDS_PER_EPISODE" \
      --resolution 320x240 --out "$FLEET" --force >/dev/null
fi
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
counts() {
  java --add-opens=java.base/java.nio=ALL-UNNAMED -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" \
      io.flywheel.bench.LakeCounts "$1" 2>/dev/null
}
# the halves: every other recording, as symbolic links
rm -rf "$SCRATCH/half-a" "$SCRATCH/half-b"
mkdir -p "$SCRATCH/half-a" "$SCRATCH/half-b"
i=0
for f in $(find "$FLEET" -name '*.mcap' | sort); do
  if [ $((i % 2)) -eq 0 ]; then d="$SCRATCH/half-a"; else d="$SCRATCH/half-b"; fi
  ln -s "$f" "$d/$(basename "$(dirname "$f")")-$(basename "$f")"
  i=$((i + 1))
done
now() { date +%s.%N; }
rm -rf "$SCRATCH/one" "$SCRATCH/two" "$SCRATCH/both"
"$FW" init "$SCRATCH/one" >/dev/null && "$FW" init "$SCRATCH/two" >/dev/null && "$FW" init "$SCRATCH/both" >/dev/null
t0=$(now); "$FW" ingest "$SCRATCH/one" "$FLEET" >/dev/null 2>&1; t1=$(now)
"$FW" ingest "$SCRATCH/two" "$SCRATCH/half-a" >/dev/null 2>&1 & a=$!
"$FW" ingest "$SCRATCH/two" "$SCRATCH/half-b" >/dev/null 2>&1 & b=$!
wait $a; wait $b; t2=$(now)
"$FW" ingest "$SCRATCH/both" "$FLEET" >/dev/null 2>&1 & a=$!
"$FW" ingest "$SCRATCH/both" "$FLEET" >/dev/null 2>&1 & b=$!
wait $a; wait $b; t3=$(now)
echo "one process:                   $(python3 -c "print('%.1f s' % ($t1 - $t0))")  $(counts "$SCRATCH/one")"
echo "two processes, halves:         $(python3 -c "print('%.1f s' % ($t2 - $t1))")  $(counts "$SCRATCH/two")"
echo "two processes, the same files: $(python3 -c "print('%.1f s' % ($t3 - $t2))")  $(counts "$SCRATCH/both")"
python3 -c "print('speed-up of two processes over one: %.2fx' % (($t1 - $t0) / ($t2 - $t1)))"
