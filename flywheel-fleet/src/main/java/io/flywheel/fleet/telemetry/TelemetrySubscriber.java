package io.flywheel.fleet.telemetry;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.datatypes.Mqtt5UserProperty;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;

import io.flywheel.error.FlywheelException;
import io.flywheel.error.StorageUnavailableException;
import io.flywheel.lake.AlertLinks;
import io.flywheel.lake.EpisodeSpans;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeSnapshot;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.TelemetryRow;

/**
 * The gateway's MQTT telemetry subscriber: subscribes to {@link TelemetryMessages#SUBSCRIPTIONS} (telemetry QoS 0,
 * alerts QoS 1, audit QoS 2) with a persistent session (clean start off, {@link TelemetryOptions#sessionExpiry()}),
 * parses each message ({@link TelemetryMessages}) and appends the rows to the lake's {@code telemetry} table
 * ({@link FleetTables}) in micro-batches, one lake commit each, bounded by {@link TelemetryOptions#batchInterval()}
 * and {@link TelemetryOptions#batchRows()}.
 *
 * <h2>Delivery guarantees</h2>
 * <ul>
 *   <li>Acknowledgement is manual: the PUBACK (QoS 1) or PUBREC (QoS 2) of a message is sent only after the
 *       micro-batch holding it is committed. A gateway killed before that leaves the message unacknowledged in the
 *       broker's session, which delivers it again when the gateway comes back; messages published while it was away
 *       wait in the session too.</li>
 *   <li>Inside the commit, rows are deduplicated by {@code (robot_id, message_id)} against the ids committed recently
 *       ({@link MessageIds}: loaded at start from the table's rows received within
 *       {@link TelemetryOptions#dedupWindow()} before its newest row, then every committed batch's): a message
 *       committed and then redelivered (killed after the commit, before the acknowledgement; a QoS 1 redelivery; a
 *       robot publishing the same message twice) is dropped and acknowledged. So QoS 1 and QoS 2 messages land in the
 *       table exactly once, as long as a redelivery comes within the window; QoS 0 messages at most once.</li>
 *   <li>A malformed message is refused: logged (topic, robot, reason), counted, acknowledged, never written.</li>
 *   <li>A failed commit is retried with backoff (a retry first drops the rows a commit that failed late may have
 *       written); its messages stay unacknowledged meanwhile.</li>
 * </ul>
 *
 * <h2>Alerts and episodes</h2> A row of class {@code alert} gets the {@code episode_id} of the episode its robot was
 * recording at its {@code ts_ns} ({@link EpisodeSpans}) when the episode is in the lake when the batch is written;
 * otherwise, every {@link TelemetryOptions#linkInterval()}, when the lake's {@code episodes} changed, the alerts
 * without an episode are linked by a column-scoped update ({@link AlertLinks}), whoever ingested the episode.
 */
public final class TelemetrySubscriber implements AutoCloseable {
    /** One message received and not yet acknowledged. */
    private record Pending(TelemetryRow row, Runnable ack) {}

    private final Lake lake;
    private final TelemetryOptions options;
    private final Consumer<String> log;
    private final MessageIds ids;
    private final Object lock = new Object();
    private List<Pending> buffer = new ArrayList<>();
    private long oldestNs;
    private int inCommit;
    private long inCommitOldestNs;
    private volatile boolean stopping;
    private volatile boolean connected;
    private final Thread committer;
    private Mqtt5AsyncClient client5;
    private Mqtt3AsyncClient client3;
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong committed = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong linkedAtWrite = new AtomicLong();
    private final AtomicLong linkedLater = new AtomicLong();
    private final AtomicLong commitFailures = new AtomicLong();
    private final MalformedLog malformedLog;
    private Long episodesVersionLinked;
    private long lastLinkNs;

    private TelemetrySubscriber(Lake lake, TelemetryOptions options, Consumer<String> log) {
        this.lake = lake;
        this.options = options;
        this.log = log;
        this.ids = new MessageIds(options.dedupWindow().toNanos(), options.dedupMaxIds());
        this.malformedLog = new MalformedLog(log);
        this.committer = new Thread(this::commitLoop, "flywheel-telemetry-commit");
        committer.setDaemon(true);
    }

    /**
     * Loads the recent message ids, connects to the broker (resuming the session: queued messages arrive at once),
     * subscribes, and starts committing.
     *
     * @param lake the lake (kept open by the caller until after {@link #close()})
     * @param options broker and batching
     * @param log receives one line per refused message (rate-limited), failed commit, or link run
     * @return the running subscriber
     * @throws StorageUnavailableException when the broker cannot be reached within the connect timeout or refuses
     *     the connection (naming the broker and why)
     */
    public static TelemetrySubscriber start(Lake lake, TelemetryOptions options, Consumer<String> log) {
        TelemetrySubscriber s = new TelemetrySubscriber(lake, options, log);
        lake.refresh();
        s.ids.load(lake);
        s.episodesVersionLinked = null; // a first link run at start: alerts of episodes ingested while it was down
        s.committer.start();
        try {
            s.connect();
        } catch (RuntimeException e) {
            s.stopping = true;
            s.committer.interrupt();
            s.disconnect();
            throw e;
        }
        return s;
    }

