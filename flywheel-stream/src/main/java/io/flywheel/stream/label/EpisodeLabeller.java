package io.flywheel.stream.label;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.rules.Outcome;

/**
 * Labels one episode from its evidence by the rules, in their precedence: e-stop &gt; intervention (needs_review)
 * &gt; empty grasp (failure) &gt; success signal &gt; otherwise. Pure: the same evidence and rules give the same label
 * whatever order the events arrived in.
 */
public final class EpisodeLabeller {
    private EpisodeLabeller() {}

    /**
     * @param rules the rules
     * @param e the episode's evidence; alerts are counted when they lie in [start, end] (or anywhere in the episode
     *     when its start or end was not seen)
     * @return the label
     */
    public static Label label(LabelRules rules, EpisodeEvidence e) {
        String rule;
        Outcome outcome;
        if (eStop(rules, e)) {
            rule = Label.E_STOP;
            outcome = Outcome.FAILURE;
        } else if (e.interventions() >= rules.minInterventions()) {
            rule = Label.INTERVENTION;
            outcome = Outcome.NEEDS_REVIEW;
        } else if (longestEmptyGraspNs(rules, e) > rules.minEmptyGrasp().toNanos()) {
            rule = Label.EMPTY_GRASP;
            outcome = Outcome.FAILURE;
        } else if (!e.successSignalsNs().isEmpty()) {
            rule = Label.SUCCESS_SIGNAL;
            outcome = Outcome.SUCCESS;
        } else {
            rule = Label.NO_SUCCESS_SIGNAL;
            outcome = rules.otherwise();
        }
        return new Label(e.robotId(), e.episodeId(), outcome, rule, rules.version());
    }

    private static boolean eStop(LabelRules rules, EpisodeEvidence e) {
        long lo = e.hasStart() ? e.startNs() : Long.MIN_VALUE;
        long hi = e.hasEnd() ? e.endNs() : Long.MAX_VALUE;
        for (EpisodeEvidence.AlertMark a : e.alerts()) {
            if (rules.eStopKinds().contains(a.kind()) && a.timeNs() >= lo && a.timeNs() <= hi) {
                return true;
            }
        }
        return false;
    }

    /**
     * The longest run of consecutive samples with the gripper closed (opening below the threshold) and empty (force
     * below the threshold), in ns: (last sample's time - first sample's time) + one sample period. Samples more than
     * 1.5 periods apart break a run (a missing summary is not evidence of a closed gripper).
     *
     * @return the duration in ns, 0 when no sample is closed and empty
     */
    public static long longestEmptyGraspNs(LabelRules rules, EpisodeEvidence e) {
        List<EpisodeEvidence.GripSample> s = new ArrayList<>(e.samples());
        s.sort(Comparator.comparingLong(EpisodeEvidence.GripSample::timeNs));
        long period = e.samplePeriodNs();
        long best = 0;
        long runStart = Long.MIN_VALUE;
        long prev = Long.MIN_VALUE;
        for (EpisodeEvidence.GripSample g : s) {
            boolean empty = g.opening() < rules.openingBelow() && g.forceN() < rules.forceBelowN();
            if (!empty) {
                runStart = Long.MIN_VALUE;
            } else {
                if (runStart == Long.MIN_VALUE || g.timeNs() - prev > period + period / 2) {
                    runStart = g.timeNs();
                }
                best = Math.max(best, g.timeNs() - runStart + period);
            }
            prev = g.timeNs();
        }
        return best;
    }
}
