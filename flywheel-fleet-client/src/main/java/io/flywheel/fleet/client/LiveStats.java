package io.flywheel.fleet.client;

/**
 * What a live episode has sent so far ({@link LiveEpisode#stats()}). Message bytes are the messages' own
 * ({@code Observation.data}); wire bytes count every request as serialized (OPENs, skip markers, END, resends).
 *
 * @param messagesOffered messages given to {@link LiveEpisode#send} and {@link LiveEpisode#sendImage}
 * @param bytesOffered their bytes
 * @param messagesSent of those, messages sent (not skipped)
 * @param bytesSent their bytes
 * @param framesOffered of the messages offered, camera frames ({@link LiveEpisode#sendImage})
 * @param framesSkipped of those, frames the filter skipped (sent as SkippedFrame markers)
 * @param bytesSkipped their bytes (not sent)
 * @param bytesResent message bytes sent again after a cut
 * @param wireBytes serialized bytes of every request written to the gateway, resends included
 * @param reconnects streams opened again after a cut
 * @param acknowledgedSeq the highest seq the gateway has journaled
 * @param resumedFromSeq the first seq this client numbered: 1, or where a gateway journal of the episode left by
 *     another process of the robot ended, plus 1
 */
public record LiveStats(long messagesOffered, long bytesOffered, long messagesSent, long bytesSent, long framesOffered,
        long framesSkipped, long bytesSkipped, long bytesResent, long wireBytes, int reconnects, long acknowledgedSeq,
        long resumedFromSeq) {
    /** @return the share of offered message bytes not sent, 0..1 (0 when nothing was offered) */
    public double uplinkSaved() {
        return bytesOffered == 0 ? 0 : 1 - (double) bytesSent / bytesOffered;
    }
}
