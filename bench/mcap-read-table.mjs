// Turns the JSON lines of bench/mcap-read.sh into a table of throughputs and ratios.
// usage: node mcap-read-table.mjs RESULTS.jsonl [FILE.gen.json]
import { readFileSync } from "node:fs";

const [resultsFile, genFile] = process.argv.slice(2);
const rows = readFileSync(resultsFile, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

// ours: one line per (label, mode) and round; the median over every timed run of every round
function ours(label, mode) {
  const rs = rows.filter((r) => r.impl === "flywheel-java" && r.label === label && r.mode === mode);
  if (rs.length === 0) return undefined;
  const s = median(rs.flatMap((r) => r.allSeconds));
  return { seconds: s, MBps: rs[0].fileBytes / 1e6 / s, messages: rs[0].messages, msgsPerSec: rs[0].messages ? rs[0].messages / s : undefined, n: rs.length };
}
// peer: one line per process; median of the seconds
function peer(label, mode) {
  const rs = rows.filter((r) => r.impl === "node-peer" && r.label === label && r.mode === mode);
  if (rs.length === 0) return undefined;
  const fileBytes = rs[0].fileBytes;
  // zstd mode: decompression (raw wasm) + crc32 of the output, the same work as our zstd limit
  const secs = rs.map((r) => (r.mode === "zstd" ? r.wasmRawSec + r.crc32Sec : r.seconds));
  const s = median(secs);
  return { seconds: s, MBps: fileBytes / 1e6 / s, messages: rs[0].messages, msgsPerSec: rs[0].messages ? rs[0].messages / s : undefined, n: rs.length };
}

const fmt = (x, d = 0) => (x === undefined || Number.isNaN(x) ? "-" : x.toFixed(d));
const ratio = (a, b) => (a && b ? (a.MBps / b.MBps).toFixed(2) + "x" : "-");
const limitFrac = (a, b) => (a && b ? (a.MBps / b.MBps).toFixed(2) : "-");
const limit = ours("zstd", "zstd");
const lines = [];
const row = (what, o, p, pName) =>
  lines.push([what, fmt(o?.MBps), fmt(o?.msgsPerSec), pName, fmt(p?.MBps), fmt(p?.msgsPerSec), ratio(o, p), limit && o !== limit ? limitFrac(o, limit) : "-"]);

row("indexed, all msgs decoded: generic tree (images copied)", ours("zstd", "indexed-generic"), peer("zstd", "indexed-all"), "indexed-all");
row("indexed, all msgs decoded: fast paths (image views)", ours("zstd", "indexed-fast"), peer("zstd", "indexed-all"), "indexed-all");
row("indexed, all msgs decoded: fast paths (image views)", ours("zstd", "indexed-fast"), peer("zstd-nocopy", "indexed-all"), "indexed-all --no-copy");
row("indexed, all msgs, no decode", ours("zstd", "indexed-none"), peer("zstd", "indexed-none"), "indexed-none");
row("indexed, fast paths, new array per chunk (default options)", ours("zstd", "indexed-fast-fresh"), peer("zstd", "indexed-all"), "indexed-all");
row("stream reader, no decode", ours("zstd", "stream"), peer("zstd", "stream"), "stream");
row("zstd decompress + CRC32 of preloaded chunks (limit)", limit, peer("zstd", "zstd"), "zstd (wasm + crc32)");
if (ours("none", "indexed-generic")) {
  row("uncompressed twin: indexed generic tree", ours("none", "indexed-generic"), peer("none", "indexed-all"), "indexed-all");
  row("uncompressed twin: indexed fast paths", ours("none", "indexed-fast"), peer("none", "indexed-all"), "indexed-all");
  row("uncompressed twin: stream reader", ours("none", "stream"), undefined, "-");
}

if (genFile) {
  try {
    const g = JSON.parse(readFileSync(genFile, "utf8"));
    console.log(`file: ${g.file} (${(g.fileBytes / 1e6).toFixed(0)} MB zstd, ${g.fileNoneBytes ? (g.fileNoneBytes / 1e6).toFixed(0) + " MB uncompressed twin, " : ""}` +
      `${g.messages} messages over ${g.durationS} s, ${(g.chunkSize / 1048576).toFixed(0)} MiB chunks, mean JPEG ${g.meanJpegBytes} B)`);
  } catch {}
}
const header = ["mode (MB = 1e6 file bytes; one core)", "ours MB/s", "ours msg/s", "peer mode", "peer MB/s", "peer msg/s", "ours/peer", "ours/zstd-limit"];
const all = [header, ...lines];
const widths = header.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
for (const [i, r] of all.entries()) {
  console.log(r.map((c, j) => (j === 0 || j === 3 ? String(c).padEnd(widths[j]) : String(c).padStart(widths[j]))).join("  "));
  if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
}
