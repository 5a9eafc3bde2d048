#!/usr/bin/env bash
# OLAP over the lake (io.flywheel.bench.OlapBench): DuckDB over Lance scans handed as Arrow streams (Flywheel's path:
# eval report, flywheel sql, telemetry hourly) against DuckDB over Parquet files of the same rows (sorted by robot and
# time, row groups of 1,000,000 rows), in the same run: the 4-dimension cube over EVAL_ROWS eval rows, and one robot's
# day of per-hour joint-temperature p50/p99 over TELEMETRY_ROWS telemetry rows. ClickHouse is measured only when
# clickhouse-server is installed (Debian 18.16 over HTTP); it is not on this machine, so that peer is skipped.
#
# usage: bench/olap.sh [EVAL_ROWS] [TELEMETRY_ROWS] [REPEATS]    (defaults: 10000000 10000000 5)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EVAL_ROWS="${1:-10000000}"
TELEMETRY_ROWS="${2:-10000000}"
REPEATS="${3:-5}"
SCRATCH="${FLYWHEEL_BENCH_DIR:-/tmp/flywheel-bench}/olap"
cd "$ROOT"
mvn -B -q -ntp -o -DskipTests package -pl flywheel-bench -am 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/tmp"
if command -v clickhouse-server >/dev/null 2>&1; then
  echo "olap: clickhouse-server is installed, but this script does not drive it yet; measuring the DuckDB peers" >&2
else
  echo "olap: clickhouse-server is not installed: the ClickHouse peer is skipped" >&2
fi
java --add-opens=java.base/java.nio=ALL-UNNAMED -Xmx6g ${OLAP_JAVA_OPTS:-} -Djava.io.tmpdir="$SCRATCH/tmp" \
    -cp "flywheel-bench/target/classes:flywheel-bench/target/lib/*" io.flywheel.bench.OlapBench \
    "$SCRATCH/run" "$EVAL_ROWS" "$TELEMETRY_ROWS" "$REPEATS" 2>/dev/null | tee "$SCRATCH/result.json"
python3 - "$SCRATCH/result.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print("cube over %d eval rows (%d cells): DuckDB over Lance streams %.3f s vs DuckDB over Parquet %.3f s: %.2fx"
      % (r["eval_rows"], r["cube_cells"], r["cube_lance_s"], r["cube_parquet_s"], r["cube_lance_s"] / r["cube_parquet_s"]))
print("telemetry one robot-day (%d hours) of %d rows: DuckDB over Lance streams %.3f s vs DuckDB over Parquet %.3f s:"
      " %.2fx" % (r["scan_hours"], r["telemetry_rows"], r["scan_lance_s"], r["scan_parquet_s"],
      r["scan_lance_s"] / r["scan_parquet_s"]))
print("writes: eval %.1f s, telemetry %.1f s into the lake, both Parquet files %.1f s; lake %.0f MB, Parquet %.0f + %.0f MB"
      % (r["eval_write_s"], r["telemetry_write_s"], r["parquet_write_s"], r["lake_bytes"] / 1e6,
         r["eval_parquet_bytes"] / 1e6, r["telemetry_parquet_bytes"] / 1e6))
PY
rm -rf "$SCRATCH/run"
