package io.flywheel.ingest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import org.mp4parser.Box;
import org.mp4parser.IsoFile;
import org.mp4parser.boxes.iso14496.part12.ChunkOffsetBox;
import org.mp4parser.boxes.iso14496.part12.CompositionTimeToSample;
import org.mp4parser.boxes.iso14496.part12.EditListBox;
import org.mp4parser.boxes.iso14496.part12.MediaBox;
import org.mp4parser.boxes.iso14496.part12.MovieBox;
import org.mp4parser.boxes.iso14496.part12.SampleDescriptionBox;
import org.mp4parser.boxes.iso14496.part12.SampleSizeBox;
import org.mp4parser.boxes.iso14496.part12.SampleTableBox;
import org.mp4parser.boxes.iso14496.part12.SampleToChunkBox;
import org.mp4parser.boxes.iso14496.part12.SyncSampleBox;
import org.mp4parser.boxes.iso14496.part12.TimeToSampleBox;
import org.mp4parser.boxes.iso14496.part12.TrackBox;
import org.mp4parser.boxes.iso14496.part15.AvcConfigurationBox;
import org.mp4parser.boxes.iso14496.part15.HevcConfigurationBox;
import org.mp4parser.boxes.iso14496.part15.HevcDecoderConfigurationRecord;
import org.mp4parser.boxes.sampleentry.VisualSampleEntry;
import org.mp4parser.tools.ByteBufferByteChannel;

import io.flywheel.raw.RawChannel;
import io.flywheel.raw.RawStorage;

