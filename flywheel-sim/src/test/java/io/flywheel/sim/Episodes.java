package io.flywheel.sim;

import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;

/** Test helper: reads a simulated episode back with the streaming MCAP reader and decodes its CDR. */
final class Episodes {
    private Episodes() {}

    /** One message, with the fields the tests look at. */
    record Msg(String topic, long sequence, long logTime, long publishTime, byte[] data) {
        /** @return header stamp in ns (CDR: 4-byte encapsulation, int32 sec, uint32 nanosec) */
        long stamp() {
            ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
            return b.getInt(4) * 1_000_000_000L + Integer.toUnsignedLong(b.getInt(8));
        }
    }

    /** Everything in one file. */
    record Content(Map<String, List<Msg>> byTopic, Map<String, Map<String, String>> metadata) {}

    static Content read(Path file) throws IOException {
        Map<Integer, String> topics = new HashMap<>();
        Map<String, List<Msg>> by = new LinkedHashMap<>();
        Map<String, Map<String, String>> meta = new LinkedHashMap<>();
        try (McapStreamReader r = McapStreamReader.open(file)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Channel c) {
                    topics.put(c.id(), c.topic());
                } else if (rec instanceof Record.Message m) {
                    byte[] d = new byte[m.data().remaining()];
                    m.data().duplicate().get(d);
                    String t = topics.get(m.channelId());
                    by.computeIfAbsent(t, k -> new ArrayList<>()).add(new Msg(t, m.sequence(), m.logTime(), m.publishTime(), d));
                } else if (rec instanceof Record.Metadata md) {
                    meta.put(md.name(), md.metadata());
                }
            }
        }
        return new Content(by, meta);
    }

    private static int align(int p, int n) {
        int rel = p - 4;
        return 4 + (rel + n - 1) / n * n;
    }

    /** Offset just after std_msgs/Header (stamp + frame_id). */
    private static int afterHeader(ByteBuffer b) {
        int p = 12;
        int len = b.getInt(p);
        return p + 4 + len;
    }

    /** @return the JPEG bytes of a sensor_msgs/CompressedImage */
    static byte[] jpeg(byte[] cdr) {
        ByteBuffer b = ByteBuffer.wrap(cdr).order(ByteOrder.LITTLE_ENDIAN);
        int p = align(afterHeader(b), 4);
        int fl = b.getInt(p);
        String format = new String(cdr, p + 4, fl - 1, StandardCharsets.UTF_8);
        if (!format.equals("jpeg")) {
            throw new AssertionError("format " + format);
        }
        p = align(p + 4 + fl, 4);
        int n = b.getInt(p);
        byte[] out = new byte[n];
        System.arraycopy(cdr, p + 4, out, 0, n);
        return out;
    }

    /** @return the decoded image */
    static BufferedImage image(byte[] cdr) throws IOException {
        return ImageIO.read(new ByteArrayInputStream(jpeg(cdr)));
    }

    /** @return [position[], velocity[], effort[]] of a sensor_msgs/JointState, and checks the 16 names */
    static double[][] jointState(byte[] cdr) {
        ByteBuffer b = ByteBuffer.wrap(cdr).order(ByteOrder.LITTLE_ENDIAN);
        int p = align(afterHeader(b), 4);
        int names = b.getInt(p);
        p += 4;
        for (int i = 0; i < names; i++) {
            p = align(p, 4);
            p += 4 + b.getInt(p);
        }
        double[][] out = new double[3][];
        for (int f = 0; f < 3; f++) {
            p = align(p, 4);
            int n = b.getInt(p);
            p = align(p + 4, 8);
            out[f] = new double[n];
            for (int i = 0; i < n; i++) {
                out[f][i] = b.getDouble(p);
                p += 8;
            }
        }
        return out;
    }

    /** @return the data of a std_msgs/String */
    static String string(byte[] cdr) {
        ByteBuffer b = ByteBuffer.wrap(cdr).order(ByteOrder.LITTLE_ENDIAN);
        int n = b.getInt(4);
        return new String(cdr, 8, n - 1, StandardCharsets.UTF_8);
    }

    /**
     * @return mean absolute difference (0..255) between the 4x4-block means of two equally sized
     *     images, per channel: what remains after averaging out pixel noise, as a near-duplicate
     *     detector sees it
     */
    static double meanAbsDiff(BufferedImage a, BufferedImage b) {
        int bw = a.getWidth() / 4;
        int bh = a.getHeight() / 4;
        double sum = 0;
        for (int by = 0; by < bh; by++) {
            for (int bx = 0; bx < bw; bx++) {
                for (int s = 0; s < 24; s += 8) {
                    int da = 0;
                    int db = 0;
                    for (int y = by * 4; y < by * 4 + 4; y++) {
                        for (int x = bx * 4; x < bx * 4 + 4; x++) {
                            da += (a.getRGB(x, y) >> s) & 0xFF;
                            db += (b.getRGB(x, y) >> s) & 0xFF;
                        }
                    }
                    sum += Math.abs(da - db) / 16.0;
                }
            }
        }
        return sum / (3.0 * bw * bh);
    }
}
