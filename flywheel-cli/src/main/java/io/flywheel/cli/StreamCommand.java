package io.flywheel.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.lake.Lake;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.run.StreamRun;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code flywheel stream ...}: realtime labelling from the fleet's Kafka topics into the lake. */
@Command(name = "stream", mixinStandardHelpOptions = true, description = "Realtime labelling: the fleet's Kafka"
        + " topics labelled into the lake, exactly once.", subcommands = {StreamCommand.Run.class, StreamCommand.Report.class})
final class StreamCommand implements Runnable {
    /** @return where an in-process Kafka broker's start-up output goes: flywheel-kafka-PID.log in $TMPDIR or /tmp */
    static Path defaultBrokerLog() {
        String tmp = System.getenv("TMPDIR");
        return Path.of(tmp == null || tmp.isBlank() ? "/tmp" : tmp, "flywheel-kafka-" + ProcessHandle.current().pid() + ".log");
    }

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec);
    }

    /** {@code flywheel stream run LAKE [--bootstrap HOST:PORT] [--engine flink|consumer]}. */
    @Command(name = "run", mixinStandardHelpOptions = true, description = "Publishes simulated live episodes (with"
            + " ground truth) to the fleet topics, labels them into the lake's label_history, and reports label"
            + " precision and recall per class. Embedded default: a Kafka broker (KRaft) in this process, the Flink"
            + " labelling job on a Flink MiniCluster in this process.")
    static final class Run implements Callable<Integer> {
        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Mixin
        LakeLocation at;

        @Option(names = "--bootstrap", paramLabel = "HOST:PORT", description = "a Kafka cluster with the fleet topics"
                + " (fleet.episodes, fleet.observations, fleet.alerts, fleet.dead-letters); default: an in-process"
                + " broker")
        String bootstrap;

        @Option(names = "--engine", paramLabel = "ENGINE", description = "flink (the Flink job on an in-process"
                + " MiniCluster) or consumer (a plain Kafka consumer); default: ${DEFAULT-VALUE}")
        String engine = "flink";

        @Option(names = "--rules", paramLabel = "FILE", description = "labelling rules (YAML); default: the built-in"
                + " rules")
        Path rules;

        @Option(names = "--episodes", paramLabel = "N", description = "simulated episodes (default: ${DEFAULT-VALUE})")
        int episodes = 100;

        @Option(names = "--seed", paramLabel = "N", description = "simulation seed (default: ${DEFAULT-VALUE})")
        long seed = 19;

        @Option(names = "--timeout", paramLabel = "SECONDS", description = "longest wait for the labels after"
                + " publishing (default: ${DEFAULT-VALUE})")
        int timeoutSeconds = 120;

        @Option(names = "--broker-log", paramLabel = "FILE", description = "where the in-process broker's start-up"
                + " output goes (appended); default: flywheel-kafka-PID.log in $TMPDIR (or /tmp)")
        Path brokerLog;

        @Mixin
        JsonOutput json;

        /** @return the broker log: --broker-log, else flywheel-kafka-PID.log in $TMPDIR or /tmp (kept after the run) */
        Path brokerLog() {
            return brokerLog != null ? brokerLog : defaultBrokerLog();
        }

        @Override
        public Integer call() throws Exception {
            Usage.require(spec, episodes >= 1, "--episodes must be >= 1, got " + episodes);
            Usage.require(spec, timeoutSeconds >= 1, "--timeout must be >= 1, got " + timeoutSeconds);
            Usage.require(spec, bootstrap == null || bootstrap.matches("[^\\s:,]+:\\d{1,5}(,[^\\s:,]+:\\d{1,5})*"),
                    "--bootstrap must be HOST:PORT[,HOST:PORT...], got '" + bootstrap + "'");
            Usage.require(spec, engine.equals("flink") || engine.equals("consumer"),
                    "--engine must be flink or consumer, got '" + engine + "'");
            StreamRun.Engine eng = engine.equals("flink") ? StreamRun.Engine.FLINK : StreamRun.Engine.CONSUMER;
            LabelRules r = rules == null ? LabelRules.defaults() : LabelRules.load(rules);
            StreamRun.Report rep;
            try (Lake lake = at.open()) {
                rep = StreamRun.run(lake, bootstrap, r, episodes, seed, Duration.ofSeconds(timeoutSeconds),
                        eng, line -> System.err.println(line), brokerLog());
            }
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("episodes", rep.episodes());
                m.put("labelled", rep.labelled());
                m.put("rules_version", rep.rulesVersion());
                m.put("bootstrap", rep.bootstrap());
                m.put("embedded", rep.embedded());
                m.put("engine", rep.engine().label());
                m.put("broker_log", rep.brokerLog() == null ? null : rep.brokerLog().toString());
                List<Map<String, Object>> cls = new ArrayList<>();
                for (var s : rep.accuracy().classes()) {
                    cls.add(classJson(s.outcome().label(), s.truePositives(), s.labelled(), s.actual(), s.precision(),
                            s.recall()));
                }
                m.put("classes", cls);
                var st = rep.stats();
                m.put("records", st.records());
                m.put("commits", st.commits());
                m.put("replayed", st.replayed());
                m.put("dead_letters", Map.of("malformed", st.malformed(), "unknown_episode", st.unknownEpisode(),
                        "late", st.late()));
                m.put("seconds", Math.round(rep.seconds() * 1000) / 1000.0);
                Json.print(System.out, m);
                return 0;
            }
            List<List<String>> rows = new ArrayList<>();
            for (var s : rep.accuracy().classes()) {
                rows.add(List.of(s.outcome().label(), Integer.toString(s.actual()), Integer.toString(s.labelled()),
                        Integer.toString(s.truePositives()), pct(s.precision()), pct(s.recall())));
            }
            TextTable.print(System.out, List.of("label", "truth", "labelled", "correct", "precision", "recall"), rows);
            var st = rep.stats();
            System.out.printf(Locale.ROOT, "labelled %d/%d episodes (rules %s) from %d records in %d lake commits;"
                    + " dead letters: %d malformed, %d unknown episode, %d late; %s engine, %s broker %s; %.1f s%n",
                    rep.labelled(), rep.episodes(), rep.rulesVersion(), st.records(), st.commits(), st.malformed(),
                    st.unknownEpisode(), st.late(), rep.engine().label(), rep.embedded() ? "in-process" : "external", rep.bootstrap(),
                    rep.seconds());
            if (rep.brokerLog() != null) {
                System.out.println("broker log: " + rep.brokerLog());
            }
            return 0;
        }

        static String pct(double d) {
            return Double.isNaN(d) ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * d);
        }
    }

    /** {@code flywheel stream report LAKE --truth FILE}. */
    @Command(name = "report", mixinStandardHelpOptions = true, description = "Scores the lake's stream labels (each"
            + " stream episode's current label in label_history) against a ground truth: precision and recall per"
            + " class and the confusion counts.")
    static final class Report implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Option(names = "--truth", paramLabel = "FILE", required = true, description = "ground truth JSON: {\"episodes\":"
                + " [{robot_id, episode_id, stream_outcome | outcome}]} (the simulator's ground_truth.json is one)")
        Path truth;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() throws Exception {
            Map<String, io.flywheel.stream.rules.Outcome> t = io.flywheel.stream.accuracy.LabelTruth.read(truth);
            io.flywheel.stream.accuracy.LabelReport rep;
            try (Lake lake = at.open()) {
                rep = io.flywheel.stream.accuracy.LabelReport.of(lake, t);
            }
            var a = rep.accuracy();
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("labels", rep.labels());
                m.put("truth", t.size());
                m.put("compared", a.compared());
                m.put("unlabelled", a.unlabelled());
                m.put("without_truth", a.withoutTruth());
                m.put("invalid_labels", rep.invalidLabels());
                m.put("rules_versions", rep.rulesVersions());
                m.put("accuracy", Double.isNaN(a.accuracy()) ? null : a.accuracy());
                List<Map<String, Object>> cls = new ArrayList<>();
                for (var s : a.classes()) {
                    cls.add(classJson(s.outcome().label(), s.truePositives(), s.labelled(), s.actual(), s.precision(),
                            s.recall()));
                }
                m.put("classes", cls);
                Map<String, Object> conf = new LinkedHashMap<>();
                a.confusionMap().forEach((truthClass, row) -> {
                    Map<String, Object> r = new LinkedHashMap<>();
                    row.forEach((label, n) -> r.put(label.label(), n));
                    conf.put(truthClass.label(), r);
                });
                m.put("confusion", conf);
                Json.print(System.out, m);
                return 0;
            }
            List<List<String>> rows = new ArrayList<>();
            for (var s : a.classes()) {
                rows.add(List.of(s.outcome().label(), Integer.toString(s.actual()), Integer.toString(s.labelled()),
                        Integer.toString(s.truePositives()), Run.pct(s.precision()), Run.pct(s.recall())));
            }
            TextTable.print(System.out, List.of("label", "truth", "labelled", "correct", "precision", "recall"), rows);
            List<String> head = new ArrayList<>(List.of("truth \\ label"));
            io.flywheel.stream.rules.Outcome[] classes = io.flywheel.stream.rules.Outcome.values();
            for (var o : classes) {
                head.add(o.label());
            }
            List<List<String>> conf = new ArrayList<>();
            for (var tr : classes) {
                List<String> r = new ArrayList<>(List.of(tr.label()));
                for (var l : classes) {
                    r.add(Integer.toString(a.count(tr, l)));
                }
                conf.add(r);
            }
            TextTable.print(System.out, head, conf);
            System.out.printf(Locale.ROOT, "%d of %d truth episodes compared (accuracy %s), %d without a label, %d labels"
                    + " without a truth; rules %s%n", a.compared(), t.size(), Run.pct(a.accuracy()), a.unlabelled(),
                    a.withoutTruth(), rep.rulesVersions().isEmpty() ? "-" : String.join(", ", rep.rulesVersions()));
            return 0;
        }
    }

    /** One class of a label score as JSON: counts, and precision / recall (null where undefined). */
    static Map<String, Object> classJson(String label, long truePositives, long labelled, long actual, double precision,
                                         double recall) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("label", label);
        c.put("true_positives", truePositives);
        c.put("labelled", labelled);
        c.put("actual", actual);
        c.put("precision", Double.isNaN(precision) ? null : precision);
        c.put("recall", Double.isNaN(recall) ? null : recall);
        return c;
    }
}
