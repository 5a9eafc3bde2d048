package io.flywheel.lake;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.ConflictException;

/**
 * {@link CommitLock} of an S3 lake: a lease object {@code _lake/commit.lock} created with the store's conditional PUT,
 * holding an owner token and an expiry ({@link #leaseMs()}, renewed while held). A writer that finds an expired
 * lease (its holder died) deletes it and tries again. A lease is not a fence: a holder stalled past its expiry may
 * still write. The commit point's put-if-absent and the check that each table commit lands on the version after the
 * one it read are what keep the lake consistent then; the lease only keeps writers from wasting work on each other.
 */
final class S3CommitLock implements CommitLock {
    /** Lease length in ms: 30 s, or the system property {@code flywheel.lake.s3-lease-ms} (tests shorten it). */
    static long leaseMs() {
        return Long.getLong("flywheel.lake.s3-lease-ms", 30_000);
    }

    private static final String KEY = "commit.lock";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ConcurrentHashMap<String, ReentrantLock> IN_JVM = new ConcurrentHashMap<>();
    private final MetaStore store;

    S3CommitLock(MetaStore store) {
        this.store = store;
    }

    @Override
    public Held acquire(Duration timeout) {
        ReentrantLock jvm = IN_JVM.computeIfAbsent(store.describe(KEY), k -> new ReentrantLock(true));
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            if (!jvm.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new ConflictException("the lake's commit lock " + store.describe(KEY)
                        + " was held by another thread of this process for more than " + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConflictException("interrupted while waiting for the commit lock " + store.describe(KEY), e);
        }
        try {
            String owner = UUID.randomUUID().toString();
            long sleep = 10;
            while (!store.putIfAbsent(KEY, lease(owner))) {
                JsonNode held = current();
                if (held != null && held.path("expires_at_ms").asLong(0) < System.currentTimeMillis()) {
                    store.delete(KEY); // the holder died (or stalled past its lease)
                    continue;
                }
                if (System.nanoTime() > deadline) {
                    throw new ConflictException("the lake's commit lock " + store.describe(KEY) + " was held for more"
                            + " than " + timeout.toSeconds() + " s by " + (held == null ? "another writer"
                            : held.path("holder").asText("another writer")));
                }
                Thread.sleep(sleep + (long) (Math.random() * sleep));
                sleep = Math.min(500, sleep * 2);
            }
            Thread renew = new Thread(() -> {
                try {
                    while (true) {
                        Thread.sleep(Math.max(10, leaseMs() / 3));
                        JsonNode h = current();
                        if (h == null || !owner.equals(h.path("owner").asText())) {
                            return;
                        }
                        store.put(KEY, lease(owner));
                    }
                } catch (InterruptedException e) {
                    // released
                } catch (RuntimeException e) {
                    // the storage is gone; the lease expires and the commit point's put-if-absent decides
                }
            }, "flywheel-lake-lease");
            renew.setDaemon(true);
            renew.start();
            return new Held() {
                private boolean closed;

                @Override
                public void close() {
                    if (closed) {
                        return;
                    }
                    closed = true;
                    renew.interrupt();
                    try {
                        JsonNode h = current();
                        if (h != null && owner.equals(h.path("owner").asText())) {
                            store.delete(KEY);
                        }
                    } finally {
                        jvm.unlock();
                    }
                }
            };
        } catch (InterruptedException e) {
            jvm.unlock();
            Thread.currentThread().interrupt();
            throw new ConflictException("interrupted while waiting for the commit lock " + store.describe(KEY), e);
        } catch (RuntimeException e) {
            jvm.unlock();
            throw e;
        }
    }

    private JsonNode current() {
        byte[] b = store.read(KEY);
        if (b == null) {
            return null;
        }
        try {
            return JSON.readTree(b);
        } catch (java.io.IOException e) {
            return JSON.createObjectNode(); // damaged: treated as expired
        }
    }

    private static byte[] lease(String owner) {
        var n = JSON.createObjectNode();
        n.put("owner", owner);
        n.put("holder", ManagementFactory.getRuntimeMXBean().getName());
        n.put("expires_at_ms", System.currentTimeMillis() + leaseMs());
        return n.toString().getBytes(StandardCharsets.UTF_8);
    }
}
