package io.flywheel.stream.bench;

import static io.flywheel.stream.testkit.StreamFixture.publish;
import static io.flywheel.stream.testkit.StreamFixture.shift;
import static io.flywheel.stream.testkit.StreamFixture.timeNs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import com.google.protobuf.Message;

import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.lake.Lake;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.flink.LabellingJob;
import io.flywheel.stream.flink.LabellingJobOptions;
import io.flywheel.stream.job.LabellerOptions;
import io.flywheel.stream.job.StreamLabeller;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.testkit.StreamFixture;
import io.flywheel.stream.topics.EmbeddedKafka;
import io.flywheel.stream.topics.FleetEventPublisher;

/**
 * Realtime labelling, the Flink job against the plain consumer engine, each on its own in-JVM broker and lake.
 *
 * <p>Throughput: a backlog of simulated episodes (old event times) is published first; events/s = the backlog's
 * records / (time from the engine's start to the label of the last episode that closes by event time; the last few
 * close only by idleness and are left out, with their records). Latency: episodes whose event times are the wall
 * clock, RATE events/s for SECONDS, each message sent at its time; per episode, from the producer's send of its end
 * event to its label being readable by a lake read (polled every 100 ms); p50 and p99. The floor: the allowed lateness
 * plus the out-of-orderness bound (the watermark must pass end + lateness), plus up to one checkpoint / commit
 * interval. Prints one JSON line per engine.
 *
 * <p>usage: StreamBench DIR ENGINES(flink,consumer) RATE SECONDS BACKLOG_EPISODES LATENESS_S CHECKPOINT_MS
 */
public final class StreamBench {
    private StreamBench() {}

    public static void main(String[] a) throws Exception {
        Path dir = Path.of(a[0]);
        List<String> engines = Arrays.asList(a[1].split(","));
        int rate = Integer.parseInt(a[2]);
        int seconds = Integer.parseInt(a[3]);
        int backlog = Integer.parseInt(a[4]);
        int latenessS = Integer.parseInt(a[5]);
        long checkpointMs = Long.parseLong(a[6]);
        LabelRules rules = StreamFixture.rules(latenessS, null);
        for (String engine : engines) {
            System.out.println(run(dir.resolve(engine), engine, rules, rate, seconds, backlog, checkpointMs));
        }
        System.exit(0);
    }

    /** A running engine. */
    private interface Running {
        void stop() throws Exception;
    }

    private static Running start(String engine, Lake lake, String bootstrap, String group, LabelRules rules,
            long checkpointMs) throws Exception {
        if (engine.equals("flink")) {
            LabellingJobOptions o = LabellingJobOptions.builder(lake.location(), bootstrap).group(group).rules(rules)
                    .checkpointInterval(Duration.ofMillis(checkpointMs)).parallelism(2)
                    .checkpointDir(Path.of(lake.location()).resolveSibling("checkpoints").toUri().toString()).build();
            JobClient job = LabellingJob.start(StreamExecutionEnvironment.createLocalEnvironment(2), o);
            while (job.getJobStatus().get() != org.apache.flink.api.common.JobStatus.RUNNING) {
                Thread.sleep(20);
            }
            return () -> job.cancel().get();
        }
        StreamLabeller l = new StreamLabeller(lake, LabellerOptions.builder(bootstrap).group(group).rules(rules)
                .commitInterval(Duration.ofMillis(checkpointMs)).build(), x -> { });
        Thread t = new Thread(l::run, "labeller");
        t.start();
        return () -> {
            l.stop();
            t.join(30_000);
            l.close();
        };
    }

