package io.flywheel.fleet.live;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import io.flywheel.fleet.v1.ChannelInfo;
import io.flywheel.fleet.v1.Observation;
import io.flywheel.fleet.v1.ObservationRequest;
import io.flywheel.fleet.v1.OpenEpisode;
import io.flywheel.fleet.v1.SkippedFrame;
import io.flywheel.ingest.FrameSkips;
import io.grpc.Status;

/**
 * Where one live episode stands, as its journal holds it: the OPEN, the last seq, per channel the last log time (sent
 * or skipped) and the last log time sent, the counts. The same checks apply to a message arriving on a stream
 * ({@link #check}) and are the state a replayed journal rebuilds ({@link #apply}), so the rules of
 * {@code StreamObservations} (gateway.proto) live here once. Not thread-safe: one stream holds it at a time.
 */
final class LiveEpisodeState {
    /** Most channels an OPEN may declare. */
    static final int MAX_CHANNELS = 1000;
    /** Longest episode id, characters. */
    static final int MAX_EPISODE_ID = 256;

    final OpenEpisode open;
    final String streamId;
    private final Map<Integer, ChannelInfo> channels = new HashMap<>();
    private final Map<Integer, Long> lastLogTime = new HashMap<>();
    private final Map<Integer, Long> lastSentLogTime = new HashMap<>();
    long lastSeq;
    long messages;
    long skippedFrames;
    long journalBytes;
    /** Whether the journal ends with the END (the episode is over; only landing is left). */
    boolean ended;

    /**
     * @param open a well-formed OPEN ({@link #checkOpen})
     * @param streamId its stream id
     */
    LiveEpisodeState(OpenEpisode open, String streamId) {
        this.open = open;
        this.streamId = streamId;
        for (ChannelInfo c : open.getChannelsList()) {
            channels.put(c.getId(), c);
        }
    }

    /**
     * @return null when {@code o} is a well-formed OPEN (robot id aside: the caller checks it against the token), else
     *     what is wrong with it
     */
    static String checkOpen(OpenEpisode o) {
        if (o.getEpisodeId().isEmpty() || o.getEpisodeId().length() > MAX_EPISODE_ID) {
            return "episode_id must be 1-" + MAX_EPISODE_ID + " characters (the robot's name of the episode), got "
                    + o.getEpisodeId().length();
        }
        if (o.getChannelsCount() == 0 || o.getChannelsCount() > MAX_CHANNELS) {
            return "an OPEN declares 1-" + MAX_CHANNELS + " channels, got " + o.getChannelsCount();
        }
        Set<Integer> ids = new HashSet<>();
        Set<String> topics = new HashSet<>();
        for (ChannelInfo c : o.getChannelsList()) {
            String which = "channel " + c.getId() + " (" + (c.getTopic().isEmpty() ? "no topic" : c.getTopic()) + ")";
            if (c.getId() == 0 || c.getId() > 0xFFFF) {
                return which + ": channel ids are 1..65535";
            }
            if (!ids.add(c.getId())) {
                return which + ": id " + c.getId() + " is declared twice";
            }
            if (c.getTopic().isEmpty()) {
                return which + ": the topic is empty";
            }
            if (c.getTopic().equals(FrameSkips.TOPIC)) {
                return which + ": " + FrameSkips.TOPIC + " is the gateway's own channel of skipped frames (send"
                        + " SkippedFrame messages instead)";
            }
            if (!topics.add(c.getTopic())) {
                return which + ": topic " + c.getTopic() + " is declared twice";
            }
            if (c.getMessageEncoding().isEmpty()) {
                return which + ": message_encoding is missing (cdr, json, protobuf, ros1, ...)";
            }
            if (c.getSchemaName().isEmpty() && (!c.getSchemaEncoding().isEmpty() || !c.getSchemaData().isEmpty())) {
                return which + ": schema_encoding or schema_data without a schema_name";
            }
        }
        return null;
    }

