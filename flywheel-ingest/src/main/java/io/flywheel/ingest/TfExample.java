package io.flywheel.ingest;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;

/**
 * Parses a {@code tf.train.Example} from its protobuf wire format (tensorflow/core/example/example.proto,
 * feature.proto) with {@link CodedInputStream}, keeping the position of every bytes value so that images can
 * be located in the file: {@code Example{Features features = 1}}, {@code Features{map<string, Feature>
 * feature = 1}}, {@code Feature{oneof kind: BytesList bytes_list = 1, FloatList float_list = 2, Int64List
 * int64_list = 3}}, each list {@code repeated value = 1} (floats and int64s packed or not).
 */
final class TfExample {
    private TfExample() {}

    /** One feature's values. */
    sealed interface Feature permits Bytes, Floats, Int64s {}

    /**
     * @param offsets offset of each value's first byte in the record
     * @param lengths length of each value
     */
    record Bytes(byte[] record, int[] offsets, int[] lengths) implements Feature {
        int size() { return offsets.length; }

        byte[] get(int i) {
            byte[] out = new byte[lengths[i]];
            System.arraycopy(record, offsets[i], out, 0, lengths[i]);
            return out;
        }

        String string(int i) {
            return new String(record, offsets[i], lengths[i], java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    record Floats(float[] values) implements Feature {}

    record Int64s(long[] values) implements Feature {}

    /**
     * @param record the serialized Example
     * @param file file name for errors
     * @param recordOffset absolute offset of the record's first byte, for errors
     * @return feature key -> values, in the order stored
     * @throws IngestException naming the file and offset when the bytes are not an Example
     */
    static Map<String, Feature> parse(byte[] record, String file, long recordOffset) throws IngestException {
        Map<String, Feature> out = new LinkedHashMap<>();
        int[] pos = {0};
        try {
            CodedInputStream ex = CodedInputStream.newInstance(record, 0, record.length);
            while (true) {
                int tag = ex.readTag();
                if (tag == 0) break;
                if (tag == tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                    int len = ex.readRawVarint32();
                    int start = ex.getTotalBytesRead();
                    pos[0] = start;
                    checkLen(len, start, record.length);
                    features(record, start, len, out, pos);
                    ex.skipRawBytes(len);
                } else {
                    ex.skipField(tag);
                }
            }
        } catch (InvalidProtocolBufferException | IllegalStateException e) {
            throw new IngestException(file, recordOffset + pos[0], "not a tf.train.Example: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IngestException(file, recordOffset + pos[0], "not a tf.train.Example: " + e.getMessage(), e);
        }
        return Collections.unmodifiableMap(out);
    }

    private static int tag(int field, int wireType) {
        return (field << 3) | wireType;
    }

    private static void checkLen(int len, int start, int end) throws InvalidProtocolBufferException {
        if (len < 0 || len > end - start) {
            throw new InvalidProtocolBufferException("a length of " + len + " at offset " + start
                    + " runs past the end of its message");
        }
    }

    private static void features(byte[] b, int off, int len, Map<String, Feature> out, int[] pos) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(b, off, len);
        while (true) {
            int tag = in.readTag();
            if (tag == 0) break;
            if (tag != tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                in.skipField(tag);
                continue;
            }
            int elen = in.readRawVarint32();
            int estart = off + in.getTotalBytesRead();
            pos[0] = estart;
            checkLen(elen, estart, off + len);
            entry(b, estart, elen, out, pos);
            in.skipRawBytes(elen);
        }
    }

    private static void entry(byte[] b, int off, int len, Map<String, Feature> out, int[] pos) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(b, off, len);
        String key = null;
        Feature value = null;
        while (true) {
            int tag = in.readTag();
            if (tag == 0) break;
            int field = WireFormat.getTagFieldNumber(tag);
            if (field == 1 && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                key = in.readStringRequireUtf8();
            } else if (field == 2 && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                int flen = in.readRawVarint32();
                int fstart = off + in.getTotalBytesRead();
                pos[0] = fstart;
                checkLen(flen, fstart, off + len);
                value = feature(b, fstart, flen);
                in.skipRawBytes(flen);
            } else {
                in.skipField(tag);
            }
        }
        if (key == null) throw new InvalidProtocolBufferException("a feature map entry has no key");
        out.put(key, value == null ? new Floats(new float[0]) : value);
    }

    private static Feature feature(byte[] b, int off, int len) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(b, off, len);
        Feature f = null;
        while (true) {
            int tag = in.readTag();
            if (tag == 0) break;
            int field = WireFormat.getTagFieldNumber(tag);
            if (WireFormat.getTagWireType(tag) != WireFormat.WIRETYPE_LENGTH_DELIMITED || field < 1 || field > 3) {
                in.skipField(tag);
                continue;
            }
            int llen = in.readRawVarint32();
            int lstart = off + in.getTotalBytesRead();
            checkLen(llen, lstart, off + len);
            f = switch (field) {
                case 1 -> bytesList(b, lstart, llen);
                case 2 -> floatList(b, lstart, llen);
                default -> int64List(b, lstart, llen);
            };
            in.skipRawBytes(llen);
        }
        return f == null ? new Floats(new float[0]) : f;
    }