/**
 * The sample table of the first H.264 / H.265 video track of an MP4 file (ISO/IEC 14496-12, ISO base media file
 * format, section 8.6-8.7; sample entries {@code avc1}/{@code avc3} with {@code avcC} and {@code hvc1}/{@code hev1}
 * with {@code hvcC}, ISO/IEC 14496-15): where each sample (one access unit) lies in the file, its presentation
 * time, whether it is a sync sample, and the decoder configuration. Read from the {@code moov} box only, which
 * mp4parser's isoparser ({@code org.mp4parser:isoparser}) parses; the media data is not read. Fragmented MP4
 * ({@code moof}) is not supported.
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
     * Reads the sample table. The top-level boxes are walked here (their headers only, to find the {@code moov} box
     * and to tell a truncated file); the {@code moov} box is read into memory and parsed by mp4parser's isoparser
     * ({@code org.mp4parser}); the file is closed before this returns.
     *
     * @param path an MP4 file
     * @return the table of its first video track
     * @throws IngestException naming the file (and byte offset where known) when the file is not ISO BMFF, ends
     *     inside a box, has no {@code moov} box, is fragmented ({@code moof}), has no H.264 / H.265 video track, a
     *     table is malformed, or a sample lies past the end of the file (a truncated file)
     * @throws IOException when reading fails
     */
    public static Mp4SampleTable read(Path path) throws IOException {
        try (RawChannel fc = RawStorage.of(FileChannel.open(path, StandardOpenOption.READ))) {
            return read(fc, path.toString());
        }
    }

    /**
     * {@link #read(Path)} of a raw file wherever it lies: only the box headers and the {@code moov} box are read.
     *
     * @param fc the file (left open)
     * @param name the file, for messages
     */
    public static Mp4SampleTable read(RawChannel fc, String name) throws IOException {
        long size;
        ByteBuffer moov = null;
        long moovAt = -1;
        {
            size = fc.size();
            long at = 0;
            while (at < size) {
                if (size - at < 8) {
                    throw new IngestException(name, at, "the file ends inside a box header (" + (size - at)
                            + " bytes left, 8 expected); truncated?");
                }
                ByteBuffer h = readAt(fc, at, (int) Math.min(16, size - at), name);
                long len = Integer.toUnsignedLong(h.getInt(0));
                String type = IsoFile.bytesToFourCC(java.util.Arrays.copyOfRange(h.array(), 4, 8));
                int header = 8;
                if (len == 1) {
                    if (h.limit() < 16) throw new IngestException(name, at, "the file ends inside a 64-bit box size");
                    len = h.getLong(8);
                    header = 16;
                } else if (len == 0) {
                    len = size - at;
                }
                if (at == 0 && !java.util.Set.of("ftyp", "moov", "free", "skip", "wide", "mdat").contains(type)) {
                    throw new IngestException(name, at, "not an MP4 file (ISO/IEC 14496-12): expected an 'ftyp' box"
                            + " first, found '" + printable(type) + "'");
                }
                if (len < header) {
                    throw new IngestException(name, at, "box '" + printable(type) + "' declares size " + len
                            + ", less than its header");
                }
                if (len > size - at) {
                    throw new IngestException(name, at, "the file ends inside the '" + printable(type) + "' box, which"
                            + " declares " + len + " bytes but only " + (size - at) + " remain; truncated?");
                }
                if (type.equals("moof")) {
                    throw new IngestException(name, at, "fragmented MP4 ('moof' box) is not supported; expected one"
                            + " 'moov' sample table");
                }
                if (type.equals("moov") && moov == null) {
                    if (len > MAX_BOX) throw new IngestException(name, at, "moov box of " + len + " bytes is too large");
                    moov = readAt(fc, at, (int) len, name);
                    moovAt = at;
                }
                at += len;
            }
        }
        if (moov == null) {
            throw new IngestException(name, -1, "no 'moov' box (the sample table); truncated before it was written?");
        }
        Mp4SampleTable t;
        try (IsoFile iso = new IsoFile(new ByteBufferByteChannel(moov))) {
            t = fromMoov(name, moovAt, iso.getMovieBox());
        } catch (IngestException e) {
            throw e;
        } catch (IOException | RuntimeException | AssertionError | OutOfMemoryError e) {
            // isoparser reports a malformed table by an unchecked exception (buffer underflow, negative array size),
            // an assert (when assertions are on) or, for a count of billions, a failed allocation of that one array
            throw new IngestException(name, moovAt, "malformed 'moov' box: " + e, e);
        }
        for (Sample s : t.samples) {
            if (s.offset < 0 || s.offset + s.size > size) {
                throw new IngestException(name, s.offset, "video sample " + s.index + " of " + t.samples.size()
                        + " (" + s.size + " bytes) runs past the end of the file at byte " + size + "; truncated?");
            }
        }
        return t;
    }

    private static Mp4SampleTable fromMoov(String name, long moovAt, MovieBox movie) throws IngestException {
        if (movie == null) throw new IngestException(name, moovAt, "the 'moov' box does not parse");
        long movieScale = movie.getMovieHeaderBox() == null ? 0 : movie.getMovieHeaderBox().getTimescale();
        for (TrackBox trak : movie.getBoxes(TrackBox.class)) {
            MediaBox mdia = trak.getMediaBox();
            if (mdia == null || mdia.getHandlerBox() == null || !"vide".equals(mdia.getHandlerBox().getHandlerType())) {
                continue;
            }
            if (mdia.getMediaHeaderBox() == null) throw bad(name, moovAt, "video track has no 'mdhd' box");
            long timescale = mdia.getMediaHeaderBox().getTimescale();
            if (timescale == 0) throw bad(name, moovAt, "'mdhd' timescale is 0");
            SampleTableBox stbl = mdia.getMediaInformationBox() == null ? null
                    : mdia.getMediaInformationBox().getSampleTableBox();
            if (stbl == null) throw bad(name, moovAt, "video track has no 'stbl' box");
            SampleDescriptionBox stsd = stbl.getSampleDescriptionBox();
            if (stsd == null || stsd.getBoxes().isEmpty()) throw bad(name, moovAt, "'stsd' box has no sample entry");
            Box entry = stsd.getBoxes().get(0);
            String format = switch (entry.getType()) {
                case "avc1", "avc3" -> "h264";
                case "hvc1", "hev1" -> "h265";
                default -> null;
            };
            if (format == null || !(entry instanceof VisualSampleEntry vse)) {
                throw bad(name, moovAt, "video track sample entry '" + printable(entry.getType()) + "': expected"
                        + " H.264 (avc1, avc3) or H.265 (hvc1, hev1)");
            }
            List<byte[]> params = new ArrayList<>();
            int lengthSize;
            if (format.equals("h264")) {
                AvcConfigurationBox avcC = first(vse.getBoxes(AvcConfigurationBox.class));
                if (avcC == null) throw bad(name, moovAt, "sample entry '" + entry.getType() + "' has no 'avcC' box");
                lengthSize = avcC.getLengthSizeMinusOne() + 1;
                for (ByteBuffer b : avcC.getSequenceParameterSets()) params.add(bytes(b));
                for (ByteBuffer b : avcC.getPictureParameterSets()) params.add(bytes(b));
            } else {
                HevcConfigurationBox hvcC = first(vse.getBoxes(HevcConfigurationBox.class));
                if (hvcC == null) throw bad(name, moovAt, "sample entry '" + entry.getType() + "' has no 'hvcC' box");
                lengthSize = hvcC.getLengthSizeMinusOne() + 1;
                for (HevcDecoderConfigurationRecord.Array a : hvcC.getArrays()) params.addAll(a.nalUnits);
            }
            if (lengthSize == 3) throw bad(name, moovAt, "NAL length size 3 is not allowed (ISO/IEC 14496-15)");
            List<Sample> samples = samples(name, moovAt, stbl, trak, timescale, movieScale);
            return new Mp4SampleTable(name, format, vse.getWidth(), vse.getHeight(), timescale, lengthSize, params,
                    samples);
        }
        throw new IngestException(name, -1, "no video track ('trak' with handler 'vide') in the 'moov' box");
    }

    /** Sample offsets from stsz + stsc + stco/co64, times from stts + ctts + elst, sync flags from stss. */
    private static List<Sample> samples(String name, long at, SampleTableBox stbl, TrackBox trak, long timescale,
                                        long movieScale) throws IngestException {
        SampleSizeBox stsz = stbl.getSampleSizeBox();
        if (stsz == null) throw bad(name, at, "'stbl' box has no 'stsz' box");
        long n = stsz.getSampleCount();
        if (n > Integer.MAX_VALUE) throw bad(name, at, "'stsz' declares " + n + " samples");
        int count = (int) n;
        long fixed = stsz.getSampleSize();
        long[] sizes = fixed != 0 ? null : stsz.getSampleSizes();
        if (sizes != null && sizes.length < count) {
            throw bad(name, at, "'stsz' declares " + count + " samples but lists " + sizes.length + " sizes");
        }
        ChunkOffsetBox stco = stbl.getChunkOffsetBox();
        if (stco == null) throw bad(name, at, "'stbl' box has neither 'stco' nor 'co64'");
        long[] chunkOff = stco.getChunkOffsets();
        SampleToChunkBox stsc = stbl.getSampleToChunkBox();
        if (stsc == null) throw bad(name, at, "'stbl' box has no 'stsc' box");
        List<SampleToChunkBox.Entry> sc = stsc.getEntries();
        long[] offset = new long[count];
        int[] size = new int[count];
        int s = 0;
        for (int e = 0; e < sc.size() && s < count; e++) {
            long firstChunk = sc.get(e).getFirstChunk();
            long perChunk = sc.get(e).getSamplesPerChunk();
            long nextFirst = e + 1 < sc.size() ? sc.get(e + 1).getFirstChunk() : chunkOff.length + 1L;
            if (firstChunk < 1 || nextFirst <= firstChunk || nextFirst > chunkOff.length + 1L) {
                throw bad(name, at, "'stsc' entry " + e + " names chunk " + firstChunk + " out of order or past the "
                        + chunkOff.length + " chunks");
            }
            for (long c = firstChunk; c < nextFirst && s < count; c++) {
                long p = chunkOff[(int) c - 1];
                for (long k = 0; k < perChunk && s < count; k++) {
                    long z = fixed != 0 ? fixed : sizes[s];
                    if (z > Integer.MAX_VALUE) throw bad(name, at, "sample " + s + " declares " + z + " bytes");
                    offset[s] = p;
                    size[s] = (int) z;
                    p += z;
                    s++;
                }
            }
        }
        if (s < count) throw bad(name, at, "'stsc' and 'stco' place " + s + " of the " + count + " samples");
        // decode times (the entries are walked here: TimeToSampleBox.blowupTimeToSamples trusts the counts)
        if (stbl.getTimeToSampleBox() == null) throw bad(name, at, "'stbl' box has no 'stts' box");
        long[] time = new long[count];
        long t = 0;
        s = 0;
        for (TimeToSampleBox.Entry e : stbl.getTimeToSampleBox().getEntries()) {
            for (long k = 0; k < e.getCount() && s < count; k++) {
                time[s++] = t;
                t += e.getDelta();
            }
        }
        if (s < count) throw bad(name, at, "'stts' gives times for " + s + " of the " + count + " samples");
        // composition offsets (version 1 signed; isoparser reads them as int)
        if (stbl.getCompositionTimeToSample() != null) {
            s = 0;
            for (CompositionTimeToSample.Entry e : stbl.getCompositionTimeToSample().getEntries()) {
                for (long k = 0; k < Integer.toUnsignedLong(e.getCount()) && s < count; k++) time[s++] += e.getOffset();
            }
        }
        // edit list: the first non-empty edit's media time is presentation time 0, after any empty edits
        long mediaStart = 0;
        long emptyNs = 0;
        EditListBox elst = org.mp4parser.tools.Path.getPath(trak, "edts/elst");
        if (elst != null) {
            for (EditListBox.Entry e : elst.getEntries()) {
                if (e.getMediaTime() == -1) {
                    if (movieScale > 0) emptyNs += Math.round(e.getSegmentDuration() * 1e9 / movieScale);
                    continue;
                }
                mediaStart = e.getMediaTime();
                break;
            }
        }
        boolean[] sync = new boolean[count];
        SyncSampleBox stss = stbl.getSyncSampleBox();
        if (stss == null) {
            java.util.Arrays.fill(sync, true);
        } else {
            for (long k : stss.getSampleNumber()) if (k >= 1 && k <= count) sync[(int) k - 1] = true;
        }
        List<Sample> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long ns = Math.round((time[i] - mediaStart) * 1e9 / timescale) + emptyNs;
            out.add(new Sample(i, offset[i], size[i], ns, sync[i]));
        }
        return out;
    }

    private static <T> T first(List<T> l) {
        return l.isEmpty() ? null : l.get(0);
    }

    private static byte[] bytes(ByteBuffer b) {
        ByteBuffer d = b.duplicate().rewind();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    private static IngestException bad(String name, long moovAt, String what) {
        return new IngestException(name, moovAt, "in the 'moov' box: " + what);
    }

    /**
     * Same as {@link #toAnnexB(byte[], long)} without the sample's offset (messages then name no sample).
     *
     * @param sample the bytes of one sample, as stored in the file
     * @return the sample in Annex B form
     * @throws MalformedDataException when a NAL length runs past the sample
     */
    public byte[] toAnnexB(byte[] sample) throws IngestException {
        return toAnnexB(sample, -1);
    }

    /**
     * @param sample the bytes of one sample, as stored in the file
     * @param offset the sample's byte offset in the file, which names the sample (index in decode order) in error
     *     messages; -1 when unknown
     * @return the same NAL units in Annex B form (each after a 4-byte start code 00 00 00 01), with the
     *     configuration's parameter sets in front when the sample holds a random-access picture (H.264 IDR, NAL type 5;
     *     H.265 IRAP, types 16-23) and no parameter set of its own
     * @throws MalformedDataException (file, the sample's offset and index, the NAL unit's byte in the sample) when a
     *     NAL length is 0 or runs past the sample, or the sample ends inside a length prefix: the bytes were read but
     *     are damaged; other samples are unaffected
     */
    public byte[] toAnnexB(byte[] sample, long offset) throws IngestException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(sample.length + 64);
        boolean h265 = format.equals("h265");
        boolean random = false;
        boolean hasParams = false;
        List<int[]> nals = new ArrayList<>();
        int p = 0;
        while (p < sample.length) {
            if (sample.length - p < lengthSize) {
                throw malformed(offset, sample.length, "ends inside a " + lengthSize + "-byte NAL length at sample"
                        + " byte " + p);
            }
            long n = 0;
            for (int i = 0; i < lengthSize; i++) n = n << 8 | (sample[p + i] & 0xFF);
            p += lengthSize;
            if (n > sample.length - p || n == 0) {
                throw malformed(offset, sample.length, "NAL unit at sample byte " + (p - lengthSize) + " declares " + n
                        + " bytes, " + (sample.length - p) + " remain");
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

    private MalformedDataException malformed(long offset, int size, String problem) {
        String which = "video sample";
        if (offset >= 0) {
            for (Sample s : samples) {
                if (s.offset() == offset) {
                    which = "video sample " + s.index() + " of " + samples.size();
                    break;
                }
            }
        }
        return new MalformedDataException(file, offset, which + " (" + size + " bytes, " + format + "): " + problem
                + "; expected " + lengthSize + "-byte big-endian NAL unit lengths that add up to the sample's size"
                + " (ISO/IEC 14496-15 sample format)");
    }

    /** @return true when the file's bytes 4..8 are the box type {@code ftyp} (an ISO BMFF / MP4 file) */
    static boolean looksLikeMp4(byte[] head, int n) {
        return n >= 8 && head[4] == 'f' && head[5] == 't' && head[6] == 'y' && head[7] == 'p';
    }

    private static ByteBuffer readAt(RawChannel fc, long at, int n, String name) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        long p = at;
        while (b.hasRemaining()) {
            int r = fc.read(b, p);
            if (r < 0) throw new IngestException(name, p, "the file ends early");
            p += r;
        }
        return b.flip();
    }

    private static String printable(String t) {
        StringBuilder s = new StringBuilder();
        for (char c : t.toCharArray()) s.append(c >= 32 && c < 127 ? String.valueOf(c) : String.format("\\x%02X", (int) c));
        return s.toString();
    }
}
