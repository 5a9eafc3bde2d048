// Reads an MCAP file with @mcap/core's McapIndexedReader (CRC validation on) and McapStreamReader,
// and prints one JSON object describing what both saw. Used by Flywheel's Java tests to cross-check
// files written by McapWriter.
//
// usage: node mcap-read.mjs FILE.mcap
//
// Output (BigInts as decimal strings):
// { header, schemas: [{id, name, encoding, dataSha256}], channels: [{id, topic, messageEncoding, schemaId, metadata}],
//   statistics, indexed: {topics: {topic: {count, digest}}}, attachments: [{name, mediaType, logTime, createTime,
//   size, sha256, crcOk}], metadata: [{name, metadata}], stream: {topics: {topic: count}, records: {type: count}} }
// digest = sha256 over, per message in log-time order: u64le log_time, u64le publish_time, u32le sequence,
// u32le data length, data.
import { open, readFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";

const file = process.argv[2];
if (!file) {
  console.error("usage: node mcap-read.mjs FILE.mcap");
  process.exit(2);
}
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const decompressHandlers = await loadDecompressHandlers();
const out = {};

const handle = await open(file, "r");
try {
  const reader = await McapIndexedReader.Initialize({
    readable: new FileHandleReadable(handle),
    decompressHandlers,
  });
  out.header = reader.header;
  out.footer = reader.footer;
  out.schemas = [...reader.schemasById.values()].map((s) => ({
    id: s.id, name: s.name, encoding: s.encoding, dataSha256: sha256(s.data),
  }));
  out.channels = [...reader.channelsById.values()].map((c) => ({
    id: c.id, topic: c.topic, messageEncoding: c.messageEncoding, schemaId: c.schemaId,
    metadata: Object.fromEntries(c.metadata),
  }));
  out.statistics = reader.statistics == undefined ? null : {
    ...reader.statistics,
    channelMessageCounts: Object.fromEntries(reader.statistics.channelMessageCounts),
  };
  out.chunkIndexCount = reader.chunkIndexes.length;
  const topics = {};
  const hashers = {};
  let lastTime = -1n;
  let ordered = true;
  for await (const m of reader.readMessages({ validateCrcs: true })) {
    const topic = reader.channelsById.get(m.channelId).topic;
    if (m.logTime < lastTime) ordered = false;
    lastTime = m.logTime;
    const head = Buffer.alloc(24);
    head.writeBigUInt64LE(m.logTime, 0);
    head.writeBigUInt64LE(m.publishTime, 8);
    head.writeUInt32LE(m.sequence, 16);
    head.writeUInt32LE(m.data.length, 20);
    (hashers[topic] ??= createHash("sha256")).update(head).update(m.data);
    topics[topic] = (topics[topic] ?? 0) + 1;
  }
  out.indexed = {
    ordered,
    topics: Object.fromEntries(Object.entries(topics).map(([t, n]) => [t, { count: n, digest: hashers[t].digest("hex") }])),
  };
  out.attachments = [];
  for await (const a of reader.readAttachments({ validateCrcs: true })) {
    out.attachments.push({
      name: a.name, mediaType: a.mediaType, logTime: a.logTime, createTime: a.createTime,
      size: a.data.length, sha256: sha256(a.data), crcOk: true,
    });
  }
  out.metadata = [];
  for await (const m of reader.readMetadata()) {
    out.metadata.push({ name: m.name, metadata: Object.fromEntries(m.metadata) });
  }
} finally {
  await handle.close();
}

const stream = new McapStreamReader({ decompressHandlers, validateCrcs: true, includeChunks: true });
stream.append(await readFile(file));
const streamTopics = {};
const records = {};
const channelTopics = new Map();
for (let r; (r = stream.nextRecord()) != undefined;) {
  records[r.type] = (records[r.type] ?? 0) + 1;
  if (r.type === "Channel") channelTopics.set(r.id, r.topic);
  if (r.type === "Message") {
    const t = channelTopics.get(r.channelId);
    streamTopics[t] = (streamTopics[t] ?? 0) + 1;
  }
}
out.stream = { done: stream.done(), topics: streamTopics, records };

console.log(JSON.stringify(out, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
