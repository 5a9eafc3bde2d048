package io.flywheel.sim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The fleet-level decisions, made once, sequentially and cheaply, from the fleet seed: robots and
 * their scenes, operators and device clocks; which episodes get a hard (transparent or reflective)
 * object; which of them fail; near-duplicate groups; durations and start times. Episodes are then
 * generated independently (in any order, in parallel) from their {@link EpisodeSpec}.
 *
 * @param robots the robots, in id order
 * @param episodes the episodes, in index order
 */
public record FleetPlan(List<Robot> robots, List<EpisodeSpec> episodes) {

    /**
     * Devices that stamp messages with their own clock on every robot (the teleop commands,
     * std_msgs/Float64MultiArray, carry no header stamp).
     */
    public static final List<String> DEVICES =
            List.of("head_camera", "left_wrist_camera", "right_wrist_camera", "arm_controller");

    /** Fleet epoch: 2025-06-02T08:00:00Z in ns. */
    public static final long EPOCH_NS = 1_748_851_200_000_000_000L;

    /** Nominal offset of an unsynced camera's clock: it stamps frames ~12 ms ahead of the exposure. */
    public static final long UNSYNCED_CAMERA_OFFSET_NS = 12_000_000L;

    /**
     * One robot.
     *
     * @param robotId e.g. "robot_01"
     * @param scene where it stands
     * @param operators its operators
     * @param clockOffsetsNs per device in {@link #DEVICES}: device clock minus true time, ns
     * @param unsyncedCamera the device name of its unsynced camera, or null when all are synced
     */
    public record Robot(String robotId, Catalog.Scene scene, List<String> operators,
                        Map<String, Long> clockOffsetsNs, String unsyncedCamera) {}