    private void connect() {
        InetSocketAddress at = TelemetryOptions.hostPort(options.broker());
        try {
            if (options.mqtt5()) {
                client5 = MqttClient.builder().useMqttVersion5().identifier(options.clientId())
                        .serverHost(at.getHostString()).serverPort(at.getPort())
                        .automaticReconnect().initialDelay(100, TimeUnit.MILLISECONDS).maxDelay(5, TimeUnit.SECONDS)
                        .applyAutomaticReconnect()
                        .addConnectedListener(c -> connected = true).addDisconnectedListener(c -> connected = false)
                        .buildAsync();
                // registered before connecting: a resumed session's messages arrive right after the CONNACK, and a
                // message no flow takes is acknowledged by the client at once
                client5.publishes(MqttGlobalPublishFilter.ALL, this::onPublish5, true);
                var c = client5.connectWith().cleanStart(false)
                        .sessionExpiryInterval(options.sessionExpiry().toSeconds()).keepAlive(30);
                if (options.username() != null) {
                    c.simpleAuth().username(options.username()).password(bytes(options.password())).applySimpleAuth();
                }
                c.send().get(options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
                List<com.hivemq.client.mqtt.mqtt5.message.subscribe.Mqtt5Subscription> subs = new ArrayList<>();
                TelemetryMessages.SUBSCRIPTIONS.forEach((filter, q) -> subs.add(
                        com.hivemq.client.mqtt.mqtt5.message.subscribe.Mqtt5Subscription.builder().topicFilter(filter)
                                .qos(qos(q)).build()));
                client5.subscribe(com.hivemq.client.mqtt.mqtt5.message.subscribe.Mqtt5Subscribe.builder()
                        .addSubscriptions(subs).build()).get(options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } else {
                client3 = MqttClient.builder().useMqttVersion3().identifier(options.clientId())
                        .serverHost(at.getHostString()).serverPort(at.getPort())
                        .automaticReconnect().initialDelay(100, TimeUnit.MILLISECONDS).maxDelay(5, TimeUnit.SECONDS)
                        .applyAutomaticReconnect()
                        .addConnectedListener(c -> connected = true).addDisconnectedListener(c -> connected = false)
                        .buildAsync();
                client3.publishes(MqttGlobalPublishFilter.ALL, this::onPublish3, true);
                var c = client3.connectWith().cleanSession(false).keepAlive(30);
                if (options.username() != null) {
                    c.simpleAuth().username(options.username()).password(bytes(options.password())).applySimpleAuth();
                }
                c.send().get(options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
                List<com.hivemq.client.mqtt.mqtt3.message.subscribe.Mqtt3Subscription> subs = new ArrayList<>();
                TelemetryMessages.SUBSCRIPTIONS.forEach((filter, q) -> subs.add(
                        com.hivemq.client.mqtt.mqtt3.message.subscribe.Mqtt3Subscription.builder().topicFilter(filter)
                                .qos(qos(q)).build()));
                client3.subscribe(com.hivemq.client.mqtt.mqtt3.message.subscribe.Mqtt3Subscribe.builder()
                        .addSubscriptions(subs).build()).get(options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
            }
            connected = true;
        } catch (java.util.concurrent.TimeoutException e) {
            throw new StorageUnavailableException("cannot reach the MQTT broker at " + options.broker() + " within "
                    + options.connectTimeout().toMillis() + " ms");
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            throw new StorageUnavailableException("the MQTT broker at " + options.broker() + " refused the gateway: "
                    + (c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage()), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageUnavailableException("interrupted while connecting to " + options.broker(), e);
        }
    }

    private static byte[] bytes(String s) {
        return s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    }

    private static MqttQos qos(int q) {
        return MqttQos.fromCode(q);
    }

    // ------------------------------------------------------------------ receiving (on the client's event loop)

    private void onPublish5(Mqtt5Publish p) {
        String idProperty = null;
        for (Mqtt5UserProperty u : p.getUserProperties().asList()) {
            if (u.getName().toString().equals(TelemetryMessages.MESSAGE_ID_PROPERTY)) {
                idProperty = u.getValue().toString();
            }
        }
        onMessage(p.getTopic().toString(), p.getPayloadAsBytes(), idProperty, p.getQos().getCode(), p::acknowledge);
    }

    private void onPublish3(Mqtt3Publish p) {
        onMessage(p.getTopic().toString(), p.getPayloadAsBytes(), null, p.getQos().getCode(), p::acknowledge);
    }

    private void onMessage(String topic, byte[] payload, String idProperty, int qos, Runnable ack) {
        long now = System.currentTimeMillis() * 1_000_000L;
        received.incrementAndGet();
        TelemetryRow row;
        try {
            row = TelemetryMessages.parse(topic, payload, idProperty, qos, now);
        } catch (MalformedTelemetryException e) {
            malformed.incrementAndGet();
            malformedLog.refused(e);
            ack.run();
            return;
        }
        synchronized (lock) {
            // backpressure: past four batches waiting, the client's thread waits (the broker then holds the messages)
            while (buffer.size() >= 4 * options.batchRows() && !stopping) {
                try {
                    lock.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (buffer.isEmpty()) {
                oldestNs = System.nanoTime();
            }
            buffer.add(new Pending(row, ack));
            if (buffer.size() >= options.batchRows()) {
                lock.notifyAll();
            }
        }
    }

    // ------------------------------------------------------------------ committing (one thread)

    private void commitLoop() {
        long intervalNs = options.batchInterval().toNanos();
        while (true) {
            List<Pending> batch;
            synchronized (lock) {
                boolean due;
                while (true) {
                    long now = System.nanoTime();
                    due = !buffer.isEmpty() && (buffer.size() >= options.batchRows()
                            || now - oldestNs >= intervalNs || stopping);
                    if (due || stopping && buffer.isEmpty() || linkDue()) {
                        break;
                    }
                    long waitNs = buffer.isEmpty() ? intervalNs : intervalNs - (now - oldestNs);
                    try {
                        lock.wait(Math.max(1, waitNs / 1_000_000));
                    } catch (InterruptedException e) {
                        if (stopping) {
                            return;
                        }
                    }
                }
                if (stopping && buffer.isEmpty()) {
                    return;
                }
                int n = due ? Math.min(buffer.size(), options.batchRows()) : 0;
                batch = new ArrayList<>(buffer.subList(0, n));
                buffer = new ArrayList<>(buffer.subList(n, buffer.size()));
                if (n > 0) {
                    inCommit = batch.size();
                    inCommitOldestNs = oldestNs;
                    oldestNs = System.nanoTime();
                }
                lock.notifyAll();
            }
            try {
                if (!batch.isEmpty()) {
                    commit(batch);
                }
                if (linkDue()) {
                    linkAlerts();
                }
            } catch (RuntimeException e) {
                log.accept("telemetry: " + e.getMessage());
            } finally {
                synchronized (lock) {
                    inCommit = 0;
                }
            }
        }
    }

    private boolean linkDue() {
        return !stopping && System.nanoTime() - lastLinkNs >= options.linkInterval().toNanos();
    }

    /** Deduplicates, links alerts to episodes in the lake, commits, then acknowledges every message of the batch. */
    private void commit(List<Pending> batch) {
        List<TelemetryRow> rows = new ArrayList<>(batch.size());
        List<String> keys = new ArrayList<>(batch.size());
        Set<String> inBatch = new HashSet<>();
        long dups = 0;
        for (Pending p : batch) {
            TelemetryRow r = p.row();
            if (r.messageId() != null) {
                String k = MessageIds.key(r.robotId(), r.messageId());
                if (ids.contains(k) || !inBatch.add(k)) {
                    dups++;
                    continue;
                }
                keys.add(k);
            }
            rows.add(r);
        }
        Set<String> alertRobots = new TreeSet<>();
        for (TelemetryRow r : rows) {
            if (r.messageClass().equals(TelemetryRow.ALERT)) {
                alertRobots.add(r.robotId());
            }
        }
        long linked = 0;
        long backoffMs = 100;
        for (int attempt = 1; !rows.isEmpty(); attempt++) {
            try {
                if (!alertRobots.isEmpty()) {
                    lake.refresh();
                    EpisodeSpans spans = EpisodeSpans.load(lake, alertRobots);
                    linked = 0;
                    for (int i = 0; i < rows.size(); i++) {
                        TelemetryRow r = rows.get(i);
                        if (r.messageClass().equals(TelemetryRow.ALERT) && r.episodeId() == null) {
                            String e = spans.episodeAt(r.robotId(), r.tsNs());
                            if (e != null) {
                                rows.set(i, r.withEpisodeId(e));
                                linked++;
                            }
                        }
                    }
                }
                lake.begin("telemetry").append(FleetTables.TELEMETRY_TABLE, rows, Set.of())
                        .summary("rows", Integer.toString(rows.size())).commit();
                break;
            } catch (FlywheelException | IllegalStateException e) {
                commitFailures.incrementAndGet();
                log.accept("telemetry: commit of " + rows.size() + " row(s) failed (attempt " + attempt + ", retrying"
                        + " in " + backoffMs + " ms; the messages stay unacknowledged): " + e.getMessage());
                sleep(backoffMs);
                backoffMs = Math.min(5_000, backoffMs * 2);
                if (stopping && attempt >= 3) {
                    return; // not acknowledged: the broker delivers them again to the next gateway
                }
                rows = withoutPresent(rows);
            }
        }
        long now = System.currentTimeMillis() * 1_000_000L;
        for (String k : keys) {
            ids.add(k, now);
        }
        ids.expire(now);
        for (Pending p : batch) {
            p.ack().run();
        }
        synchronized (lock) {
            inCommit = 0; // before the counts, so that committed + pending never counts a row twice
        }
        committed.addAndGet(rows.size());
        duplicates.addAndGet(batch.size() - rows.size());
        linkedAtWrite.addAndGet(linked);
        if (!rows.isEmpty()) {
            batches.incrementAndGet();
        }
    }

    /** @return the rows whose ids the table does not hold (after a commit whose outcome is unknown) */
    private List<TelemetryRow> withoutPresent(List<TelemetryRow> rows) {
        List<String[]> k = new ArrayList<>();
        for (TelemetryRow r : rows) {
            if (r.messageId() != null) {
                k.add(new String[] {r.robotId(), r.messageId()});
            }
        }
        Set<String> present;
        try {
            present = MessageIds.present(lake, k);
        } catch (FlywheelException e) {
            return rows; // still failing: the next attempt tells
        }
        if (present.isEmpty()) {
            return rows;
        }
        List<TelemetryRow> out = new ArrayList<>();
        for (TelemetryRow r : rows) {
            if (r.messageId() == null || !present.contains(MessageIds.key(r.robotId(), r.messageId()))) {
                out.add(r);
            }
        }
        return out;
    }

    /** Links unlinked alerts when the lake's episodes changed since the last run. */
    private void linkAlerts() {
        lastLinkNs = System.nanoTime();
        LakeSnapshot s = lake.refresh();
        Long v = s.tables().get(TableSchemas.EPISODES);
        if (v == null || v.equals(episodesVersionLinked) || !s.tables().containsKey(FleetTables.TELEMETRY)) {
            return;
        }
        AlertLinks.Result r = AlertLinks.link(lake, null);
        episodesVersionLinked = v;
        if (r.linked() > 0) {
            linkedLater.addAndGet(r.linked());
            log.accept("telemetry: linked " + r.linked() + " alert(s) to their episodes (lake commit " + r.lakeCommit()
                    + "; " + (r.unlinked() - r.linked()) + " still without an episode)");
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ state

    /** @return the counts so far */
    public TelemetryStats stats() {
        int pending;
        long oldest;
        synchronized (lock) {
            pending = buffer.size() + inCommit;
            oldest = inCommit > 0 ? inCommitOldestNs : buffer.isEmpty() ? 0 : oldestNs;
        }
        long lag = pending == 0 ? 0 : (System.nanoTime() - oldest) / 1_000_000;
        return new TelemetryStats(connected, received.get(), committed.get(), duplicates.get(), malformed.get(),
                batches.get(), pending, lag, linkedAtWrite.get(), linkedLater.get(), commitFailures.get());
    }

    /** @return the broker URL */
    public String broker() {
        return options.broker();
    }

    /**
     * Stops: the messages received so far are committed and acknowledged, then the client disconnects (the broker
     * keeps the session: what is published meanwhile waits for the next start). Blocks until done.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (stopping) {
                return;
            }
            stopping = true;
            lock.notifyAll();
        }
        try {
            committer.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        disconnect();
    }

    private void disconnect() {
        try {
            if (client5 != null) {
                client5.disconnect().get(5, TimeUnit.SECONDS);
            }
            if (client3 != null) {
                client3.disconnect().get(5, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            // not connected (or the broker went first): nothing to hand back
        }
    }

    /** The refused messages' log: every one counted, at most 20 lines a minute written, then a count of the rest. */
    private static final class MalformedLog {
        private final Consumer<String> log;
        private long windowStart = System.nanoTime();
        private int shown;
        private int hidden;

        MalformedLog(Consumer<String> log) {
            this.log = log;
        }

        synchronized void refused(MalformedTelemetryException e) {
            long now = System.nanoTime();
            if (now - windowStart > 60_000_000_000L) {
                if (hidden > 0) {
                    log.accept("telemetry: " + hidden + " more malformed message(s) refused in the last minute, not"
                            + " shown");
                }
                windowStart = now;
                shown = 0;
                hidden = 0;
            }
            if (shown < 20) {
                shown++;
                log.accept(e.getMessage());
            } else {
                hidden++;
            }
        }
    }

}
