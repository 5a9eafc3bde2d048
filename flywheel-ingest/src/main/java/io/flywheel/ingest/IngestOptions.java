package io.flywheel.ingest;

import io.flywheel.align.TimestampRule;

/**
 * Options of {@link Ingest}; immutable, built with {@link #builder()}. Defaults: no profile (roles
 * detected), robot id from the profile, RLDS nominal times at 5 Hz from 1_700_000_000 s with episodes
 * 100 s apart; the default {@link TimestampRule}.
 */
public final class IngestOptions {
    /** Default RLDS epoch: 1_700_000_000 s after the Unix epoch, in ns (the camera/bridge-mcap convention). */
    public static final long DEFAULT_RLDS_EPOCH_NS = 1_700_000_000_000_000_000L;
    /** Default spacing between RLDS episodes: 100 s, in ns. */
    public static final long DEFAULT_RLDS_EPISODE_SPACING_NS = 100_000_000_000L;
    /** Default RLDS step rate: 5 Hz (BridgeData's control rate). */
    public static final double DEFAULT_RLDS_RATE_HZ = 5.0;

    private static final IngestOptions DEFAULTS = builder().build();

    private final RobotProfile profile;
    private final String robotId;
    private final double rldsRateHz;
    private final long rldsEpochNs;
    private final long rldsEpisodeSpacingNs;
    private final TimestampRule timestampRule;
    private final boolean allowMissingMaster;
    private final RawFiles rawFiles;

    private IngestOptions(Builder b) {
        profile = b.profile;
        robotId = b.robotId;
        rldsRateHz = b.rldsRateHz;
        rldsEpochNs = b.rldsEpochNs;
        rldsEpisodeSpacingNs = b.rldsEpisodeSpacingNs;
        timestampRule = b.timestampRule;
        allowMissingMaster = b.allowMissingMaster;
        rawFiles = b.rawFiles;
    }

    /** @return where the raw files are read from and the URIs recorded for them; {@link RawFiles#local()} by default */
    public RawFiles rawFiles() { return rawFiles; }

    /**
     * @return true when an episode without the profile's master topic is read anyway (its frames then follow a
     *     fixed 10 Hz clock); false (default): reading it fails with an {@link IngestException} naming the episode
     */
    public boolean allowMissingMaster() { return allowMissingMaster; }

    /** @return the default options */
    public static IngestOptions defaults() { return DEFAULTS; }

    /** @return a builder starting from the defaults */
    public static Builder builder() { return new Builder(); }

    /** @return the robot profile; an empty one (roles detected) by default */
    public RobotProfile profile() { return profile; }

    /** @return robot id that overrides the profile's, "" for none */
    public String robotId() { return robotId; }

    /** @return RLDS step rate, Hz */
    public double rldsRateHz() { return rldsRateHz; }

    /** @return time of RLDS episode 0, step 0, ns since the Unix epoch */
    public long rldsEpochNs() { return rldsEpochNs; }

    /** @return time between the starts of consecutive RLDS episodes, ns */
    public long rldsEpisodeSpacingNs() { return rldsEpisodeSpacingNs; }

    /** @return the rule that chooses each message's time and reports stamp problems; default {@link TimestampRule#defaults()} */
    public TimestampRule timestampRule() { return timestampRule; }

    /** Builder for {@link IngestOptions}. */
    public static final class Builder {
        private RobotProfile profile = RobotProfile.builder().build();
        private String robotId = "";
        private double rldsRateHz = DEFAULT_RLDS_RATE_HZ;
        private long rldsEpochNs = DEFAULT_RLDS_EPOCH_NS;
        private long rldsEpisodeSpacingNs = DEFAULT_RLDS_EPISODE_SPACING_NS;
        private TimestampRule timestampRule = TimestampRule.defaults();
        private boolean allowMissingMaster;
        private RawFiles rawFiles = RawFiles.local();

        private Builder() {}

        /** @param raw see {@link IngestOptions#rawFiles()} (null: local files) */
        public Builder rawFiles(RawFiles raw) { rawFiles = raw == null ? RawFiles.local() : raw; return this; }

        /** @param allow see {@link IngestOptions#allowMissingMaster()} */
        public Builder allowMissingMaster(boolean allow) { allowMissingMaster = allow; return this; }

        /** @param p the robot profile (null: detect roles) */
        public Builder profile(RobotProfile p) { profile = p == null ? RobotProfile.builder().build() : p; return this; }

        /** @param id robot id for every recording read, overriding the profile's */
        public Builder robotId(String id) { robotId = id == null ? "" : id; return this; }

        /**
         * @param hz RLDS step rate in Hz
         * @throws IllegalArgumentException unless 0 &lt; hz &lt;= 1e9
         */
        public Builder rldsRateHz(double hz) {
            if (!(hz > 0 && hz <= 1e9)) throw new IllegalArgumentException("RLDS rate must be in (0, 1e9] Hz, got " + hz);
            rldsRateHz = hz;
            return this;
        }

        /** @param ns time of RLDS episode 0, step 0, ns since the Unix epoch */
        public Builder rldsEpochNs(long ns) { rldsEpochNs = ns; return this; }

        /**
         * @param ns time between RLDS episode starts, ns
         * @throws IllegalArgumentException when negative
         */
        public Builder rldsEpisodeSpacingNs(long ns) {
            if (ns < 0) throw new IllegalArgumentException("episode spacing must be >= 0 ns, got " + ns);
            rldsEpisodeSpacingNs = ns;
            return this;
        }

        /** @param rule the timestamp rule (null: {@link TimestampRule#defaults()}) */
        public Builder timestampRule(TimestampRule rule) {
            timestampRule = rule == null ? TimestampRule.defaults() : rule;
            return this;
        }

        public IngestOptions build() { return new IngestOptions(this); }
    }
}
