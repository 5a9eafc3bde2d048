// Reads one MCAP file with @mcap/core's McapIndexedReader (CRCs validated) and prints, as JSON,
// the header, the message count per topic, the log-time order, and the metadata records.
// Used by flywheel-sim's tests to check that a simulated episode opens in the reference reader.
//
// usage: node sim-check.mjs FILE.mcap
import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";

const file = process.argv[2];
if (!file) {
  console.error("usage: node sim-check.mjs FILE.mcap");
  process.exit(2);
}
const handle = await open(file, "r");
try {
  const reader = await McapIndexedReader.Initialize({
    readable: new FileHandleReadable(handle),
    decompressHandlers: await loadDecompressHandlers(),
  });
  const topics = {};
  let last = -1n;
  let ordered = true;
  let messages = 0;
  for await (const m of reader.readMessages({ validateCrcs: true })) {
    const topic = reader.channelsById.get(m.channelId).topic;
    topics[topic] = (topics[topic] ?? 0) + 1;
    if (m.logTime < last) ordered = false;
    last = m.logTime;
    messages++;
  }
  const metadata = [];
  for await (const md of reader.readMetadata()) {
    metadata.push({ name: md.name, metadata: Object.fromEntries(md.metadata) });
  }
  console.log(JSON.stringify({
    profile: reader.header.profile,
    library: reader.header.library,
    chunks: reader.chunkIndexes.length,
    compression: [...new Set(reader.chunkIndexes.map((c) => c.compression))],
    statisticsMessageCount: reader.statistics ? reader.statistics.messageCount.toString() : null,
    messages,
    ordered,
    topics,
    metadata,
  }));
} finally {
  await handle.close();
}