    /** @return the channel with the robot's id {@code id}, or null */
    ChannelInfo channel(int id) {
        return channels.get(id);
    }

    /** @return the seq of a message: Observation or SkippedFrame; -1 for other requests */
    static long seqOf(ObservationRequest req) {
        return switch (req.getMessageCase()) {
            case OBSERVATION -> req.getObservation().getSeq();
            case SKIPPED_FRAME -> req.getSkippedFrame().getSeq();
            default -> -1;
        };
    }

    /**
     * Checks the next Observation or SkippedFrame against the episode's rules (the size limits aside).
     *
     * @return null when it may be journaled, else the status refusing it
     */
    Status check(ObservationRequest req) {
        long seq = seqOf(req);
        if (seq != lastSeq + 1) {
            return invalid("seq " + Long.toUnsignedString(seq) + " after " + lastSeq + "; the next expected seq is "
                    + (lastSeq + 1) + " (Observations and SkippedFrames are numbered 1, 2, 3, ... without gaps)");
        }
        int ch;
        long log;
        if (req.hasObservation()) {
            Observation o = req.getObservation();
            ch = o.getChannelId();
            log = o.getLogTimeNs();
        } else {
            SkippedFrame s = req.getSkippedFrame();
            ch = s.getChannelId();
            log = s.getLogTimeNs();
        }
        ChannelInfo c = channels.get(ch);
        String kind = req.hasObservation() ? "Observation" : "SkippedFrame";
        if (c == null) {
            return invalid(kind + " seq " + seq + " is on channel " + ch + ", which OPEN does not declare");
        }
        Long prev = lastLogTime.get(ch);
        if (prev != null && Long.compareUnsigned(log, prev) < 0) {
            return invalid(kind + " seq " + seq + " on " + c.getTopic() + ": log time " + Long.toUnsignedString(log)
                    + " ns is before the channel's previous one, " + Long.toUnsignedString(prev) + " ns (a live"
                    + " stream's log times never go backwards on a channel)");
        }
        if (req.hasSkippedFrame()) {
            SkippedFrame s = req.getSkippedFrame();
            Long sent = lastSentLogTime.get(ch);
            if (sent == null) {
                return invalid("SkippedFrame seq " + seq + " on " + c.getTopic() + " before any frame was sent on it"
                        + " (the filter always sends a camera's first frame)");
            }
            if (s.getRepeatsLogTimeNs() != sent) {
                return invalid("SkippedFrame seq " + seq + " on " + c.getTopic() + " repeats the frame logged at "
                        + Long.toUnsignedString(s.getRepeatsLogTimeNs()) + " ns; the last frame sent on it was logged"
                        + " at " + Long.toUnsignedString(sent) + " ns (the filter compares with the last frame sent)");
            }
            if (s.getThresholdBits() > 64 || s.getHammingDistance() > s.getThresholdBits()) {
                return invalid("SkippedFrame seq " + seq + " on " + c.getTopic() + ": Hamming distance "
                        + s.getHammingDistance() + " and threshold " + s.getThresholdBits() + " bits (need distance"
                        + " <= threshold <= 64)");
            }
        }
        return null;
    }

    /** Takes a journaled request into the state (a replay calls it for every record, the OPEN included). */
    void apply(ObservationRequest req, long recordBytes) {
        journalBytes += recordBytes;
        switch (req.getMessageCase()) {
            case OBSERVATION -> {
                Observation o = req.getObservation();
                lastSeq = o.getSeq();
                lastLogTime.put(o.getChannelId(), o.getLogTimeNs());
                lastSentLogTime.put(o.getChannelId(), o.getLogTimeNs());
                messages++;
            }
            case SKIPPED_FRAME -> {
                SkippedFrame s = req.getSkippedFrame();
                lastSeq = s.getSeq();
                lastLogTime.put(s.getChannelId(), s.getLogTimeNs());
                skippedFrames++;
            }
            case END -> ended = true;
            default -> { } // the OPEN
        }
    }

    private static Status invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message);
    }
}