    /** Polls the lake; records when each episode's label first became readable (System.nanoTime). */
    private static Thread poller(Lake lake, Map<String, Long> seenAt, long[] stopFlag) {
        Thread t = new Thread(() -> {
            while (stopFlag[0] == 0) {
                for (LabelHistoryRow r : LakeLabelSink.history(lake)) {
                    seenAt.putIfAbsent(r.episodeId(), System.nanoTime());
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "lake-poller");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static String run(Path dir, String engine, LabelRules rules, int rate, int seconds, int backlog,
            long checkpointMs) throws Exception {
        Files.createDirectories(dir);
        try (EmbeddedKafka kafka = EmbeddedKafka.start(null, 2);
             Lake lake = Lake.init(dir.resolve("lake"));
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            // throughput: a backlog with old event times
            long old = System.currentTimeMillis() * 1_000_000L - (backlog * 2L + 600) * 1_000_000_000L;
            List<LiveEpisodes.Episode> back = LiveEpisodes.generate(backlog, 16, old, 5, 11);
            int tail = 10;
            long backRecords = 0;
            long countedRecords = 0;
            for (int i = 0; i < back.size(); i++) {
                for (Message m : back.get(i).messages()) {
                    publish(pub, m);
                }
                backRecords += back.get(i).messages().size();
                if (i < back.size() - tail) {
                    countedRecords += back.get(i).messages().size();
                }
            }
            pub.flush();
            Map<String, Long> seenAt = new ConcurrentHashMap<>();
            long[] stop = {0};
            long t0 = System.nanoTime();
            Running r = start(engine, lake, kafka.bootstrap(), "bench-" + engine, rules, checkpointMs);
            long running = System.nanoTime();
            Thread poll = poller(lake, seenAt, stop);
            String lastCounted = back.get(back.size() - tail - 1).episodeId();
            while (!seenAt.containsKey(lastCounted)) {
                if (System.nanoTime() - t0 > 300_000_000_000L) {
                    throw new IllegalStateException("backlog not labelled in 300 s");
                }
                Thread.sleep(20);
            }
            double backSeconds = (seenAt.get(lastCounted) - running) / 1e9;

            // latency: event time = wall clock, RATE events/s
            int perEpisode = 7; // start, 5 summaries, end (+ an alert for e-stops)
            int count = Math.max(1, rate * seconds / perEpisode);
            List<LiveEpisodes.Episode> live = LiveEpisodes.generate(count, 16, 0L + 1_000_000_000L, 5, 12);
            long startWall = System.currentTimeMillis() * 1_000_000L + 500_000_000L;
            long spacing = 1_000_000_000L * perEpisode / rate;
            List<Map.Entry<Long, Message>> stream = new ArrayList<>();
            Map<String, String> endOf = new HashMap<>();
            for (int i = 0; i < live.size(); i++) {
                LiveEpisodes.Episode e = live.get(i);
                long d = startWall + i * spacing - timeNs(e.messages().get(0));
                for (Message m : e.messages()) {
                    Message s = shift(m, d);
                    stream.add(Map.entry(timeNs(s), s));
                }
            }
            stream.sort(Map.Entry.comparingByKey());
            Map<String, Long> endSent = new HashMap<>();
            long wallToNano = System.nanoTime() - System.currentTimeMillis() * 1_000_000L;
            for (Map.Entry<Long, Message> e : stream) {
                long due = e.getKey() + wallToNano;
                long wait = due - System.nanoTime();
                if (wait > 1_000_000L) {
                    Thread.sleep(wait / 1_000_000L);
                }
                publish(pub, e.getValue());
                if (e.getValue() instanceof EpisodeEvent ev && ev.getKind() == EpisodeEvent.Kind.ENDED) {
                    endSent.put(ev.getEpisodeId(), System.nanoTime());
                }
            }
            pub.flush();
            long until = System.nanoTime() + (rules.allowedLateness().toSeconds() + 30) * 1_000_000_000L;
            while (!live.stream().allMatch(e -> seenAt.containsKey(e.episodeId())) && System.nanoTime() < until) {
                Thread.sleep(100);
            }
            stop[0] = 1;
            poll.join(5000);
            r.stop();
            List<Double> lat = new ArrayList<>();
            for (LiveEpisodes.Episode e : live) {
                Long seen = seenAt.get(e.episodeId());
                if (seen != null && endSent.containsKey(e.episodeId())) {
                    lat.add((seen - endSent.get(e.episodeId())) / 1e9);
                }
            }
            lat.sort(Double::compare);
            AtomicLong dup = new AtomicLong();
            Map<String, Integer> rows = new HashMap<>();
            LakeLabelSink.history(lake).forEach(x -> rows.merge(x.episodeId(), 1, Integer::sum));
            rows.values().forEach(v -> { if (v > 1) dup.incrementAndGet(); });
            double floor = rules.allowedLateness().toNanos() / 1e9 + 2.0;
            return String.format(Locale.ROOT, "{\"engine\":\"%s\",\"backlog_records\":%d,\"counted_records\":%d,"
                    + "\"backlog_s\":%.3f,\"events_per_s\":%.0f,\"rate\":%d,\"live_episodes\":%d,\"labelled\":%d,"
                    + "\"latency_p50_s\":%.3f,\"latency_p99_s\":%.3f,\"latency_max_s\":%.3f,\"floor_s\":%.1f,"
                    + "\"checkpoint_s\":%.3f,\"episodes_with_two_rows\":%d}",
                    engine, backRecords, countedRecords, backSeconds, countedRecords / backSeconds, rate, live.size(),
                    lat.size(), pct(lat, 0.50), pct(lat, 0.99), lat.isEmpty() ? Double.NaN : lat.get(lat.size() - 1),
                    floor, checkpointMs / 1e3, dup.get());
        }
    }

    private static double pct(List<Double> sorted, double q) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
    }
}
