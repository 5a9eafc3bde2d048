// Reads one table of a Flywheel lake (at its latest version, a version number or a tag) with @lancedb/lancedb and prints JSON, to cross-check the
// Java lake layer. Usage: node lance-read.mjs LAKE_DIR TABLE [VERSION|TAG|latest] [LIMIT]
//   -> {"table", "version", "versions": [...], "count", "schema": [field names], "rows": [first LIMIT rows]}
// int64 values are printed as decimal strings (JSON numbers lose precision past 2^53).
import * as lancedb from '@lancedb/lancedb';

const [lakeDir, tableName, versionArg, limitArg] = process.argv.slice(2);
if (!lakeDir || !tableName) {
  console.error('usage: node lance-read.mjs LAKE_DIR TABLE [VERSION] [LIMIT]');
  process.exit(2);
}

function plain(v) {
  if (typeof v === 'bigint') return v.toString();
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(plain);
  if (ArrayBuffer.isView(v)) return Array.from(v, plain);
  if (typeof v === 'object') {
    if (typeof v.toJSON === 'function') return plain(v.toJSON());
    if (typeof v.toArray === 'function') return Array.from(v.toArray(), plain);
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = plain(x);
    return o;
  }
  return v;
}

const db = await lancedb.connect(lakeDir);
const tbl = await db.openTable(tableName);
const versions = (await tbl.listVersions()).map((v) => Number(v.version));
if (versionArg !== undefined && versionArg !== '' && versionArg !== 'latest') {
  // a number is a version, anything else a tag
  await tbl.checkout(/^[0-9]+$/.test(versionArg) ? Number(versionArg) : versionArg);
}
const version = await tbl.version();
const count = await tbl.countRows();
const schema = (await tbl.schema()).fields.map((f) => f.name);
const limit = limitArg === undefined ? 3 : Number(limitArg);
const rows = (await tbl.query().limit(limit).toArray()).map(plain);
console.log(JSON.stringify({ table: tableName, version, versions, count, schema, rows }));
