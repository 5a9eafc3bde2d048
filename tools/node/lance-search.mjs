// Vector search of one table of a Flywheel lake with @lancedb/lancedb, to cross-check the lake's vector columns and
// index. Usage: node lance-search.mjs LAKE_DIR TABLE QUERIES_JSON K [MODE]
//   QUERIES_JSON: a file holding [[float, ...], ...], one query vector per entry
//   MODE: "plain" (default): table.search(vec).limit(K), LanceDB's defaults (the vector column inferred, L2, the
//         index if any); or "cosine:COLUMN:NPROBES:REFINE": .column(COLUMN).distanceType('cosine').nprobes(NPROBES)
//         .refineFactor(REFINE)
//   -> {"version", "count", "indices": [{name, type, columns, indexed, unindexed}], "plan": first query's plan,
//       "results": [[{"id", "distance"}, ...], ...]} (ids: the table's first column, e.g. episode_id)
import { readFileSync } from 'node:fs';
import * as lancedb from '@lancedb/lancedb';

const [lakeDir, tableName, queriesFile, kArg, modeArg] = process.argv.slice(2);
if (!lakeDir || !tableName || !queriesFile || !kArg) {
  console.error('usage: node lance-search.mjs LAKE_DIR TABLE QUERIES_JSON K [plain|cosine:COLUMN:NPROBES:REFINE]');
  process.exit(2);
}
const queries = JSON.parse(readFileSync(queriesFile, 'utf8'));
const k = Number(kArg);
const mode = modeArg ?? 'plain';

const db = await lancedb.connect(lakeDir);
const tbl = await db.openTable(tableName);
const idColumn = (await tbl.schema()).fields[0].name;

function search(q) {
  let s = tbl.search(q);
  if (mode !== 'plain') {
    const [, column, nprobes, refine] = mode.split(':');
    s = s.column(column).distanceType('cosine').nprobes(Number(nprobes)).refineFactor(Number(refine));
  }
  return s.select([idColumn]).limit(k);
}

const results = [];
for (const q of queries) {
  const rows = await search(q).toArray();
  results.push(rows.map((r) => ({ id: String(r[idColumn]), distance: r._distance })));
}
const plan = queries.length > 0 ? await search(queries[0]).explainPlan() : '';
const indices = [];
for (const i of await tbl.listIndices()) {
  const st = await tbl.indexStats(i.name);
  indices.push({ name: i.name, type: i.indexType, columns: i.columns, indexed: st?.numIndexedRows ?? null,
    unindexed: st?.numUnindexedRows ?? null });
}
console.log(JSON.stringify({ version: await tbl.version(), count: await tbl.countRows(), indices, plan, results }));
