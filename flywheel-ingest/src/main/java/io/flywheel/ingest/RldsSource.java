package io.flywheel.ingest;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads RLDS episodes (https://github.com/google-research/rlds; the Open X-Embodiment TFDS layout) from a
 * TFRecord file: each record is one {@code tf.train.Example} holding one episode, with per-step features
 * under {@code steps/...} (flattened over steps) and per-episode features under {@code episode_metadata/...}.
 *
 * <p>Roles (when the profile names none): bytes features whose values are JPEG or PNG images -> CAMERA
 * (locators are plain byte ranges of the .tfrecord file); {@code steps/observation/state} -> STATE;
 * {@code steps/action} -> ACTION; {@code steps/language_instruction} -> TASK; other numeric step features
 * -> OTHER with values. Step count: the length of {@code steps/is_first}, else of the first bytes feature.
 *
 * <p>Times: RLDS stores none. Step {@code k} of the episode at record index {@code e} gets the nominal time
 * {@code epochNs + e * episodeSpacingNs + k * 1e9 / rateHz} as log time and chosen time (no header stamp).
 * The defaults (5 Hz, epoch 1_700_000_000 s, episodes 100 s apart) are BridgeData's nominal rate and the
 * convention of {@code camera/bridge-mcap}, so the RLDS and MCAP versions of an episode share times.
 */
final class RldsSource {
    private RldsSource() {}

    /** Reads every episode of a TFRecord file. */
    static List<Collector> read(Path path, RobotProfile profile, IngestOptions opts) throws IOException {
        String uri = opts.rawFiles().uri(path);
        String name = path.toString();
        List<Collector> out = new ArrayList<>();
        long periodNs = Math.round(1e9 / opts.rldsRateHz());
        try (TfRecordReader r = TfRecordReader.open(path)) {
            TfRecordReader.TfRecord rec;
            while ((rec = r.next()) != null) {
                Map<String, TfExample.Feature> f = TfExample.parse(rec.data(), name, rec.dataOffset());
                Collector c = new Collector(profile);
                int steps = stepCount(f, name, rec);
                long t0 = opts.rldsEpochNs() + rec.index() * opts.rldsEpisodeSpacingNs();
                long[] times = new long[steps];
                for (int k = 0; k < steps; k++) times[k] = t0 + k * periodNs;
                TreeMap<String, TfExample.Feature> stepKeys = new TreeMap<>();
                f.forEach((k, v) -> {
                    if (k.startsWith("steps/")) stepKeys.put(k, v);
                    else c.episodeMetadata.put(k.startsWith("episode_metadata/") ? k.substring(17) : k, text(v));
                });
                c.episodeMetadata.put("rlds.record_index", Integer.toString(rec.index()));
                c.recordingMetadata.put("rlds.rate_hz", Double.toString(opts.rldsRateHz()));
                c.recordingMetadata.put("rlds.epoch_ns", Long.toString(opts.rldsEpochNs()));
                int id = 0;
                for (Map.Entry<String, TfExample.Feature> e : stepKeys.entrySet()) {
                    id++;
                    String key = e.getKey();
                    TfExample.Feature v = e.getValue();
                    if (v instanceof TfExample.Bytes b) {
                        if (b.size() != steps) {
                            throw new IngestException(name, rec.dataOffset(), "RLDS episode " + rec.index() + ": feature "
                                    + key + " has " + b.size() + " values for " + steps + " steps");
                        }
                        String fmt = b.size() == 0 ? "" : sniff(b.record(), b.offsets()[0], b.lengths()[0]);
                        boolean image = !fmt.isEmpty();
                        StreamRole guess = image ? StreamRole.CAMERA
                                : key.equals("steps/language_instruction") ? StreamRole.TASK : StreamRole.OTHER;
                        StreamBuilder sb = c.stream(key, id, image ? "rlds/image" : "rlds/bytes", guess);
                        for (int k = 0; k < steps; k++) {
                            int i = sb.add(times[k], 0);
                            if (sb.role == StreamRole.CAMERA) {
                                sb.locator(i, new RawLocator(uri, -1, rec.dataOffset() + b.offsets()[k], b.lengths()[k],
                                        "", sniff(b.record(), b.offsets()[k], b.lengths()[k]), 0, 0));
                            } else if (!image) {
                                sb.text(i, b.string(k));
                            }
                        }
                    } else {
                        double[] all = numbers(v);
                        if (steps == 0 || all.length % steps != 0) {
                            throw new IngestException(name, rec.dataOffset(), "RLDS episode " + rec.index() + ": feature "
                                    + key + " has " + all.length + " values, not a multiple of " + steps + " steps");
                        }
                        int dim = all.length / steps;
                        StreamRole guess = key.equals("steps/observation/state") ? StreamRole.STATE
                                : key.equals("steps/action") ? StreamRole.ACTION : StreamRole.OTHER;
                        StreamBuilder sb = c.stream(key, id, v instanceof TfExample.Floats ? "rlds/float" : "rlds/int64", guess);
                        for (int k = 0; k < steps; k++) {
                            int i = sb.add(times[k], 0);
                            double[] row = new double[dim];
                            System.arraycopy(all, k * dim, row, 0, dim);
                            sb.value(i, sb.role == StreamRole.GRIPPER && dim > 0 ? new double[] {row[0]} : row);
                        }
                    }
                }
                out.add(c);
            }
        }
        return out;
    }

    private static int stepCount(Map<String, TfExample.Feature> f, String name, TfRecordReader.TfRecord rec)
            throws IngestException {
        if (f.get("steps/is_first") instanceof TfExample.Int64s i) return i.values().length;
        for (Map.Entry<String, TfExample.Feature> e : f.entrySet()) {
            if (e.getKey().startsWith("steps/") && e.getValue() instanceof TfExample.Bytes b) return b.size();
        }
        throw new IngestException(name, rec.dataOffset(), "RLDS episode " + rec.index()
                + ": no steps/is_first and no bytes feature under steps/ to count the steps by");
    }

    private static double[] numbers(TfExample.Feature v) {
        if (v instanceof TfExample.Floats fl) {
            double[] d = new double[fl.values().length];
            for (int i = 0; i < d.length; i++) d[i] = fl.values()[i];
            return d;
        }
        long[] l = ((TfExample.Int64s) v).values();
        double[] d = new double[l.length];
        for (int i = 0; i < d.length; i++) d[i] = l[i];
        return d;
    }

    private static String text(TfExample.Feature v) {
        StringBuilder sb = new StringBuilder();
        if (v instanceof TfExample.Bytes b) {
            for (int i = 0; i < b.size(); i++) sb.append(i == 0 ? "" : ",").append(b.string(i));
        } else if (v instanceof TfExample.Floats fl) {
            for (int i = 0; i < fl.values().length; i++) sb.append(i == 0 ? "" : ",").append(fl.values()[i]);
        } else {
            long[] l = ((TfExample.Int64s) v).values();
            for (int i = 0; i < l.length; i++) sb.append(i == 0 ? "" : ",").append(l[i]);
        }
        return sb.toString();
    }

    /** @return "jpeg" or "png" from the magic bytes, else "" */
    static String sniff(byte[] b, int off, int len) {
        if (len >= 3 && (b[off] & 0xFF) == 0xFF && (b[off + 1] & 0xFF) == 0xD8 && (b[off + 2] & 0xFF) == 0xFF) return "jpeg";
        if (len >= 8 && (b[off] & 0xFF) == 0x89 && b[off + 1] == 'P' && b[off + 2] == 'N' && b[off + 3] == 'G') return "png";
        return "";
    }
}
