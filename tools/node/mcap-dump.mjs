// Dumps an MCAP file with @mcap/core's indexed reader, one JSON object per line:
//   {"kind":"schema","id":..,"name":..,"encoding":..,"data":"<base64>"}
//   {"kind":"channel","id":..,"topic":..,"messageEncoding":..,"schemaId":..}
//   {"kind":"message","channelId":..,"topic":..,"sequence":..,"logTime":"<ns>","publishTime":"<ns>","data":"<base64>"}
// Messages come in log-time order; 64-bit times are decimal strings.
// Usage: node mcap-dump.mjs FILE.mcap
import { McapIndexedReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";
import { open } from "node:fs/promises";

const file = process.argv[2];
if (!file) {
  console.error("usage: node mcap-dump.mjs FILE.mcap");
  process.exit(2);
}
const handle = await open(file, "r");
try {
  const reader = await McapIndexedReader.Initialize({
    readable: new FileHandleReadable(handle),
    decompressHandlers: await loadDecompressHandlers(),
  });
  const b64 = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString("base64");
  const lines = [];
  for (const s of reader.schemasById.values()) {
    lines.push(JSON.stringify({ kind: "schema", id: s.id, name: s.name, encoding: s.encoding, data: b64(s.data) }));
  }
  for (const c of reader.channelsById.values()) {
    lines.push(JSON.stringify({ kind: "channel", id: c.id, topic: c.topic, messageEncoding: c.messageEncoding,
      schemaId: c.schemaId }));
  }
  for await (const m of reader.readMessages()) {
    lines.push(JSON.stringify({ kind: "message", channelId: m.channelId, topic: reader.channelsById.get(m.channelId).topic,
      sequence: m.sequence, logTime: m.logTime.toString(), publishTime: m.publishTime.toString(), data: b64(m.data) }));
  }
  process.stdout.write(lines.join("\n") + "\n");
} finally {
  await handle.close();
}
