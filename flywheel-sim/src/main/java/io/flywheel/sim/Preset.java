package io.flywheel.sim;

/**
 * Fleet sizes. Each preset fixes the defaults of {@link SimOptions}; any of them can be
 * overridden through the builder.
 */
public enum Preset {
    /** Tests: 6 episodes of 2 s on 2 robots at 160x120, one glass-cup failure, one duplicate pair. */
    TINY(6, 2, 2.0, 160, 120, 1, 1, 0.0),
    /**
     * The motivating case: 20 robots, 539 episodes, 4% (22) transparent/reflective scenes, exactly 5
     * field failures, all on glass cups; 20 s episodes at 320x240 by default (use 3 s at 160x120 in tests).
     */
    MOTIVATING(539, 20, 20.0, 320, 240, 22, 5, 0.0),
    /** Benchmarks: 2,000 full-length (45 s) episodes on 50 robots at 320x240. */
    BENCH(2000, 50, 45.0, 320, 240, 80, 18, 0.004);

    final int episodes;
    final int robots;
    final double episodeSeconds;
    final int width;
    final int height;
    final int hardObjects;
    final int glassFailures;
    final double opaqueFailureRate;

    Preset(int episodes, int robots, double episodeSeconds, int width, int height, int hardObjects,
           int glassFailures, double opaqueFailureRate) {
        this.episodes = episodes;
        this.robots = robots;
        this.episodeSeconds = episodeSeconds;
        this.width = width;
        this.height = height;
        this.hardObjects = hardObjects;
        this.glassFailures = glassFailures;
        this.opaqueFailureRate = opaqueFailureRate;
    }

    /** @return the preset named {@code name} (case-insensitive), e.g. "tiny" */
    public static Preset parse(String name) {
        for (Preset p : values()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown preset '" + name + "'; expected tiny, motivating or bench");
    }

    /** @return default episode count */
    public int episodes() {
        return episodes;
    }

    /** @return default robot count */
    public int robots() {
        return robots;
    }
}
