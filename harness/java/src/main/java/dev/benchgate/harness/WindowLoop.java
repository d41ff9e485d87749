package dev.benchgate.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * The window loop (docs/external-clients.md, "The window loop"): one process measures
 * many windows after one warmup. The workers send from the start to the exit; benchgate
 * opens and closes window k on stdin, and the harness answers each close with the
 * window's result record on one stdout line. A request counts in window k when it
 * completes between the reading of {@code BENCHGATE-WINDOW-OPEN k} and of
 * {@code BENCHGATE-WINDOW-CLOSE k}, as the reference server counts its own window.
 * Open loop: requests are scheduled at the rate from the start, and again from each
 * resume; latency from the intended start.
 */
final class WindowLoop {
    static final String DECLARE = "BENCHGATE-WINDOWS-LOOP";
    static final String READY = "BENCHGATE-READY";
    static final String OPEN = "BENCHGATE-WINDOW-OPEN ";
    static final String CLOSE = "BENCHGATE-WINDOW-CLOSE ";
    static final String RESULT = "BENCHGATE-WINDOW-RESULT ";
    static final String PAUSE = "BENCHGATE-PAUSE";
    static final String PAUSED = "BENCHGATE-PAUSED";
    static final String RESUME = "BENCHGATE-RESUME";
    static final String EXIT = "BENCHGATE-EXIT";

    /** Whether benchgate offers the loop and this workload can take it (a duration, acknowledgements on stdin). */
    static boolean offered(Workload w, String windows, String ack) {
        return "loop".equals(windows) && "stdin".equals(ack) && w.durationMs > 0;
    }

    /** One window: a slot per worker, each written under its own lock, read once closed. */
    private static final class Window {
        long k; // set, with openedAt, before the window is published in current
        long openedAt;
        final LoadLoop.Stats[] stats;
        boolean closed; // under each slot's lock
        /** When the close was read (valid once {@link #closing}): a completion after it counts nowhere. */
        volatile long closedAt;
        volatile boolean closing;

        Window(int workers) {
            stats = new LoadLoop.Stats[workers];
            for (int i = 0; i < workers; i++) {
                stats[i] = new LoadLoop.Stats();
            }
        }
    }

    private final Workload w;
    private final int n;
    private final double nsPerRequest;
    private final AtomicLong nextTicket = new AtomicLong();
    private volatile Window current;
    /** Guards the pause state below; workers wait on it. */
    private final Object gate = new Object();
    private boolean paused;
    private boolean stopping;
    private int parked;
    private int alive;
    private long epoch;
    private long scheduleStart;

    private WindowLoop(Workload w) {
        this.w = w;
        n = w.concurrency;
        nsPerRequest = w.openLoop() ? 1e9 / w.rate : 0;
    }

