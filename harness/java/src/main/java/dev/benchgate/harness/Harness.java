package dev.benchgate.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;

/**
 * benchgate's external-client harness: you write the {@link RequestFactory} that
 * builds your client and sends one request; this runs it as a benchgate command
 * client (docs/external-clients.md).
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *     HttpClient client = HttpClient.newHttpClient();
 *     Harness.run("JdkBench", w -> {
 *         HttpRequest r = HttpRequest.newBuilder(URI.create(w.url)).build();
 *         return () -> client.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
 *     });
 * }
 * }</pre>
 *
 * <p>It reads the {@code BENCHGATE_*} variables, runs the closed or open loop on one
 * platform thread per worker ({@link LoadLoop}), excludes the warmup, prints the
 * window markers, records latency in µs in an HdrHistogram (3 significant digits),
 * writes the result file and exits; or, when benchgate offers the window loop
 * ({@code BENCHGATE_WINDOWS=loop}), measures every window benchgate asks for in one
 * process after one warmup ({@link WindowLoop}). Exit codes: {@link #EXIT_OK}, {@link #EXIT_NO_RESPONSE},
 * {@link #EXIT_BAD_WORKLOAD} or {@link #EXIT_UNSUPPORTED}.
 */
public final class Harness {
    /** The library's version (also in pom.xml). */
    public static final String VERSION = "0.1.0";
    /** Exit code: done. */
    public static final int EXIT_OK = 0;
    /** Exit code: not one measured request got an HTTP response, or the client failed. */
    public static final int EXIT_NO_RESPONSE = 1;
    /** Exit code: a {@code BENCHGATE_*} variable is missing or invalid. */
    public static final int EXIT_BAD_WORKLOAD = 2;
    /** Exit code: the client does not support this workload ({@link Unsupported}). */
    public static final int EXIT_UNSUPPORTED = 3;
    /** Printed on stdout when the warmup ends. */
    public static final String OPEN_MARKER = "BENCHGATE-WINDOW-OPEN";
    /** Printed on stdout when the measurement ends. */
    public static final String CLOSE_MARKER = "BENCHGATE-WINDOW-CLOSE";

    /** Reads the workload from the environment, runs it and exits the JVM. */
    public static void run(String name, RequestFactory factory) {
        run(Workload.fromEnvOrExit(name), factory);
    }

    /** Runs a workload read beforehand ({@link Workload#fromEnvOrExit}) and exits the JVM. */
    public static void run(Workload w, RequestFactory factory) {
        System.exit(runAndReport(w, factory));
    }

    /** {@link #run} without the exit: measures, writes the result file, logs; returns the exit code. */
    public static int runAndReport(Workload w, RequestFactory factory) {
        if (WindowLoop.offered(w, System.getenv("BENCHGATE_WINDOWS"), System.getenv("BENCHGATE_WINDOW_ACK"))) {
            return loop(w, factory, new java.io.BufferedReader(
                    new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8)));
        }
        Result result;
        try {
            result = measure(w, factory, markerFor(System.getenv("BENCHGATE_WINDOW_ACK")));
        } catch (Exception e) {
            return failed(w, e);
        }
        try {
            if (!w.resultPath.isEmpty()) {
                result.write(Path.of(w.resultPath));
            }
        } catch (Exception e) {
            System.err.println(w.name + ": cannot write the result file " + w.resultPath + ": " + e);
            return EXIT_NO_RESPONSE;
        }
        System.out.println(result.hdrLine());
        System.out.flush();
        System.err.println(w.name + ": " + result.summary());
        if (result.answered() == 0) {
            System.err.println(w.name + ": not a single measured request got an HTTP response; is the server at "
                    + w.url + " up?");
            return EXIT_NO_RESPONSE;
        }
        return EXIT_OK;
    }

    /**
     * The window loop ({@code BENCHGATE_WINDOWS=loop}): one warmup, then the windows
     * benchgate opens and closes on {@code in}, each window's result record printed on
     * one stdout line; no result file. Returns the exit code.
     */
    static int loop(Workload w, RequestFactory factory, java.io.BufferedReader in) {
        try {
            WindowLoop.run(w, factory, in, Harness::printMarker);
        } catch (Exception e) {
            return failed(w, e);
        }
        return EXIT_OK;
    }

    /** The exit code of a measurement that threw {@code e}, said on stderr. */
    private static int failed(Workload w, Exception e) {
        if (e instanceof Unsupported) {
            System.err.println(w.name + ": unsupported workload: " + e.getMessage());
            return EXIT_UNSUPPORTED;
        }
        System.err.println(w.name + ": the client failed: " + e);
        e.printStackTrace();
        return EXIT_NO_RESPONSE;
    }

    /**
     * Runs the workload and returns the window's figures: calls the factory on each
     * worker thread, starts the clock when all are ready, hands the window markers to
     * {@code marker}. Throws what a factory or request threw other than a request
     * failure ({@link Unsupported} for a workload the client cannot run).
     */
    public static Result measure(Workload w, RequestFactory factory, Consumer<String> marker) throws Exception {
        int n = w.concurrency;
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch go = new CountDownLatch(1);
        LoadLoop[] loop = new LoadLoop[1]; // published to the workers by go.countDown()
        LoadLoop.Stats[] stats = new LoadLoop.Stats[n];
        List<Exception> failures = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            stats[i] = new LoadLoop.Stats();
            LoadLoop.Stats s = stats[i];
            Thread t = new Thread(() -> {
                boolean counted = false;
                try {
                    Request req = factory.create(w);
                    ready.countDown();
                    counted = true;
                    go.await();
                    if (loop[0] != null) {
                        loop[0].work(req, s);
                    }
                } catch (Exception e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                } finally {
                    if (!counted) {
                        ready.countDown();
                    }
                }
            }, "bench-worker-" + i);
            threads.add(t);
            t.start();
        }
        ready.await();
        synchronized (failures) {
            if (!failures.isEmpty()) {
                go.countDown(); // loop[0] stays null: the workers return at once
                for (Thread t : threads) {
                    t.join();
                }
                throw failures.get(0);
            }
        }
        LoadLoop l = new LoadLoop(w, System.nanoTime());
        loop[0] = l;
        go.countDown();
        LoadLoop.sleepUntil(l.warmEnd);
        marker.accept(OPEN_MARKER);
        long end = l.open(System.nanoTime());
        long closed = 0;
        if (l.byDuration) {
            LoadLoop.sleepUntil(end);
            marker.accept(CLOSE_MARKER); // returns once acknowledged, when benchgate does
            closed = System.nanoTime(); // a late wake-up widens the window: the server's too
        }
        for (Thread t : threads) {
            t.join();
        }
        long stopped = System.nanoTime();
        if (!l.byDuration) {
            marker.accept(CLOSE_MARKER);
        }
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        return l.merge(stats, stopped, closed);
    }

    private static void printMarker(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /**
     * The window markers as benchgate wants them: printed on stdout and, when
     * {@code BENCHGATE_WINDOW_ACK=stdin}, each followed by a wait for benchgate's
     * acknowledgement on stdin (a line, once the reference server's window has
     * opened or closed). The workers keep sending meanwhile, so the harness counts
     * the span the server counts however late benchgate reads stdout.
     */
    static Consumer<String> markerFor(String ack) {
        if (!"stdin".equals(ack)) {
            return Harness::printMarker;
        }
        java.io.BufferedReader in = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
        return line -> {
            printMarker(line);
            try {
                in.readLine();
            } catch (java.io.IOException e) {
                // stdin gone: nothing to wait for
            }
        };
    }

    private Harness() {}
}
