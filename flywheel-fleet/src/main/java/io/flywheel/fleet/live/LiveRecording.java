package io.flywheel.fleet.live;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import io.flywheel.fleet.v1.ChannelInfo;
import io.flywheel.fleet.v1.Observation;
import io.flywheel.fleet.v1.ObservationRequest;
import io.flywheel.fleet.v1.OpenEpisode;
import io.flywheel.fleet.v1.SkippedFrame;
import io.flywheel.ingest.FrameSkips;
import io.flywheel.mcap.McapWriter;

/**
 * Writes a live episode's journal as an MCAP file with {@link McapWriter}: zstd chunks (level 1: the messages are
 * mostly JPEG, which no level shrinks) of 4 MiB with message indexes, chunk and metadata indexes, statistics, summary
 * offsets and CRCs. What goes in is listed in {@code StreamObservations} (gateway.proto): OPEN's profile and channels
 * (in its order, their metadata sorted by key), every Observation as a Message record in the order sent, every
 * SkippedFrame as a {@link FrameSkips} message (its channel registered at the first one), the Metadata records
 * {@code episode} and {@code flywheel.live}. Nothing in the file depends on the clock or the machine, so the same
 * journal gives the same bytes (and SHA-256) every time.
 */
final class LiveRecording {
    /** The MCAP header's library. */
    static final String LIBRARY = "flywheel-gateway";

    /** What was written. */
    record Written(long messages, long skippedFrames) {}

    private LiveRecording() {}

    /**
     * @param journal a journal whose last record is the END
     * @param open its first record, the OPEN (the header's profile is written before the journal is read)
     * @param target the MCAP file (written to a temporary file beside it, forced to disk and renamed)
     * @param robotId the robot
     * @param streamId the stream id
     * @return the counts
     * @throws IOException when the journal cannot be read or the file written (nothing is left under the target name)
     */
    static Written write(Path journal, OpenEpisode open, Path target, String robotId, String streamId)
            throws IOException {
        McapWriter w = McapWriter.builder().profile(open.getProfile()).library(LIBRARY)
                .compression(McapWriter.Compression.ZSTD).zstdLevel(1).syncOnClose(true).build(target);
        boolean ok = false;
        try {
            Writer out = new Writer(w, robotId, streamId);
            LiveJournal.read(journal, out::record);
            if (!out.ended) {
                throw new IOException(journal + " does not end with END: the episode is not over");
            }
            w.close();
            ok = true;
            return new Written(out.messages, out.skipped);
        } finally {
            if (!ok) {
                w.abort();
            }
        }
    }

    /** One journal's records into one writer. */
    private static final class Writer {
        final McapWriter w;
        final String robotId;
        final String streamId;
        final Map<Integer, Integer> channelIds = new HashMap<>();
        final Map<Integer, String> topics = new HashMap<>();
        OpenEpisode open;
        int skipChannel;
        long messages;
        long skipped;
        boolean ended;

        Writer(McapWriter w, String robotId, String streamId) {
            this.w = w;
            this.robotId = robotId;
            this.streamId = streamId;
        }

        void record(ObservationRequest req) throws IOException {
            switch (req.getMessageCase()) {
                case OPEN -> open(req.getOpen());
                case OBSERVATION -> {
                    Observation o = req.getObservation();
                    w.writeMessage(channelIds.get(o.getChannelId()), o.getSequence() & 0xFFFFFFFFL, o.getLogTimeNs(),
                            o.getPublishTimeNs(), o.getData().asReadOnlyByteBuffer());
                    messages++;
                }
                case SKIPPED_FRAME -> {
                    SkippedFrame s = req.getSkippedFrame();
                    if (skipChannel == 0) {
                        int schema = w.registerSchema(FrameSkips.SCHEMA_NAME, FrameSkips.SCHEMA_ENCODING,
                                FrameSkips.schema());
                        skipChannel = w.registerChannel(FrameSkips.TOPIC, FrameSkips.MESSAGE_ENCODING, schema, Map.of());
                    }
                    byte[] m = FrameSkips.encode(new FrameSkips.Skip(topics.get(s.getChannelId()), s.getLogTimeNs(),
                            s.getRepeatsLogTimeNs(), s.getHammingDistance(), s.getThresholdBits()));
                    w.writeMessage(skipChannel, skipped, s.getLogTimeNs(), s.getLogTimeNs(), m);
                    skipped++;
                }
                case END -> {
                    Map<String, String> md = new TreeMap<>(open.getMetadataMap());
                    md.putAll(req.getEnd().getMetadataMap());
                    if (!md.isEmpty()) {
                        w.writeMetadata("episode", md);
                    }
                    Map<String, String> live = new TreeMap<>();
                    live.put("robot_id", robotId);
                    live.put("episode_id", open.getEpisodeId());
                    live.put("stream_id", streamId);
                    w.writeMetadata("flywheel.live", live);
                    ended = true;
                }
                default -> throw new IOException("a journal record with no request in it");
            }
        }

        private void open(OpenEpisode o) throws IOException {
            open = o;
            for (ChannelInfo c : o.getChannelsList()) {
                int schema = c.getSchemaName().isEmpty() ? 0 : w.registerSchema(c.getSchemaName(),
                        c.getSchemaEncoding(), c.getSchemaData().toByteArray());
                channelIds.put(c.getId(), w.registerChannel(c.getTopic(), c.getMessageEncoding(), schema,
                        new TreeMap<>(c.getMetadataMap())));
                topics.put(c.getId(), c.getTopic());
            }
        }
    }
}
