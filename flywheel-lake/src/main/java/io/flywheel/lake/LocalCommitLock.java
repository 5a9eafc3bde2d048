package io.flywheel.lake;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.flywheel.error.ConflictException;
import io.flywheel.error.StorageUnavailableException;

/**
 * {@link CommitLock} of a local lake: an exclusive {@code fcntl} lock on {@code _lake/commit.lock}, which the kernel
 * releases when its process dies, even by kill -9, so a crashed writer never leaves the lake locked. Threads of one
 * JVM first take a per-file {@link ReentrantLock} (the kernel lock is per process). A holder writes its pid, host and
 * start time into the file, so a writer that times out can say who holds it.
 */
final class LocalCommitLock implements CommitLock {
    private static final ConcurrentHashMap<Path, ReentrantLock> IN_JVM = new ConcurrentHashMap<>();
    private final Path file;

    LocalCommitLock(Path file) {
        this.file = file.toAbsolutePath().normalize();
    }

    @Override
    public Held acquire(Duration timeout) {
        ReentrantLock jvm = IN_JVM.computeIfAbsent(file, f -> new ReentrantLock(true));
        if (jvm.isHeldByCurrentThread()) {
            throw new IllegalStateException("commit lock " + file + " is already held by this thread (nested commit)");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            if (!jvm.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new ConflictException("the lake's commit lock " + file + " was held by another thread of this"
                        + " process for more than " + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConflictException("interrupted while waiting for the commit lock " + file, e);
        }
        FileChannel ch = null;
        try {
            Files.createDirectories(file.getParent());
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
            long sleep = 2;
            FileLock lock;
            while ((lock = ch.tryLock()) == null) {
                if (System.nanoTime() > deadline) {
                    throw new ConflictException("the lake's commit lock " + file + " was held for more than "
                            + timeout.toSeconds() + " s by " + holder() + "; the holder is alive (a dead process holds"
                            + " no lock)");
                }
                Thread.sleep(sleep);
                sleep = Math.min(100, sleep * 2);
            }
            String me = ManagementFactory.getRuntimeMXBean().getName() + " since " + Instant.now();
            ch.truncate(0);
            ch.write(ByteBuffer.wrap(me.getBytes(StandardCharsets.UTF_8)), 0);
            FileChannel channel = ch;
            FileLock held = lock;
            ch = null;
            return new Held() {
                private boolean closed;

                @Override
                public void close() {
                    if (closed) {
                        return;
                    }
                    closed = true;
                    try {
                        held.release();
                        channel.close();
                    } catch (IOException e) {
                        // closing the channel releases the lock in any case
                    } finally {
                        jvm.unlock();
                    }
                }
            };
        } catch (IOException e) {
            jvm.unlock();
            throw new StorageUnavailableException("cannot take the lake's commit lock " + file + ": " + LocalFiles.reason(e), e);
        } catch (InterruptedException e) {
            jvm.unlock();
            Thread.currentThread().interrupt();
            throw new ConflictException("interrupted while waiting for the commit lock " + file, e);
        } catch (RuntimeException e) {
            jvm.unlock();
            throw e;
        } finally {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException e) {
                    // nothing was locked through it
                }
            }
        }
    }

    private String holder() {
        try {
            String s = Files.readString(file).strip();
            return s.isEmpty() ? "another process" : "pid@host " + s;
        } catch (IOException e) {
            return "another process";
        }
    }
}
