package io.flywheel.stream.accuracy;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import io.flywheel.stream.rules.Outcome;

/**
 * How well stream labels agree with the ground truth: per class precision and recall, and the confusion counts.
 * Immutable.
 *
 * <p>Only episodes with both a label and a truth are compared; the others are counted ({@link #unlabelled()},
 * {@link #withoutTruth()}). For a class c: true positives = episodes labelled c whose truth is c; precision = true
 * positives / episodes labelled c; recall = true positives / episodes whose truth is c, labelled or not (an unlabelled one is a
 * miss); both NaN on a zero denominator.
 *
 * @param classes one score per class of {@link Outcome}, in its order
 * @param confusion {@code confusion[truth][label]}: episodes of that truth given that label, indexed by
 *     {@link Outcome#ordinal()}
 * @param compared episodes with both a label and a truth
 * @param unlabelled episodes with a truth but no label
 * @param withoutTruth episodes with a label but no truth
 */
public record LabelAccuracy(List<ClassScore> classes, int[][] confusion, int compared, int unlabelled, int withoutTruth) {
    public LabelAccuracy {
        classes = List.copyOf(classes);
        int[][] c = new int[confusion.length][];
        for (int i = 0; i < c.length; i++) {
            c[i] = confusion[i].clone();
        }
        confusion = c;
    }

    /**
     * One class's score.
     *
     * @param outcome the class
     * @param truePositives episodes labelled so whose truth is so
     * @param labelled episodes labelled so
     * @param actual episodes whose truth is so, labelled or not
     */
    public record ClassScore(Outcome outcome, int truePositives, int labelled, int actual) {
        /** @return true positives / labelled; NaN when none was labelled so */
        public double precision() {
            return labelled == 0 ? Double.NaN : (double) truePositives / labelled;
        }

        /** @return true positives / actual; NaN when none is so */
        public double recall() {
            return actual == 0 ? Double.NaN : (double) truePositives / actual;
        }
    }

    /**
     * Compares labels with the truth, by episode key.
     *
     * @param labels each episode's label, by key (e.g. robot and stream episode id)
     * @param truth each episode's true outcome, by the same keys
     * @return the scores
     */
    public static LabelAccuracy of(Map<String, Outcome> labels, Map<String, Outcome> truth) {
        int n = Outcome.values().length;
        int[][] confusion = new int[n][n];
        int compared = 0;
        int unlabelled = 0;
        int[] actual = new int[n];
        for (Map.Entry<String, Outcome> t : truth.entrySet()) {
            Outcome l = labels.get(t.getKey());
            actual[t.getValue().ordinal()]++;
            if (l == null) {
                unlabelled++;
            } else {
                confusion[t.getValue().ordinal()][l.ordinal()]++;
                compared++;
            }
        }
        int withoutTruth = 0;
        for (String k : labels.keySet()) {
            if (!truth.containsKey(k)) {
                withoutTruth++;
            }
        }
        List<ClassScore> classes = new ArrayList<>();
        for (Outcome c : Outcome.values()) {
            int tp = confusion[c.ordinal()][c.ordinal()];
            int labelled = 0;
            for (int i = 0; i < n; i++) {
                labelled += confusion[i][c.ordinal()];
            }
            classes.add(new ClassScore(c, tp, labelled, actual[c.ordinal()]));
        }
        return new LabelAccuracy(classes, confusion, compared, unlabelled, withoutTruth);
    }

    /** @return the score of a class */
    public ClassScore score(Outcome o) {
        return classes.get(o.ordinal());
    }

    /** @return episodes of truth {@code truth} labelled {@code label} */
    public int count(Outcome truth, Outcome label) {
        return confusion[truth.ordinal()][label.ordinal()];
    }

    /** @return the compared episodes whose label equals their truth, over all compared; NaN when none */
    public double accuracy() {
        int right = 0;
        for (Outcome o : Outcome.values()) {
            right += confusion[o.ordinal()][o.ordinal()];
        }
        return compared == 0 ? Double.NaN : (double) right / compared;
    }

    /** @return the confusion counts as truth -&gt; label -&gt; count, every class present */
    public Map<Outcome, Map<Outcome, Integer>> confusionMap() {
        Map<Outcome, Map<Outcome, Integer>> out = new EnumMap<>(Outcome.class);
        for (Outcome t : Outcome.values()) {
            Map<Outcome, Integer> row = new EnumMap<>(Outcome.class);
            for (Outcome l : Outcome.values()) {
                row.put(l, confusion[t.ordinal()][l.ordinal()]);
            }
            out.put(t, row);
        }
        return out;
    }
}
