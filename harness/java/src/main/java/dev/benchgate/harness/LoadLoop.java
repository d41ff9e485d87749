package dev.benchgate.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * The trial's clock and one worker's loop (the same rules as the Python and Node
 * harnesses; docs/external-clients.md, "What to measure").
 *
 * <p>Closed loop: send as soon as the previous request completed; latency from the
 * send. Open loop: request {@code i} is intended to start at {@code t0 + i / rate}
 * (one global sequence); a free worker waits for the next intended start; latency
 * from the intended start, so queueing behind a stalled server is charged to latency.
 * Measured: completed inside the window (duration mode; the reference server counts
 * the same way), or the first {@code requests} sent after it opened (request-count mode). The window
 * opens once the open marker is printed ({@link #open}), not at the scheduled end of
 * the warmup: a main thread that wakes late must not count requests the server's
 * window cannot see.
 */
final class LoadLoop {
    /**
     * Duration mode: the load goes on this long after the window's end, so the
     * server's window, which closes when benchgate has read the close marker, sees
     * the same steady load at its closing edge as at its opening edge. Requests sent
     * then count nowhere.
     */
    static final long TAIL_NS = 100_000_000L;
    final Workload w;
    final long t0;
    final long warmEnd;
    final boolean byDuration;
    /** When the window opened; valid once {@link #opened} is true. */
    private volatile long openedAt;
    /** End of a duration window; valid once {@link #opened} is true. */
    private volatile long end;
    /** Written last by {@link #open}: publishes openedAt and end. */
    private volatile boolean opened;
    private final double nsPerRequest;
    private final AtomicLong nextTicket = new AtomicLong();
    private final AtomicLong measuredSent = new AtomicLong();

    LoadLoop(Workload w, long t0) {
        this.w = w;
        this.t0 = t0;
        warmEnd = t0 + w.warmupMs * 1_000_000L;
        byDuration = w.durationMs > 0;
        nsPerRequest = w.openLoop() ? 1e9 / w.rate : 0;
    }

    /** One worker's figures: nothing shared on the hot path; merged after the run. */
    static final class Stats {
        final Histogram latencyUs = new Histogram(3);
        final long[] errors = new long[ErrorClasses.NAMES.size()];
        long inFlightAtDeadline;
        long sentAfterWindow;
        long lastEndNs = Long.MIN_VALUE;
        /** Duration mode: {start, done, error index or -1, latency µs} completed after the scheduled end. */
        final List<long[]> afterEnd = new ArrayList<>();

        void add(long done, int errorIndex, long us) {
            lastEndNs = lastEndNs == Long.MIN_VALUE ? done : Math.max(lastEndNs, done);
            if (errorIndex < 0) {
                latencyUs.recordValue(us);
            } else {
                errors[errorIndex]++;
            }
        }
    }

    /** Opens the window (called right after the open marker was printed); returns its end. */
    long open(long now) {
        openedAt = now;
        end = now + w.durationMs * 1_000_000L;
        opened = true;
        return end;
    }

    private boolean pastEnd(long t) {
        return byDuration && opened && t - end >= 0;
    }

    private boolean pastStop(long t) {
        return byDuration && opened && t - (end + TAIL_NS) >= 0;
    }

    static void sleepUntil(long nanoTime) throws InterruptedException {
        long wait;
        while ((wait = nanoTime - System.nanoTime()) > 0) {
            Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
        }
    }

    /**
     * Sends one request: its error class, null for a success. {@link Unsupported} goes
     * through: the client cannot run the workload.
     */
    static String sendOnce(Request req) {
        try {
            return ErrorClasses.ofStatus(req.send());
        } catch (Unsupported e) {
            throw e;
        } catch (Exception e) {
            return ErrorClasses.classify(e);
        }
    }

    void work(Request req, Stats s) throws InterruptedException {
        while (true) {
            long intended;
            long start;
            if (w.openLoop()) {
                intended = t0 + Math.round(nextTicket.getAndIncrement() * nsPerRequest);
                if (pastStop(intended)) {
                    return;
                }
                sleepUntil(intended);
                start = System.nanoTime();
                if (pastStop(start)) {
                    return; // behind schedule: nothing is sent after the tail
                }
            } else {
                start = intended = System.nanoTime();
                if (pastStop(start)) {
                    return;
                }
            }
            boolean sentInWindow = opened && start - openedAt >= 0;
            if (sentInWindow && !byDuration && measuredSent.incrementAndGet() > w.requests) {
                return;
            }
            String error = sendOnce(req);
            long done = System.nanoTime();
            long latencyUs = Math.max(0, (done - intended) / 1000);
            int errorIndex = error == null ? -1 : ErrorClasses.index(error);
            if (byDuration) { // completed in the window, as the server counts
                if (!opened || done - openedAt < 0) {
                    continue;
                }
                if (pastEnd(done)) {
                    // Past the scheduled end: whether it is in the window depends on
                    // when the close marker was printed; decided in merge().
                    s.afterEnd.add(new long[] {start, done, errorIndex, latencyUs});
                    continue;
                }
            } else if (!sentInWindow) {
                continue;
            }
            s.add(done, errorIndex, latencyUs);
        }
    }

    /**
     * Merges the workers' figures; {@code stoppedNs}: when the last worker stopped;
     * {@code closedNs}: when the close marker was printed (duration mode).
     */
    Result merge(Stats[] stats, long stoppedNs, long closedNs) {
        if (byDuration) {
            for (Stats s : stats) {
                for (long[] c : s.afterEnd) {
                    if (c[1] - closedNs <= 0) {
                        s.add(c[1], (int) c[2], c[3]);
                    } else if (c[0] - closedNs < 0) {
                        s.inFlightAtDeadline++;
                    } else {
                        s.sentAfterWindow++; // the tail
                    }
                }
            }
        }
        Histogram all = new Histogram(3);
        long[] errors = new long[ErrorClasses.NAMES.size()];
        long inFlight = 0;
        long afterWindow = 0;
        long lastEnd = Long.MIN_VALUE;
        for (Stats s : stats) {
            all.add(s.latencyUs);
            for (int i = 0; i < errors.length; i++) {
                errors[i] += s.errors[i];
            }
            inFlight += s.inFlightAtDeadline;
            afterWindow += s.sentAfterWindow;
            lastEnd = Math.max(lastEnd, s.lastEndNs);
        }
        double elapsedS;
        if (byDuration) {
            elapsedS = Math.max(closedNs - openedAt, 1) / 1e9; // open to close marker
        } else {
            // Up to the last measured completion; with none, up to when the workers stopped.
            long last = lastEnd == Long.MIN_VALUE ? stoppedNs : lastEnd;
            elapsedS = Math.max(last - (opened ? openedAt : warmEnd), 1) / 1e9;
        }
        return new Result(all, errors, elapsedS, inFlight, afterWindow);
    }
}
