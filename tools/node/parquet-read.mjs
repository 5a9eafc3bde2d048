// Reads Parquet files with hyparquet (a pure-JavaScript Parquet reader, independent of Apache
// Parquet Java) and prints, per file, the footer key-value metadata, the column names and the rows
// as JSON (int64 as numbers, floats as written). Used by Flywheel's tests to cross-check the
// LeRobot export. Usage: node parquet-read.mjs FILE...
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet'

const out = {}
for (const f of process.argv.slice(2)) {
  const file = await asyncBufferFromFile(f)
  const meta = await parquetMetadataAsync(file)
  const kv = {}
  for (const { key, value } of meta.key_value_metadata ?? []) kv[key] = value
  const columns = parquetSchema(meta).children.map(c => c.element.name)
  const rows = await parquetReadObjects({ file, utf8: true })
  out[f] = { num_rows: Number(meta.num_rows), columns, metadata: kv, rows }
}
process.stdout.write(JSON.stringify(out, (k, v) => (typeof v === 'bigint' ? Number(v) : v)))
