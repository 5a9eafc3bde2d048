package io.flywheel.ingest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The sample table of the first H.264 / H.265 video track of an MP4 file (ISO/IEC 14496-12, ISO base media file
 * format, section 8.6-8.7; sample entries {@code avc1}/{@code avc3} with {@code avcC} and {@code hvc1}/{@code hev1}
 * with {@code hvcC}, ISO/IEC 14496-15): where each sample (one access unit) lies in the file, its presentation
 * time, whether it is a sync sample, and the decoder configuration. Read from the {@code moov} box only; the
 * media data is not read. Fragmented MP4 ({@code moof}) is not supported.
 *
 * <p>Samples are length-prefixed NAL units (AVCC / HVCC); {@link #toAnnexB} turns one into the Annex B byte
 * stream (ITU-T H.264 Annex B) a {@code foxglove.CompressedVideo} message holds, with the parameter sets of the
 * configuration record in front of each random-access picture, so that each keyframe sample decodes on its own.
 *
 * @param file the file, for messages
 * @param format {@code h264} or {@code h265}
 * @param width track width in pixels (from the visual sample entry)
 * @param height track height in pixels
 * @param timescale media time units per second ({@code mdhd})
 * @param lengthSize bytes of each NAL unit length prefix (1, 2 or 4)
 * @param parameterSets the configuration record's parameter set NAL units (SPS, PPS; H.265 also VPS), in order
 * @param samples the samples in decode order
 */
public record Mp4SampleTable(String file, String format, int width, int height, long timescale, int lengthSize,
                             List<byte[]> parameterSets, List<Sample> samples) {
    public Mp4SampleTable {
        parameterSets = List.copyOf(parameterSets);
        samples = List.copyOf(samples);
    }

    /**
     * One sample (access unit).
     *
     * @param index 0-based, in decode order
     * @param offset absolute byte offset in the file
     * @param size bytes
     * @param presentationNs presentation time, int64 ns from the track's start: (decode time + composition offset
     *     - the edit list's media time) / timescale, plus any leading empty edit; the time FFmpeg's mov demuxer
     *     gives as {@code pts * time_base}
     * @param sync true for a sync sample ({@code stss}; every sample when there is no {@code stss})
     */
    public record Sample(int index, long offset, int size, long presentationNs, boolean sync) {}

    private static final int MAX_BOX = 256 << 20;

    /**
     * Reads the sample table.
     *
     * @param path an MP4 file
     * @return the table of its first video track
     * @throws IngestException naming the file and byte offset when the file is not ISO BMFF, ends inside a box, has
     *     no {@code moov} box or no H.264 / H.265 video track, a table is malformed, or a sample lies past the end
     *     of the file (a truncated file)
     * @throws IOException when reading fails
     */
    public static Mp4SampleTable read(Path path) throws IOException {
        String name = path.toString();
        try (FileChannel fc = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = fc.size();
            long at = 0;
            ByteBuffer moov = null;
            long moovAt = -1;
            boolean first = true;
            while (at < size) {
                if (size - at < 8) {
                    throw new IngestException(name, at, "the file ends inside a box header (" + (size - at)
                            + " bytes left, 8 expected); truncated?");
                }
                ByteBuffer h = readAt(fc, at, (int) Math.min(16, size - at), name);
                long len = Integer.toUnsignedLong(h.getInt(0));
                String type = type(h, 4);
                int header = 8;
                if (len == 1) {
                    if (h.limit() < 16) throw new IngestException(name, at, "the file ends inside a 64-bit box size");
                    len = h.getLong(8);
                    header = 16;
                } else if (len == 0) {
                    len = size - at;
                }
                if (first && !type.equals("ftyp") && !type.equals("moov") && !type.equals("free")
                        && !type.equals("skip") && !type.equals("wide") && !type.equals("mdat")) {
                    throw new IngestException(name, at, "not an MP4 file (ISO/IEC 14496-12): expected an 'ftyp' box first,"
                            + " found '" + printable(type) + "'");
                }
                first = false;
                if (len < header) {
                    throw new IngestException(name, at, "box '" + printable(type) + "' declares size " + len
                            + ", less than its header");
                }
                if (len > size - at) {
                    throw new IngestException(name, at, "the file ends inside the '" + printable(type) + "' box, which"
                            + " declares " + len + " bytes but only " + (size - at) + " remain; truncated?");
                }
                if (type.equals("moov")) {
                    if (len - header > MAX_BOX) throw new IngestException(name, at, "moov box of " + len + " bytes is too large");
                    moov = readAt(fc, at + header, (int) (len - header), name);
                    moovAt = at + header;
                } else if (type.equals("moof")) {
                    throw new IngestException(name, at, "fragmented MP4 ('moof' box) is not supported; expected one"
                            + " 'moov' sample table");
                }
                at += len;
            }
            if (moov == null) {
                throw new IngestException(name, -1, "no 'moov' box (the sample table); truncated before it was written?");
            }
            Mp4SampleTable t = new Parser(name, moov, moovAt).parse();
            for (Sample s : t.samples) {
                if (s.offset + s.size > size) {
                    throw new IngestException(name, s.offset, "video sample " + s.index + " of " + t.samples.size()
                            + " (" + s.size + " bytes) runs past the end of the file at byte " + size + "; truncated?");
                }
            }
            return t;
        }
    }

    /**
     * @param sample the bytes of one sample, as stored in the file
     * @return the same NAL units in Annex B form (each after a 4-byte start code 00 00 00 01), with the
     *     configuration's parameter sets in front when the sample holds a random-access picture (H.264 IDR, NAL type 5;
     *     H.265 IRAP, types 16-23) and no parameter set of its own
     * @throws IngestException when a NAL length runs past the sample
     */
    public byte[] toAnnexB(byte[] sample) throws IngestException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(sample.length + 64);
        boolean h265 = format.equals("h265");
        boolean random = false;
        boolean hasParams = false;
        List<int[]> nals = new ArrayList<>();
        int p = 0;
        while (p < sample.length) {
            if (sample.length - p < lengthSize) {
                throw new IngestException(file, -1, "video sample ends inside a " + lengthSize + "-byte NAL length at"
                        + " sample byte " + p);
            }
            long n = 0;
            for (int i = 0; i < lengthSize; i++) n = n << 8 | (sample[p + i] & 0xFF);
            p += lengthSize;
            if (n > sample.length - p || n == 0) {
                throw new IngestException(file, -1, "video sample: NAL unit at sample byte " + (p - lengthSize)
                        + " declares " + n + " bytes, " + (sample.length - p) + " remain");
            }
            int type = h265 ? (sample[p] >> 1) & 0x3F : sample[p] & 0x1F;
            random |= h265 ? type >= 16 && type <= 23 : type == 5;
            hasParams |= h265 ? type == 32 || type == 33 : type == 7;
            nals.add(new int[] {p, (int) n});
            p += (int) n;
        }
        if (random && !hasParams) {
            for (byte[] ps : parameterSets) {
                out.writeBytes(START);
                out.writeBytes(ps);
            }
        }
        for (int[] nal : nals) {
            out.writeBytes(START);
            out.write(sample, nal[0], nal[1]);
        }
        return out.toByteArray();
    }

    private static final byte[] START = {0, 0, 0, 1};

    /** @return true when the file's bytes 4..8 are the box type {@code ftyp} (an ISO BMFF / MP4 file) */
    static boolean looksLikeMp4(byte[] head, int n) {
        return n >= 8 && head[4] == 'f' && head[5] == 't' && head[6] == 'y' && head[7] == 'p';
    }

    private static ByteBuffer readAt(FileChannel fc, long at, int n, String name) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        long p = at;
        while (b.hasRemaining()) {
            int r = fc.read(b, p);
            if (r < 0) throw new IngestException(name, p, "the file ends early");
            p += r;
        }
        return b.flip();
    }

    private static String type(ByteBuffer b, int at) {
        byte[] t = new byte[4];
        b.get(at, t);
        return new String(t, StandardCharsets.ISO_8859_1);
    }

    private static String printable(String t) {
        StringBuilder s = new StringBuilder();
        for (char c : t.toCharArray()) s.append(c >= 32 && c < 127 ? String.valueOf(c) : String.format("\\x%02X", (int) c));
        return s.toString();
    }

    /** Walks the moov box (big-endian, as ISO BMFF). */
    private static final class Parser {
        private final String name;
        private final ByteBuffer moov;
        private final long base;

        Parser(String name, ByteBuffer moov, long base) {
            this.name = name;
            this.moov = moov;
            this.base = base;
        }

        /** A child box: payload [start, end) of {@link #moov}. */
        private record Box(String type, int start, int end) {}

        private List<Box> children(int from, int to) throws IngestException {
            List<Box> out = new ArrayList<>();
            int p = from;
            while (p + 8 <= to) {
                long len = Integer.toUnsignedLong(moov.getInt(p));
                String type = type(moov, p + 4);
                int header = 8;
                if (len == 1) {
                    if (p + 16 > to) throw bad(p, "box '" + printable(type) + "' ends inside its 64-bit size");
                    len = moov.getLong(p + 8);
                    header = 16;
                } else if (len == 0) {
                    len = to - p;
                }
                if (len < header || len > to - p) {
                    throw bad(p, "box '" + printable(type) + "' declares size " + len + ", but its parent has "
                            + (to - p) + " bytes left");
                }
                out.add(new Box(type, p + header, p + (int) len));
                p += (int) len;
            }
            return out;
        }

        private Box child(Box parent, String type) throws IngestException {
            for (Box b : children(parent.start, parent.end)) if (b.type.equals(type)) return b;
            return null;
        }

        private Box need(Box parent, String type) throws IngestException {
            Box b = child(parent, type);
            if (b == null) throw bad(parent.start, "box '" + parent.type + "' has no '" + type + "' box");
            return b;
        }

        private IngestException bad(int p, String what) {
            return new IngestException(name, base + p, what);
        }

        private int u8(int p) { return moov.get(p) & 0xFF; }

        private int u16(int p) { return moov.getShort(p) & 0xFFFF; }

        private long u32(int p) { return Integer.toUnsignedLong(moov.getInt(p)); }

        /** @return the entry count of a full box's table with {@code entry} bytes per entry, checked */
        private int entries(Box b, int headerBytes, int entry) throws IngestException {
            if (b.end - b.start < headerBytes) throw bad(b.start, "'" + b.type + "' box is too short");
            long n = u32(b.start + headerBytes - 4);
            if (n > (b.end - b.start - headerBytes) / entry) {
                throw bad(b.start, "'" + b.type + "' box declares " + n + " entries of " + entry + " bytes but holds "
                        + (b.end - b.start - headerBytes) + " bytes");
            }
            return (int) n;
        }

        Mp4SampleTable parse() throws IngestException {
            Box root = new Box("moov", 0, moov.limit());
            long movieScale = 0;
            Box mvhd = child(root, "mvhd");
            if (mvhd != null) movieScale = u8(mvhd.start) == 1 ? u32(mvhd.start + 20) : u32(mvhd.start + 12);
            for (Box trak : children(0, moov.limit())) {
                if (!trak.type.equals("trak")) continue;
                Box mdia = need(trak, "mdia");
                Box hdlr = need(mdia, "hdlr");
                if (!type(moov, hdlr.start + 8).equals("vide")) continue;
                Box mdhd = need(mdia, "mdhd");
                long timescale = u8(mdhd.start) == 1 ? u32(mdhd.start + 20) : u32(mdhd.start + 12);
                if (timescale == 0) throw bad(mdhd.start, "'mdhd' timescale is 0");
                Box stbl = need(need(mdia, "minf"), "stbl");
                Box stsd = need(stbl, "stsd");
                if (stsd.end - stsd.start < 16) throw bad(stsd.start, "'stsd' box is too short");
                Box entry = children(stsd.start + 8, stsd.end).stream().findFirst().orElse(null);
                if (entry == null) throw bad(stsd.start, "'stsd' box has no sample entry");
                String format = switch (entry.type) {
                    case "avc1", "avc3" -> "h264";
                    case "hvc1", "hev1" -> "h265";
                    default -> null;
                };
                if (format == null) {
                    throw bad(entry.start, "video track sample entry '" + printable(entry.type) + "': expected H.264"
                            + " (avc1, avc3) or H.265 (hvc1, hev1)");
                }
                if (entry.end - entry.start < 78) throw bad(entry.start, "visual sample entry is too short");
                int width = u16(entry.start + 24);
                int height = u16(entry.start + 26);
                Box cfg = null;
                for (Box b : children(entry.start + 78, entry.end)) {
                    if (b.type.equals(format.equals("h264") ? "avcC" : "hvcC")) cfg = b;
                }
                if (cfg == null) throw bad(entry.start, "sample entry '" + entry.type + "' has no configuration record");
                List<byte[]> params = new ArrayList<>();
                int lengthSize = format.equals("h264") ? avcC(cfg, params) : hvcC(cfg, params);
                List<Sample> samples = samples(stbl, trak, timescale, movieScale);
                return new Mp4SampleTable(name, format, width, height, timescale, lengthSize, params, samples);
            }
            throw new IngestException(name, -1, "no video track ('trak' with handler 'vide') in the 'moov' box");
        }

        /** ISO/IEC 14496-15 5.3.3.1 AVCDecoderConfigurationRecord. */
        private int avcC(Box b, List<byte[]> params) throws IngestException {
            int p = b.start;
            if (b.end - p < 7) throw bad(p, "'avcC' record is too short");
            int lengthSize = (u8(p + 4) & 3) + 1;
            int nSps = u8(p + 5) & 0x1F;
            p += 6;
            p = nalList(b, p, nSps, params);
            if (p >= b.end) throw bad(p, "'avcC' record ends before its PPS count");
            int nPps = u8(p);
            nalList(b, p + 1, nPps, params);
            return lengthSize;
        }

        /** ISO/IEC 14496-15 8.3.3.1 HEVCDecoderConfigurationRecord. */
        private int hvcC(Box b, List<byte[]> params) throws IngestException {
            int p = b.start;
            if (b.end - p < 23) throw bad(p, "'hvcC' record is too short");
            int lengthSize = (u8(p + 21) & 3) + 1;
            int arrays = u8(p + 22);
            p += 23;
            for (int a = 0; a < arrays; a++) {
                if (p + 3 > b.end) throw bad(p, "'hvcC' array " + a + " runs past the record");
                p = nalList(b, p + 3, u16(p + 1), params);
            }
            return lengthSize;
        }

        private int nalList(Box b, int p, int n, List<byte[]> out) throws IngestException {
            for (int i = 0; i < n; i++) {
                if (p + 2 > b.end) throw bad(p, "'" + b.type + "' parameter set " + i + " runs past the record");
                int len = u16(p);
                if (p + 2 + len > b.end) throw bad(p, "'" + b.type + "' parameter set " + i + " runs past the record");
                byte[] nal = new byte[len];
                moov.get(p + 2, nal);
                out.add(nal);
                p += 2 + len;
            }
            return p;
        }

        private List<Sample> samples(Box stbl, Box trak, long timescale, long movieScale) throws IngestException {
            // sizes
            Box stsz = need(stbl, "stsz");
            if (stsz.end - stsz.start < 12) throw bad(stsz.start, "'stsz' box is too short");
            long fixed = u32(stsz.start + 4);
            int count = (int) Math.min(Integer.MAX_VALUE, u32(stsz.start + 8));
            if (fixed == 0 && count > (stsz.end - stsz.start - 12) / 4) {
                throw bad(stsz.start, "'stsz' declares " + count + " samples but holds " + (stsz.end - stsz.start - 12) / 4);
            }
            int[] size = new int[count];
            for (int i = 0; i < count; i++) {
                long s = fixed != 0 ? fixed : u32(stsz.start + 12 + 4 * i);
                if (s > Integer.MAX_VALUE) throw bad(stsz.start, "sample " + i + " declares " + s + " bytes");
                size[i] = (int) s;
            }
            // chunk offsets
            Box stco = child(stbl, "stco");
            Box co64 = child(stbl, "co64");
            long[] chunkOff;
            if (stco != null) {
                int n = entries(stco, 8, 4);
                chunkOff = new long[n];
                for (int i = 0; i < n; i++) chunkOff[i] = u32(stco.start + 8 + 4 * i);
            } else if (co64 != null) {
                int n = entries(co64, 8, 8);
                chunkOff = new long[n];
                for (int i = 0; i < n; i++) chunkOff[i] = moov.getLong(co64.start + 8 + 8 * i);
            } else {
                throw bad(stbl.start, "'stbl' box has neither 'stco' nor 'co64'");
            }
            // sample to chunk
            Box stsc = need(stbl, "stsc");
            int nsc = entries(stsc, 8, 12);
            long[] offset = new long[count];
            int s = 0;
            for (int e = 0; e < nsc && s < count; e++) {
                long firstChunk = u32(stsc.start + 8 + 12 * e);
                long perChunk = u32(stsc.start + 12 + 12 * e);
                long nextFirst = e + 1 < nsc ? u32(stsc.start + 8 + 12 * (e + 1)) : chunkOff.length + 1L;
                if (firstChunk < 1 || nextFirst <= firstChunk || nextFirst > chunkOff.length + 1L) {
                    throw bad(stsc.start, "'stsc' entry " + e + " names chunk " + firstChunk + " out of order or past the "
                            + chunkOff.length + " chunks");
                }
                for (long c = firstChunk; c < nextFirst && s < count; c++) {
                    long p = chunkOff[(int) c - 1];
                    for (long k = 0; k < perChunk && s < count; k++) {
                        offset[s] = p;
                        p += size[s];
                        s++;
                    }
                }
            }
            if (s < count) throw bad(stsc.start, "'stsc' and 'stco' place " + s + " of the " + count + " samples");
            // decode times
            Box stts = need(stbl, "stts");
            int nts = entries(stts, 8, 8);
            long[] dts = new long[count];
            long t = 0;
            s = 0;
            for (int e = 0; e < nts && s < count; e++) {
                long n = u32(stts.start + 8 + 8 * e);
                long delta = u32(stts.start + 12 + 8 * e);
                for (long k = 0; k < n && s < count; k++) {
                    dts[s++] = t;
                    t += delta;
                }
            }
            if (s < count) throw bad(stts.start, "'stts' gives times for " + s + " of the " + count + " samples");
            // composition offsets
            Box ctts = child(stbl, "ctts");
            if (ctts != null) {
                int nct = entries(ctts, 8, 8);
                boolean signed = u8(ctts.start) == 1;
                s = 0;
                for (int e = 0; e < nct && s < count; e++) {
                    long n = u32(ctts.start + 8 + 8 * e);
                    long off = signed ? moov.getInt(ctts.start + 12 + 8 * e) : u32(ctts.start + 12 + 8 * e);
                    for (long k = 0; k < n && s < count; k++) dts[s++] += off;
                }
            }
            // edit list: the first non-empty edit's media time is presentation time 0, after any empty edits
            long mediaStart = 0;
            long emptyNs = 0;
            Box edts = child(trak, "edts");
            Box elst = edts == null ? null : child(edts, "elst");
            if (elst != null) {
                boolean v1 = u8(elst.start) == 1;
                int n = entries(elst, 8, v1 ? 20 : 12);
                for (int e = 0; e < n; e++) {
                    int p = elst.start + 8 + e * (v1 ? 20 : 12);
                    long dur = v1 ? moov.getLong(p) : u32(p);
                    long media = v1 ? moov.getLong(p + 8) : moov.getInt(p + 4);
                    if (media == -1) {
                        if (movieScale > 0) emptyNs += Math.round(dur * 1e9 / movieScale);
                        continue;
                    }
                    mediaStart = media;
                    break;
                }
            }
            // sync samples
            Box stss = child(stbl, "stss");
            boolean[] sync = new boolean[count];
            if (stss == null) {
                java.util.Arrays.fill(sync, true);
            } else {
                int n = entries(stss, 8, 4);
                for (int i = 0; i < n; i++) {
                    long k = u32(stss.start + 8 + 4 * i);
                    if (k >= 1 && k <= count) sync[(int) k - 1] = true;
                }
            }
            List<Sample> out = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                long ns = Math.round((dts[i] - mediaStart) * 1e9 / timescale) + emptyNs;
                out.add(new Sample(i, offset[i], size[i], ns, sync[i]));
            }
            return out;
        }
    }
}
