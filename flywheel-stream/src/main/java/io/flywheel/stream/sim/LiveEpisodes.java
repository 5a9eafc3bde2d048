package io.flywheel.stream.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import com.google.protobuf.Message;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.stream.label.Label;
import io.flywheel.stream.rules.Outcome;

/**
 * Simulated live episodes with ground truth: what a fleet in live mode publishes (episode events, per-second
 * observation summaries at 10 Hz gripper samples, alerts) and what really happened in each episode. Deterministic for
 * a seed. Each episode is one of: a success (grasp with 4-6 N of object force, success signal in the last second), a
 * missed grasp (gripper closed to 2% with under 0.3 N for 1-2 s, no success signal), an e-stop (alert mid-episode,
 * otherwise a success), an operator intervention (one take-over, then a success).
 */
public final class LiveEpisodes {
    private LiveEpisodes() {}

    /** What happened in an episode. */
    public enum Truth {
        SUCCESS(Outcome.SUCCESS, Label.SUCCESS_SIGNAL), MISSED_GRASP(Outcome.FAILURE, Label.EMPTY_GRASP),
        E_STOP(Outcome.FAILURE, Label.E_STOP), INTERVENTION(Outcome.NEEDS_REVIEW, Label.INTERVENTION);

        /** The label the default rules must give. */
        public final Outcome outcome;
        /** The rule that must decide it. */
        public final String rule;

        Truth(Outcome outcome, String rule) {
            this.outcome = outcome;
            this.rule = rule;
        }
    }

    /**
     * One simulated episode: its ids, truth, and its messages in the order a robot sends them.
     *
     * @param robotId robot
     * @param episodeId episode
     * @param truth what happened
     * @param messages {@link EpisodeEvent}, {@link ObservationSummary} and {@link Alert} messages, in send order
     */
    public record Episode(String robotId, String episodeId, Truth truth, List<Message> messages) {}

    /**
     * @param count episodes
     * @param robots robots they are spread over (round robin)
     * @param startNs the first episode's start, ns since the Unix epoch; episode i starts at startNs + i * 2 s
     * @param seconds each episode's length in seconds, &ge; 4
     * @param seed the random seed (which episode gets which truth, force values, grasp-miss lengths)
     * @return the episodes, truth drawn 55% success, 20% missed grasp, 15% intervention, 10% e-stop
     */
    public static List<Episode> generate(int count, int robots, long startNs, int seconds, long seed) {
        if (seconds < 4) {
            throw new IllegalArgumentException("episodes must be >= 4 s, got " + seconds);
        }
        Random rnd = new Random(seed);
        List<Episode> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            double u = rnd.nextDouble();
            Truth t = u < 0.55 ? Truth.SUCCESS : u < 0.75 ? Truth.MISSED_GRASP : u < 0.90 ? Truth.INTERVENTION : Truth.E_STOP;
            String robot = String.format("robot-%02d", i % robots);
            String ep = String.format("live-%s-%05d", Long.toString(seed, 36), i);
            long t0 = startNs + i * 2_000_000_000L;
            out.add(new Episode(robot, ep, t, messages(robot, ep, t, t0, seconds, rnd)));
        }
        return out;
    }

    private static List<Message> messages(String robot, String ep, Truth truth, long t0, int seconds, Random rnd) {
        List<Message> m = new ArrayList<>();
        m.add(EpisodeEvent.newBuilder().setRobotId(robot).setEpisodeId(ep).setKind(EpisodeEvent.Kind.STARTED)
                .setTimeNs(t0).setTask("pick_cube").build());
        int graspFrom = 10 + rnd.nextInt(5);               // sample index where the gripper closes
        int missLength = 10 + rnd.nextInt(11);             // 1.0-2.0 s closed on nothing
        double holdForce = 4 + 2 * rnd.nextDouble();
        int stopSecond = 1 + rnd.nextInt(seconds - 2);
        int interventionSecond = 1 + rnd.nextInt(seconds - 2);
        for (int s = 0; s < seconds; s++) {
            ObservationSummary.Builder b = ObservationSummary.newBuilder().setRobotId(robot).setEpisodeId(ep)
                    .setTimeNs(t0 + s * 1_000_000_000L).setSamplePeriodNs(100_000_000L);
            for (int k = 0; k < 10; k++) {
                int n = s * 10 + k;
                float opening;
                float force;
                if (n < graspFrom) {
                    opening = 0.9f;
                    force = 0f;
                } else if (truth == Truth.MISSED_GRASP) {
                    boolean closed = n < graspFrom + missLength;
                    opening = closed ? 0.02f : 0.9f;
                    force = closed ? 0.1f + 0.1f * rnd.nextFloat() : 0f;
                } else {
                    opening = 0.03f;                        // closed on the object: full close, real force
                    force = (float) (holdForce + 0.2 * rnd.nextGaussian());
                }
                b.addGripperOpening(opening).addGripperForceN(force);
            }
            b.setSuccessSignal(truth != Truth.MISSED_GRASP && s == seconds - 1);
            b.setInterventions(truth == Truth.INTERVENTION && s == interventionSecond ? 1 : 0);
            m.add(b.build());
            if (truth == Truth.E_STOP && s == stopSecond) {
                m.add(Alert.newBuilder().setRobotId(robot).setEpisodeId(ep).setKind(Alert.Kind.E_STOP)
                        .setTimeNs(t0 + s * 1_000_000_000L + 500_000_000L).setMessage("e-stop pressed").build());
            }
        }
        m.add(EpisodeEvent.newBuilder().setRobotId(robot).setEpisodeId(ep).setKind(EpisodeEvent.Kind.ENDED)
                .setTimeNs(t0 + seconds * 1_000_000_000L).setTask("pick_cube").build());
        return m;
    }
}
