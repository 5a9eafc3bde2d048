#!/usr/bin/env bash
# QoS 0 telemetry into the lake (io.flywheel.bench.TelemetryBench): JSON messages of about 200 bytes published by
# HiveMQ MQTT 5 clients to Debian's mosquitto, taken by the gateway's TelemetrySubscriber into the telemetry table,
# against mosquitto_sub -t 'fleet/#' > /dev/null taking the same messages from the same broker in the same run.
#
# usage: bench/mqtt-telemetry.sh [MESSAGES] [PUBLISHERS]    (defaults: 300000 4; needs mosquitto and mosquitto_sub)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MESSAGES="${1:-300000}"
PUBLISHERS="${2:-4}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/mqtt-telemetry"
cd "$ROOT"
mvn -B -q -ntp -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/tmp"
java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx2g -Djava.io.tmpdir="$SCRATCH/tmp" \
    -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.TelemetryBench \
    "$SCRATCH/run" "$MESSAGES" "$PUBLISHERS" 2>/dev/null | tee "$SCRATCH/result.json"
python3 - "$SCRATCH/result.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print("%d messages of %d bytes, %d publishers: into the lake %.0f msg/s (%d rows in %d commits; %d dropped by the"
      " broker) vs mosquitto_sub to /dev/null %.0f msg/s%s; %.2fx" % (r["messages"], r["payload_bytes"],
      r["publishers"], r["ours_msgs_s"], r["rows"], r["batches"], r["messages"] - r["received"], r["peer_msgs_s"],
      "" if r["peer_complete"] else " (INCOMPLETE)", r["ours_msgs_s"] / r["peer_msgs_s"]))
PY
rm -rf "$SCRATCH/run"