    /**
     * Runs the loop: declares it, starts the workers (the factory once per worker
     * thread), warms up, says ready, then obeys the commands read from {@code in} until
     * {@code BENCHGATE-EXIT} or the end of input. {@code out} prints one line (and
     * flushes). Throws what a factory threw ({@link Unsupported} included), before
     * the loop is declared.
     */
    static void run(Workload w, RequestFactory factory, BufferedReader in, Consumer<String> out) throws Exception {
        WindowLoop loop = new WindowLoop(w);
        CountDownLatch ready = new CountDownLatch(loop.n);
        CountDownLatch go = new CountDownLatch(1);
        List<Exception> failures = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        boolean[] start = {false};
        for (int i = 0; i < loop.n; i++) {
            int slot = i;
            Thread t = new Thread(() -> {
                Request req = null;
                try {
                    req = factory.create(w);
                } catch (Exception e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                } finally {
                    ready.countDown();
                }
                try {
                    go.await();
                    if (req != null && start[0]) {
                        loop.work(slot, req);
                    }
                } catch (Exception e) {
                    System.err.println(w.name + ": worker " + slot + " stopped: " + e);
                } finally {
                    loop.leave();
                }
            }, "bench-worker-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        synchronized (loop.gate) {
            loop.alive = loop.n;
            loop.scheduleStart = System.nanoTime();
        }
        threads.forEach(Thread::start);
        ready.await();
        synchronized (failures) {
            if (!failures.isEmpty()) {
                go.countDown(); // start[0] stays false: the workers return at once
                throw failures.get(0);
            }
        }
        out.accept(DECLARE);
        long t0 = System.nanoTime();
        synchronized (loop.gate) {
            loop.scheduleStart = t0;
        }
        start[0] = true;
        go.countDown(); // publishes start[0]
        LoadLoop.sleepUntil(t0 + w.warmupMs * 1_000_000L);
        out.accept(READY);
        loop.obey(in, out);
        loop.stop();
        for (Thread t : threads) {
            t.join(w.timeoutMs + 1000); // a request in flight ends by its timeout
        }
    }

    /** Reads and carries out the commands until EXIT or the end of input. */
    private void obey(BufferedReader in, Consumer<String> out) throws IOException, InterruptedException {
        String line;
        // Built ahead: an opening does nothing slow between reading its line and counting.
        Window next = new Window(n);
        while ((line = in.readLine()) != null) {
            long now = System.nanoTime();
            String cmd = line.strip();
            if (cmd.equals(EXIT)) {
                return;
            } else if (cmd.startsWith(OPEN)) {
                next.k = number(cmd, OPEN);
                next.openedAt = now;
                resume();
                current = next; // publishes k and openedAt
                next = new Window(n);
            } else if (cmd.startsWith(CLOSE)) {
                long k = number(cmd, CLOSE);
                Window win = current;
                if (win == null || win.k != k) {
                    System.err.println(w.name + ": " + cmd + " but the open window is "
                            + (win == null ? "none" : String.valueOf(win.k)) + "; ignored");
                    continue;
                }
                win.closedAt = now;
                win.closing = true;
                current = null;
                out.accept(RESULT + close(win, now).toJson(k).strip());
            } else if (cmd.equals(PAUSE)) {
                pause();
                out.accept(PAUSED);
            } else if (cmd.equals(RESUME)) {
                resume();
            } else {
                System.err.println(w.name + ": unknown command from benchgate: " + cmd + "; ignored");
            }
        }
    }

    private static long number(String cmd, String word) {
        try {
            return Long.parseLong(cmd.substring(word.length()).strip());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Closes {@code win} at {@code now}: its figures, merged from the workers' slots. */
    private static Result close(Window win, long now) {
        Histogram all = new Histogram(3);
        long[] errors = new long[ErrorClasses.NAMES.size()];
        for (LoadLoop.Stats s : win.stats) {
            synchronized (s) {
                win.closed = true;
                all.add(s.latencyUs);
                for (int i = 0; i < errors.length; i++) {
                    errors[i] += s.errors[i];
                }
            }
        }
        return new Result(all, errors, Math.max(now - win.openedAt, 1) / 1e9, 0, 0);
    }

    /** One worker: sends until stopped, waiting while paused; records into the open window. */
    private void work(int slot, Request req) throws Exception {
        while (true) {
            long ep;
            long schedule;
            synchronized (gate) {
                if (paused && !stopping) {
                    if (++parked >= alive) {
                        gate.notifyAll(); // the last one in: pause() may answer
                    }
                    while (paused && !stopping) {
                        gate.wait();
                    }
                    parked--;
                }
                if (stopping) {
                    return;
                }
                ep = epoch;
                schedule = scheduleStart;
            }
            long intended;
            if (w.openLoop()) {
                intended = schedule + Math.round(nextTicket.getAndIncrement() * nsPerRequest);
                if (!waitUntil(intended, ep)) {
                    continue; // paused or stopped meanwhile: that ticket lapses
                }
            } else {
                intended = System.nanoTime();
            }
            String error = LoadLoop.sendOnce(req);
            long done = System.nanoTime();
            Window win = current;
            if (win != null && done - win.openedAt >= 0 && !(win.closing && done - win.closedAt > 0)) {
                LoadLoop.Stats s = win.stats[slot];
                synchronized (s) {
                    if (!win.closed) {
                        s.add(done, error == null ? -1 : ErrorClasses.index(error),
                                Math.max(0, (done - intended) / 1000));
                    }
                }
            }
        }
    }

    /** Waits until {@code t}; false when a pause or the stop came first. */
    private boolean waitUntil(long t, long ep) throws InterruptedException {
        synchronized (gate) {
            long wait;
            while ((wait = t - System.nanoTime()) > 0 && !paused && !stopping && epoch == ep) {
                gate.wait(Math.max(1, wait / 1_000_000L));
            }
            return !paused && !stopping && epoch == ep;
        }
    }

    /** Stops new requests and returns once every worker finished the one in flight. */
    private void pause() throws InterruptedException {
        synchronized (gate) {
            paused = true;
            gate.notifyAll();
            while (parked < alive) {
                gate.wait();
            }
        }
    }

    /** Lets paused workers go again; an open loop's schedule starts over from now. */
    private void resume() {
        synchronized (gate) {
            if (!paused) {
                return;
            }
            paused = false;
            epoch++;
            nextTicket.set(0);
            scheduleStart = System.nanoTime();
            gate.notifyAll();
        }
    }

    private void stop() {
        synchronized (gate) {
            stopping = true;
            gate.notifyAll();
        }
    }

    private void leave() {
        synchronized (gate) {
            alive--; // pause() waits for one fewer
            gate.notifyAll();
        }
    }
}