    /**
     * Mixes a seed with a salt and an index into a well-spread 64-bit seed (SplitMix64 finaliser). The simulator uses
     * salts 1 to 3; other drivers of the fleet pick others.
     */
    public static long mix(long seed, long salt, long index) {
        long z = seed + 0x9E3779B97F4A7C15L * (index + 1) + 0xD1B54A32D192ED03L * salt;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * @param o the options
     * @return the plan; the same options give the same plan
     */
    public static FleetPlan plan(SimOptions o) {
        SplittableRandom rng = new SplittableRandom(mix(o.seed(), 1, 0));
        List<Robot> robots = new ArrayList<>();
        for (int r = 0; r < o.robots(); r++) {
            Catalog.Scene scene = Catalog.SCENES.get(r < Catalog.SCENES.size() ? r : rng.nextInt(Catalog.SCENES.size()));
            List<String> ops = new ArrayList<>(Catalog.OPERATORS);
            Collections.shuffle(ops, new java.util.Random(rng.nextLong()));
            List<String> mine = List.copyOf(ops.subList(0, 1 + rng.nextInt(3)));
            Map<String, Long> offsets = new LinkedHashMap<>();
            String unsynced = null;
            if (r == 0 || rng.nextDouble() < 0.25) {
                unsynced = DEVICES.get(rng.nextInt(3));
            }
            for (String d : DEVICES) {
                long off;
                if (d.equals("arm_controller")) {
                    off = 0; // the master clock
                } else if (d.equals(unsynced)) {
                    off = UNSYNCED_CAMERA_OFFSET_NS + (long) ((rng.nextDouble() - 0.5) * 1_000_000L);
                } else {
                    off = (long) ((rng.nextDouble() - 0.5) * 400_000L); // PTP-synced: +-0.2 ms
                }
                offsets.put(d, off);
            }
            robots.add(new Robot(String.format("robot_%02d", r + 1), scene, mine, Collections.unmodifiableMap(offsets), unsynced));
        }

        int n = o.episodes();
        // Which episodes get a hard object, and which of those fail.
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new java.util.Random(rng.nextLong()));
        Catalog.ObjectKind[] object = new Catalog.ObjectKind[n];
        String[] cause = new String[n];
        int glassCups = Math.max(o.glassFailures(), (int) Math.ceil(o.hardObjects() * 0.6));
        for (int k = 0; k < o.hardObjects(); k++) {
            int i = order.get(k);
            object[i] = k < glassCups ? Catalog.GLASS_CUP : Catalog.OTHER_HARD.get(k % Catalog.OTHER_HARD.size());
            if (k < o.glassFailures()) {
                cause[i] = "gripper_closed_on_nothing";
            }
        }
        for (int i = 0; i < n; i++) {
            if (object[i] == null) {
                object[i] = Catalog.OPAQUE.get(rng.nextInt(Catalog.OPAQUE.size()));
                if (rng.nextDouble() < o.opaqueFailureRate()) {
                    cause[i] = "object_slipped";
                }
            }
        }

        // Per robot, sequential episodes: lighting, operator, duration, start; near-duplicates.
        EpisodeSpec[] out = new EpisodeSpec[n];
        long[] robotClock = new long[o.robots()];
        for (int r = 0; r < o.robots(); r++) {
            robotClock[r] = EPOCH_NS + (long) (rng.nextDouble() * 3600e9);
        }
        int[] prevOfRobot = new int[o.robots()];
        java.util.Arrays.fill(prevOfRobot, -1);
        int groups = 0;
        boolean forceDuplicate = o.duplicateRate() > 0;
        for (int i = 0; i < n; i++) {
            int r = i % o.robots();
            Robot robot = robots.get(r);
            int prev = prevOfRobot[r];
            boolean eligible = prev >= 0 && !object[i].hard() && cause[i] == null
                    && !out[prev].object().hard() && !out[prev].failed();
            double u = rng.nextDouble();
            boolean dup = eligible && (u < o.duplicateRate() || forceDuplicate);
            Catalog.Lighting lighting = Catalog.LIGHTINGS.get(rng.nextInt(Catalog.LIGHTINGS.size()));
            String operator = robot.operators().get(rng.nextInt(robot.operators().size()));
            long duration = (long) (o.episodeSeconds() * (0.75 + 0.5 * rng.nextDouble()) * 1e9);
            duration -= duration % 1_000_000L;
            long gap = (long) ((20 + rng.nextDouble() * 70) * 1e9);
            long start = robotClock[r];
            EpisodeSpec spec;
            String id = String.format("ep_%05d", i);
            long noiseSeed = mix(o.seed(), 3, i);
            if (dup) {
                EpisodeSpec p = out[prev];
                int group = p.duplicateGroup() >= 0 ? p.duplicateGroup() : groups++;
                if (p.duplicateGroup() < 0) {
                    out[prev] = new EpisodeSpec(p.index(), p.episodeId(), p.robotId(), p.scene(), p.lighting(),
                            p.operator(), p.object(), p.task(), p.outcome(), p.failureCause(), p.startNs(),
                            p.durationNs(), group, p.demoSeed(), p.noiseSeed(), p.clockOffsetsNs());
                }
                spec = new EpisodeSpec(i, id, robot.robotId(), robot.scene(), p.lighting(), p.operator(), p.object(),
                        p.task(), "success", null, start, p.durationNs(), group, p.demoSeed(), noiseSeed,
                        robot.clockOffsetsNs());
                forceDuplicate = false;
            } else {
                spec = new EpisodeSpec(i, id, robot.robotId(), robot.scene(), lighting, operator, object[i],
                        Catalog.task(object[i]), cause[i] == null ? "success" : "failure", cause[i], start,
                        duration, -1, mix(o.seed(), 2, i), noiseSeed, robot.clockOffsetsNs());
            }
            out[i] = spec;
            robotClock[r] = start + spec.durationNs() + gap;
            prevOfRobot[r] = i;
        }
        return new FleetPlan(List.copyOf(robots), List.of(out));
    }
}
