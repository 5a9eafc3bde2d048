// Reference decoder for Flywheel's CDR cross-check tests.
//
// Usage: node ros2-decode.mjs FILE.mcap [FILE.mcap ...]
//
// Reads each file with @mcap/core's McapStreamReader (chunks decompressed by @mcap/support) and
// prints one JSON object per line:
//   {"kind":"channel","file":F,"id":N,"topic":T,"messageEncoding":E,"schemaName":S,
//    "schemaEncoding":SE,"schema":TEXT}
//   {"kind":"message","file":F,"channel":N,"topic":T,"logTime":"ns","publishTime":"ns",
//    "data":BASE64,"value":DECODED}            (or "error":MSG when the reference cannot decode)
// DECODED is @foxglove/rosmsg2-serialization's MessageReader output (schema text parsed by
// @foxglove/rosmsg parse(text, {ros2: true})), normalised as Flywheel's JsonTree does:
// BigInt -> decimal string, typed arrays -> arrays of numbers (Uint8Array and Int8Array as
// numbers 0..255, since Flywheel holds both as byte[]), NaN/Infinity/-Infinity -> strings.
import { readFile } from "node:fs/promises";
import { McapStreamReader } from "@mcap/core";
import { loadDecompressHandlers } from "@mcap/support";
import { parse } from "@foxglove/rosmsg";
import { MessageReader } from "@foxglove/rosmsg2-serialization";

function norm(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "Infinity";
    if (v === -Infinity) return "-Infinity";
    return v;
  }
  if (v instanceof Uint8Array || v instanceof Int8Array || v instanceof Uint8ClampedArray) {
    return Array.from(v, (x) => x & 0xff);
  }
  if (ArrayBuffer.isView(v)) return Array.from(v, norm);
  if (Array.isArray(v)) return v.map(norm);
  if (v !== null && typeof v === "object") {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = norm(x);
    return o;
  }
  return v;
}

const decompressHandlers = await loadDecompressHandlers();
for (const file of process.argv.slice(2)) {
  const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  reader.append(new Uint8Array(await readFile(file)));
  const schemas = new Map();
  const channels = new Map();
  let rec;
  while ((rec = reader.nextRecord()) !== undefined) {
    if (rec.type === "Schema") {
      schemas.set(rec.id, rec);
    } else if (rec.type === "Channel") {
      if (channels.has(rec.id)) continue;
      const schema = schemas.get(rec.schemaId);
      const text = schema ? new TextDecoder().decode(schema.data) : "";
      const ch = { rec, schema, decoder: undefined, error: undefined };
      if (schema && rec.messageEncoding === "cdr" && schema.encoding === "ros2msg") {
        try {
          ch.decoder = new MessageReader(parse(text, { ros2: true }));
        } catch (e) {
          ch.error = "reference schema parse failed: " + e.message;
        }
      } else {
        ch.error = `reference does not decode ${rec.messageEncoding}/${schema?.encoding}`;
      }
      channels.set(rec.id, ch);
      console.log(JSON.stringify({
        kind: "channel", file, id: rec.id, topic: rec.topic, messageEncoding: rec.messageEncoding,
        schemaName: schema?.name ?? "", schemaEncoding: schema?.encoding ?? "", schema: text,
      }));
    } else if (rec.type === "Message") {
      const ch = channels.get(rec.channelId);
      const out = {
        kind: "message", file, channel: rec.channelId, topic: ch?.rec.topic,
        logTime: rec.logTime.toString(), publishTime: rec.publishTime.toString(),
        data: Buffer.from(rec.data).toString("base64"),
      };
      if (ch?.decoder) {
        try {
          out.value = norm(ch.decoder.readMessage(rec.data));
        } catch (e) {
          out.error = "reference decode failed: " + e.message;
        }
      } else {
        out.error = ch?.error ?? "unknown channel";
      }
      console.log(JSON.stringify(out));
    }
  }
  if (!reader.done()) {
    console.error(`${file}: MCAP not read to the end (${reader.bytesRemaining()} bytes left)`);
    process.exitCode = 1;
  }
}