    private static Bytes bytesList(byte[] b, int off, int len) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(b, off, len);
        List<int[]> vals = new ArrayList<>();
        while (true) {
            int tag = in.readTag();
            if (tag == 0) break;
            if (tag != tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                in.skipField(tag);
                continue;
            }
            int vlen = in.readRawVarint32();
            int vstart = off + in.getTotalBytesRead();
            checkLen(vlen, vstart, off + len);
            vals.add(new int[] {vstart, vlen});
            in.skipRawBytes(vlen);
        }
        int[] o = new int[vals.size()];
        int[] l = new int[vals.size()];
        for (int i = 0; i < o.length; i++) {
            o[i] = vals.get(i)[0];
            l[i] = vals.get(i)[1];
        }
        return new Bytes(b, o, l);
    }

    private static Floats floatList(byte[] b, int off, int len) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(b, off, len);
        float[] v = new float[Math.max(4, len / 4)];
        int n = 0;
        while (true) {
            int tag = in.readTag();
            if (tag == 0) break;
            if (tag == tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                int plen = in.readRawVarint32();
                if (plen < 0 || plen % 4 != 0 || plen > len) {
                    throw new InvalidProtocolBufferException("packed float list of " + plen + " bytes");
                }
                int lim = in.pushLimit(plen);
                while (in.getBytesUntilLimit() > 0) {
                    if (n == v.length) v = java.util.Arrays.copyOf(v, n * 2);
                    v[n++] = in.readFloat();
                }
                in.popLimit(lim);
            } else if (tag == tag(1, WireFormat.WIRETYPE_FIXED32)) {
                if (n == v.length) v = java.util.Arrays.copyOf(v, n * 2);
                v[n++] = in.readFloat();
            } else {
                in.skipField(tag);
            }
        }
        return new Floats(java.util.Arrays.copyOf(v, n));
    }

    private static Int64s int64List(byte[] b, int off, int len) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(b, off, len);
        long[] v = new long[Math.max(4, len)];
        int n = 0;
        while (true) {
            int tag = in.readTag();
            if (tag == 0) break;
            if (tag == tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                int plen = in.readRawVarint32();
                if (plen < 0 || plen > len) throw new InvalidProtocolBufferException("packed int64 list of " + plen + " bytes");
                int lim = in.pushLimit(plen);
                while (in.getBytesUntilLimit() > 0) {
                    if (n == v.length) v = java.util.Arrays.copyOf(v, n * 2);
                    v[n++] = in.readInt64();
                }
                in.popLimit(lim);
            } else if (tag == tag(1, WireFormat.WIRETYPE_VARINT)) {
                if (n == v.length) v = java.util.Arrays.copyOf(v, n * 2);
                v[n++] = in.readInt64();
            } else {
                in.skipField(tag);
            }
        }
        return new Int64s(java.util.Arrays.copyOf(v, n));
    }
}
