package io.flywheel.stream.flink;

import java.time.Duration;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.eventtime.WatermarkOutput;

/**
 * Event-time watermarks of the fleet topics, one generator per Kafka partition: the newest message time seen minus
 * the out-of-orderness bound; after {@code idleness} without a record the watermark advances with the wall clock from
 * there (by the time the partition has been quiet), so that the last episodes of a quiet fleet close, while a pause in
 * a replay of old events moves it by the pause only, not to the present. A partition that has not had a record yet is marked
 * idle after the idleness (left out of the minimum, so that it does not hold the others back, and not moved ahead
 * either: when its first records come, as a sparse topic's, they hold the watermark from their own time). Timestamps are ms since the Unix epoch (Flink's unit): a message's {@code time_ns / 10^6}; a malformed
 * record carries none.
 */
public final class FleetWatermarks implements WatermarkGenerator<FleetRecord> {
    /** A partition counts as idle only this long after its generator started, whatever the idleness. */
    static final long START_GRACE_MS = 3000;

    private final long outOfOrdernessMs;
    private final long idlenessMs;
    private long maxTs = Long.MIN_VALUE;
    private long emitted = Long.MIN_VALUE;
    private long lastRecordWall;

    FleetWatermarks(Duration outOfOrderness, Duration idleness) {
        this.outOfOrdernessMs = outOfOrderness.toMillis();
        this.idlenessMs = idleness.toMillis();
        this.lastRecordWall = System.currentTimeMillis() + Math.max(0, START_GRACE_MS - idlenessMs);
    }

    /**
     * @param outOfOrderness how far behind the newest event time the watermark stays
     * @param idleness with no record for this long, the watermark follows the wall clock
     * @return the strategy: these generators, timestamps from {@link FleetRecord#timeNs}
     */
    public static WatermarkStrategy<FleetRecord> strategy(Duration outOfOrderness, Duration idleness) {
        return WatermarkStrategy.<FleetRecord>forGenerator(ctx -> new FleetWatermarks(outOfOrderness, idleness))
                .withTimestampAssigner((r, ts) -> r.timeNs > 0 ? r.timeNs / 1_000_000L : Long.MIN_VALUE);
    }

    @Override
    public void onEvent(FleetRecord r, long timestamp, WatermarkOutput output) {
        lastRecordWall = System.currentTimeMillis();
        if (r.timeNs > 0) {
            maxTs = Math.max(maxTs, timestamp);
        }
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
        long wm = emitted;
        long now = System.currentTimeMillis();
        long quiet = now - lastRecordWall;
        if (maxTs != Long.MIN_VALUE) {
            wm = Math.max(wm, maxTs - outOfOrdernessMs + (quiet >= idlenessMs ? quiet : 0));
        } else if (quiet >= idlenessMs) {
            output.markIdle();
            return;
        }
        if (wm > emitted) {
            emitted = wm;
            output.emitWatermark(new Watermark(wm));
        }
    }
}
