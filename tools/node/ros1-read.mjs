// Reads a ROS 1 bag with cruise-automation/rosbag.js and prints, one JSON object per line:
//   {"kind":"connection","conn":id,"topic":..,"type":..,"md5sum":..}   for each connection, then
//   {"kind":"message","topic":..,"sec":..,"nsec":..,"message":{...}}    for each message, in rosbag.js's order
// Normalisation (so another reader's output can be compared value by value): 64-bit integers as decimal
// strings, uint8/int8 arrays as arrays of numbers, NaN/Infinity as strings, time/duration as {sec, nsec}.
// Usage: node ros1-read.mjs FILE.bag
import rosbag from "rosbag";
import { loadDecompressHandlers } from "@mcap/support";

function norm(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
  if (v instanceof Uint8Array || v instanceof Int8Array) return Array.from(v);
  if (Array.isArray(v)) return v.map(norm);
  if (v !== null && typeof v === "object") {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = norm(x);
    return out;
  }
  return v;
}

const file = process.argv[2];
if (!file) {
  console.error("usage: node ros1-read.mjs FILE.bag");
  process.exit(2);
}
const handlers = await loadDecompressHandlers();
const bag = await rosbag.open(file);
const lines = [];
for (const [id, c] of Object.entries(bag.connections)) {
  lines.push(JSON.stringify({ kind: "connection", conn: Number(id), topic: c.topic, type: c.type, md5sum: c.md5sum }));
}
await bag.readMessages(
  { decompress: { lz4: (b, n) => Buffer.from(handlers.lz4(b, n)), bz2: (b, n) => Buffer.from(handlers.bz2(b, n)) } },
  (r) => {
    lines.push(JSON.stringify({ kind: "message", topic: r.topic, sec: r.timestamp.sec, nsec: r.timestamp.nsec,
      message: norm(r.message) }));
  },
);
process.stdout.write(lines.join("\n") + "\n");
