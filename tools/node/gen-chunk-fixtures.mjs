// Writes the small MCAP fixtures under flywheel-mcap/src/test/resources/mcap/ whose chunks are
// compressed by the reference command-line tools (Debian's `lz4` 1.9.x and `zstd`), so that the
// Java reader is checked against real encoder output:
//   lz4-linked.mcap       lz4 frames with LINKED blocks:  lz4 -BD -B4 -c   (64 KiB blocks)
//   lz4-independent.mcap  lz4 frames, independent blocks with block checksums:  lz4 -BI -B4 -BX -c
//   zstd-stream.mcap      zstd frames written from a pipe (no content size in the frame header): zstd -3 -c
// Content (ground truth, recomputed by the Java test): 600 messages, message i on channel "/a" (i even)
// or "/b" (i odd), sequence i, log_time = publish_time = 1e9 + i*1e6 ns, data = 1000 bytes with
// data[j] = (j*31 + (i%7)*13) % 251. Chunk size 200000 bytes, so each file holds several chunks of
// several lz4 blocks each. Usage: node gen-chunk-fixtures.mjs <output dir>
import { McapWriter } from "@mcap/core";
import { FileHandleWritable } from "@mcap/nodejs";
import { execFileSync } from "node:child_process";
import { open } from "node:fs/promises";
import path from "node:path";

const outDir = process.argv[2];
if (!outDir) {
  console.error("usage: node gen-chunk-fixtures.mjs <output dir>");
  process.exit(2);
}

const variants = [
  { file: "lz4-linked.mcap", compression: "lz4", cmd: "lz4", args: ["-BD", "-B4", "-c", "-q"] },
  { file: "lz4-independent.mcap", compression: "lz4", cmd: "lz4", args: ["-BI", "-B4", "-BX", "-c", "-q"] },
  { file: "zstd-stream.mcap", compression: "zstd", cmd: "zstd", args: ["-3", "-c", "-q"] },
];

for (const v of variants) {
  const handle = await open(path.join(outDir, v.file), "w");
  const writer = new McapWriter({
    writable: new FileHandleWritable(handle),
    chunkSize: 200000,
    compressChunk: (data) => ({
      compression: v.compression,
      compressedData: new Uint8Array(execFileSync(v.cmd, v.args, { input: data, maxBuffer: 1 << 26 })),
    }),
  });
  await writer.start({ profile: "", library: "flywheel gen-chunk-fixtures.mjs" });
  const schemaId = await writer.registerSchema({ name: "Blob", encoding: "", data: new Uint8Array() });
  const a = await writer.registerChannel({ topic: "/a", schemaId, messageEncoding: "raw", metadata: new Map() });
  const b = await writer.registerChannel({ topic: "/b", schemaId, messageEncoding: "raw", metadata: new Map() });
  for (let i = 0; i < 600; i++) {
    const data = new Uint8Array(1000);
    for (let j = 0; j < 1000; j++) data[j] = (j * 31 + (i % 7) * 13) % 251;
    const t = 1000000000n + BigInt(i) * 1000000n;
    await writer.addMessage({ channelId: i % 2 === 0 ? a : b, sequence: i, logTime: t, publishTime: t, data });
  }
  await writer.end();
  await handle.close();
  console.log("wrote", v.file);
}
