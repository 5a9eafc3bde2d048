package io.flywheel.align;

/**
 * A place where a stream's header stamps leave the course of its log times: they step backwards, or they leap ahead of
 * the log times by more than the rule's clock-jump threshold ({@link TimestampRule}). Found between consecutive
 * messages that both have a sane header stamp and a log time.
 *
 * @param position        index of the message after the discontinuity, in the order read
 * @param logTimeNs       that message's log time, ns
 * @param stampNs         that message's header stamp, ns
 * @param previousStampNs the header stamp of the message before it (the previous one with a sane stamp), ns
 * @param stampStepNs     {@code stampNs - previousStampNs}, ns (negative when the stamps go backwards)
 * @param logStepNs       the step of the two messages' log times, ns
 */
public record StampDiscontinuity(int position, long logTimeNs, long stampNs, long previousStampNs, long stampStepNs,
                                 long logStepNs) {
    /** @return true when the stamps go backwards here ({@code stampStepNs < 0}) */
    public boolean backward() {
        return stampStepNs < 0;
    }

    /**
     * @return how far the stamp clock jumped against the log clock, ns: {@code stampStepNs - logStepNs} (a camera whose
     *     stamps restart 2 s earlier while its frames keep arriving every 50 ms: -2 000 000 000)
     */
    public long jumpNs() {
        return stampStepNs - logStepNs;
    }

    /** @return {@code backward} or {@code forward} */
    public String direction() {
        return backward() ? "backward" : "forward";
    }
}
