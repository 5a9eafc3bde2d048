package io.flywheel.curate.trainset;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

import io.flywheel.lake.Lake;

/**
 * What changed between two training sets: episodes added and removed, composition by scene,
 * object, task and robot, and the hard-case share (hard-case episodes / episodes in the set;
 * failure episodes, which sets never contain, are not counted).
 *
 * @param from the older set's tag
 * @param to the newer set's tag
 * @param added episode ids in {@code to} only, sorted
 * @param removed episode ids in {@code from} only, sorted
 * @param kept number of episodes in both
 * @param composition per dimension ({@code scene}, {@code object}, {@code task}, {@code robot}):
 *     value to episode counts in {@code from} and in {@code to}
 * @param fromCount episodes in {@code from}
 * @param toCount episodes in {@code to}
 * @param hardFrom hard-case episodes in {@code from}
 * @param hardTo hard-case episodes in {@code to}
 * @param hardCaseRule what counted as a hard case, in words
 */
public record TrainsetDiff(String from, String to, List<String> added, List<String> removed, int kept,
                           Map<String, Map<String, long[]>> composition, int fromCount, int toCount, int hardFrom,
                           int hardTo, String hardCaseRule) {
    /** The composition dimensions, in display order. */
    public static final List<String> DIMENSIONS = List.of("scene", "object", "task", "robot");

    /** @return hard-case share of {@code from}, 0 for an empty set */
    public double hardShareFrom() {
        return fromCount == 0 ? 0 : (double) hardFrom / fromCount;
    }

    /** @return hard-case share of {@code to}, 0 for an empty set */
    public double hardShareTo() {
        return toCount == 0 ? 0 : (double) hardTo / toCount;
    }

    /**
     * @param lake the lake
     * @param from older set's tag
     * @param to newer set's tag
     * @param hardCase which episodes are hard cases
     * @param hardCaseRule the rule in words, for reports
     * @throws io.flywheel.error.NotFoundException when a tag does not exist (naming the tags there are)
     */
    public static TrainsetDiff of(Lake lake, String from, String to, Predicate<EpisodeInfo> hardCase,
                                  String hardCaseRule) {
        List<TrainsetEpisode> a = Trainsets.episodes(lake, Trainsets.open(lake, from));
        List<TrainsetEpisode> b = Trainsets.episodes(lake, Trainsets.open(lake, to));
        Set<String> ida = ids(a);
        Set<String> idb = ids(b);
        List<String> added = new ArrayList<>(new TreeSet<>(idb));
        added.removeAll(ida);
        List<String> removed = new ArrayList<>(new TreeSet<>(ida));
        removed.removeAll(idb);
        Map<String, Map<String, long[]>> comp = new LinkedHashMap<>();
        for (String d : DIMENSIONS) {
            Map<String, long[]> m = new TreeMap<>();
            for (TrainsetEpisode e : a) {
                m.computeIfAbsent(e.info().value(d), k -> new long[2])[0]++;
            }
            for (TrainsetEpisode e : b) {
                m.computeIfAbsent(e.info().value(d), k -> new long[2])[1]++;
            }
            comp.put(d, m);
        }
        int hardA = (int) a.stream().filter(e -> hardCase.test(e.info())).count();
        int hardB = (int) b.stream().filter(e -> hardCase.test(e.info())).count();
        return new TrainsetDiff(from, to, List.copyOf(added), List.copyOf(removed), ida.size() - removed.size(), comp,
                a.size(), b.size(), hardA, hardB, hardCaseRule);
    }

    /**
     * The default hard-case rule: an episode whose object is the object of one of the set's
     * mining queries (the failures the set was mined for).
     *
     * @return the objects of the query episodes of {@code to}, looked up in the lake's episodes
     */
    public static Set<String> queryObjects(Lake lake, String to) {
        Trainset s = Trainsets.open(lake, to);
        Object q = s.lineage().get("query_episode_ids");
        Set<String> objects = new TreeSet<>();
        if (q instanceof List<?> list && !list.isEmpty()) {
            try (var t = lake.table("episodes")) {
                Map<String, EpisodeInfo> all = Trainsets.episodeInfos(lake, t);
                for (Object id : list) {
                    EpisodeInfo e = all.get(String.valueOf(id));
                    if (e != null && !e.object().isEmpty()) {
                        objects.add(e.object());
                    }
                }
            }
        }
        return objects;
    }

    private static Set<String> ids(List<TrainsetEpisode> l) {
        Set<String> s = new TreeSet<>();
        for (TrainsetEpisode e : l) {
            s.add(e.info().episodeId());
        }
        return s;
    }
}
