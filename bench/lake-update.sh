#!/usr/bin/env bash
# One column of every frame updated, in one run: the lake's column-scoped update (LakeUpdateBench) against the
# whole-row merge-insert upsert of the code before it (bench/baseline/LakeUpdateBaseline.java, compiled against a
# build of commit 80f5774 unpacked in a scratch folder). Both build the same lake of EPISODES x FRAMES frames first.
#
# usage: bench/lake-update.sh [EPISODES] [FRAMES]      (defaults: 1000 episodes of 1000 frames = 10^6 frames)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EPISODES="${1:-1000}"
FRAMES="${2:-1000}"
BASE_COMMIT=80f5774
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/lake-update"
BASE="$SCRATCH/baseline-$BASE_COMMIT"
mkdir -p "$SCRATCH/tmp"
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
if [ ! -d "$BASE/flywheel-bench/target/lib" ]; then
  rm -rf "$BASE" && mkdir -p "$BASE"
  git archive "$BASE_COMMIT" | tar -x -C "$BASE"
  (cd "$BASE" && mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am) 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
fi
mkdir -p "$SCRATCH/baseline-classes"
javac -d "$SCRATCH/baseline-classes" -cp "$BASE/flywheel-bench/target/lib/*" bench/baseline/LakeUpdateBaseline.java
JAVA=(java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx10g -Djava.io.tmpdir="$SCRATCH/tmp")
rm -rf "$SCRATCH/lake-new" "$SCRATCH/lake-old"
echo "frames: $((EPISODES * FRAMES)) ($EPISODES episodes x $FRAMES)" >&2
"${JAVA[@]}" -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.LakeUpdateBench \
    "$SCRATCH/lake-new" "$EPISODES" "$FRAMES" | tee "$SCRATCH/new.json"
"${JAVA[@]}" -cp "$SCRATCH/baseline-classes:$BASE/flywheel-bench/target/lib/*" io.flywheel.bench.LakeUpdateBaseline \
    "$SCRATCH/lake-old" "$EPISODES" "$FRAMES" | tee "$SCRATCH/old.json"
python3 - "$SCRATCH/new.json" "$SCRATCH/old.json" <<'PY'
import json, sys
new, old = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3])
print("column-scoped update: %.2f s, %.1f MB written; whole-row upsert: %.2f s, %.1f MB written; %.1fx faster,"
      " %.1fx fewer bytes; checks %s/%s" % (new["update_s"], new["bytes_written"] / 1e6, old["update_s"],
      old["bytes_written"] / 1e6, old["update_s"] / new["update_s"], old["bytes_written"] / max(1, new["bytes_written"]),
      new["check"], old["check"]))
PY
