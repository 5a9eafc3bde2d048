#!/usr/bin/env bash
# flywheel spark dedup on a standalone Spark cluster on this machine: a master and two workers (one core each)
# started from the Spark jars of the built flywheel-spark module (no Spark installation), the same dedup on one
# machine on a copy of the lake, both summaries printed and their groups compared; the three processes are stopped
# by PID at the end. Without LAKE, the 25 BridgeData episodes are ingested and enriched with the reference model.
#
# usage: bench/spark-standalone.sh [LAKE] [FRAME_BITS] [EPISODE_COSINE]   (defaults: a new lake, 6, 0.01)
#        FLYWHEEL=path/to/flywheel (default: ./flywheel) runs the CLI
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FLYWHEEL="${FLYWHEEL:-$ROOT/flywheel}"
BITS="${2:-6}"
COS="${3:-0.01}"
SCRATCH="$(mktemp -d "${FLYWHEEL_BENCH_DIR:-/tmp}/flywheel-spark-standalone.XXXXXX")"
CP_FILE="$ROOT/flywheel-spark/target/spark-classpath.txt"
[ -f "$CP_FILE" ] || (cd "$ROOT" && mvn -B -q -ntp -pl flywheel-spark -am -DskipTests package)
CP="$ROOT/flywheel-spark/target/classes:$(cat "$CP_FILE")"
FLAGS="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED \
--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
--add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED \
--add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED \
-Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true"

LAKE="${1:-}"
if [ -z "$LAKE" ]; then
  LAKE="$SCRATCH/lake"
  "$FLYWHEEL" init "$LAKE" >/dev/null
  "$FLYWHEEL" ingest "$LAKE" "$ROOT/../shared/data/camera/bridge-mcap" >/dev/null
  "$FLYWHEEL" enrich "$LAKE" --threads 2 --model "$ROOT/../shared/models/mobilenet_v2_block10_gap.onnx" >/dev/null
fi
cp -r "$LAKE" "$SCRATCH/lake-one-machine"

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
URL="spark://127.0.0.1:$PORT"
# a worker builds its executors' command from a Spark home: an empty one here, the classpath comes from the job
export SPARK_HOME="$SCRATCH/spark-home" SPARK_SCALA_VERSION=2.12 SPARK_TESTING=1
mkdir -p "$SPARK_HOME"
PIDS=()
stop() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
# shellcheck disable=SC2086
java $FLAGS -Xmx512m -cp "$CP" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$PORT" \
  --webui-port 0 >"$SCRATCH/master.log" 2>&1 &
PIDS+=($!)
for w in 0 1; do
  mkdir -p "$SCRATCH/work$w"
  # shellcheck disable=SC2086
  java $FLAGS -Xmx512m -cp "$CP" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --cores 1 --memory 1g \
    --webui-port 0 --work-dir "$SCRATCH/work$w" "$URL" >"$SCRATCH/worker$w.log" 2>&1 &
  PIDS+=($!)
done
# the master listens: the job's tasks then wait for the workers' executors by themselves
for _ in $(seq 60); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 1
done
echo "cluster: master $URL and two workers, logs in $SCRATCH" >&2

T0=$(date +%s.%N)
"$FLYWHEEL" spark dedup "$LAKE" --master "$URL" --staging "$SCRATCH/staging" --frame-threshold "$BITS" \
  --episode-threshold "$COS" --conf spark.driver.host=127.0.0.1 --conf spark.executor.memory=512m \
  --conf "spark.executor.extraClassPath=$CP" --conf "spark.executor.extraJavaOptions=$FLAGS" --json \
  >"$SCRATCH/spark.json"
T1=$(date +%s.%N)
"$FLYWHEEL" dedup "$SCRATCH/lake-one-machine" --frame-threshold "$BITS" --episode-threshold "$COS" --json \
  >"$SCRATCH/one.json"
echo "spark dedup on $URL ($(python3 -c "print(round($T1 - $T0, 1))") s with the JVM starts):"
cat "$SCRATCH/spark.json"
echo "executors run by the workers: $(ls -d "$SCRATCH"/work*/app-*/* 2>/dev/null | wc -l)"
python3 - "$SCRATCH/spark.json" "$SCRATCH/one.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["episodes", "episode_groups", "episodes_removed", "frames", "frame_groups", "frames_removed"]
diff = [k for k in keys if a[k] != b[k]]
print("same groups as flywheel dedup" if not diff else "DIFFERENT from flywheel dedup: " + ", ".join(diff))
sys.exit(1 if diff else 0)
PY
