package dev.benchgate.harness;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * The harness's tests, a small runner (no JUnit on the test machines): each test
 * against a local counting server on 127.0.0.1. Prints "N passed, M failed" and
 * exits non-zero on a failure. Run: sh harness/java/test.sh
 */
public final class HarnessTests {
    private static final AtomicLong SERVED = new AtomicLong();
    private static String base;
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    interface Test {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        // Headers and body leave at once: no Nagle/delayed-ACK stall of 40 ms per request.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext("/", exchange -> {
            SERVED.incrementAndGet();
            String path = exchange.getRequestURI().getPath();
            int status = 200;
            if (path.startsWith("/status/")) {
                status = Integer.parseInt(path.substring("/status/".length()));
            } else if (path.startsWith("/delay/")) {
                try {
                    Thread.sleep(Long.parseLong(path.substring("/delay/".length())));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try (InputStream in = exchange.getRequestBody()) {
                in.readAllBytes();
            }
            byte[] body = "xxxxxxxxxxxxxxxxxxxxxx".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.setExecutor(Executors.newFixedThreadPool(8));
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();

        Map<String, Test> tests = new java.util.LinkedHashMap<>();
        tests.put("request-count mode measures exactly that many", HarnessTests::requestCount);
        tests.put("duration mode accounts for every request the server saw", HarnessTests::duration);
        tests.put("open loop holds the rate", HarnessTests::openLoopRate);
        tests.put("open loop latency runs from the intended start", HarnessTests::openLoopLatency);
        tests.put("error statuses are counted in their class", HarnessTests::statuses);
        tests.put("the result file decodes to the measured histogram", HarnessTests::resultFile);
        tests.put("no response exits 1 and counts connect errors", HarnessTests::noResponse);
        tests.put("bad variables name the variable", HarnessTests::badVariables);
        tests.put("an unsupported workload exits 3", HarnessTests::unsupported);
        tests.put("classify reads the cause chain", HarnessTests::classify);
        tests.put("the window loop measures each window benchgate opens", HarnessTests::windowLoop);
        tests.put("the window loop pauses and resumes its workers", HarnessTests::windowLoopPause);
        int passed = 0;
        int failed = 0;
        for (Map.Entry<String, Test> t : tests.entrySet()) {
            try {
                t.getValue().run();
                passed++;
                System.out.println("ok   " + t.getKey());
            } catch (Throwable e) {
                failed++;
                System.out.println("FAIL " + t.getKey() + ": " + e);
                e.printStackTrace(System.out);
            }
        }
        server.stop(0);
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static Map<String, String> env(String path, String... overrides) {
        Map<String, String> e = new HashMap<>();
        e.put("BENCHGATE_URL", path.startsWith("http") ? path : base + path);
        e.put("BENCHGATE_METHOD", "GET");
        e.put("BENCHGATE_CONCURRENCY", "2");
        e.put("BENCHGATE_RATE", "0");
        e.put("BENCHGATE_WARMUP_MS", "0");
        e.put("BENCHGATE_DURATION_MS", "0");
        e.put("BENCHGATE_REQUESTS", "0");
        e.put("BENCHGATE_TIMEOUT_MS", "2000");
        for (int i = 0; i < overrides.length; i += 2) {
            e.put("BENCHGATE_" + overrides[i], overrides[i + 1]);
        }
        return e;
    }

    static Workload workload(String path, String... overrides) throws BadWorkload {
        return Workload.fromEnv("HarnessTests", env(path, overrides));
    }

    /** The JDK client, one shared instance; a refused connection surfaces as ConnectException. */
    static Request jdk(Workload w) {
        HttpRequest r = HttpRequest.newBuilder(URI.create(w.url)).build();
        return () -> CLIENT.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    static Result quiet(Workload w) throws Exception {
        return Harness.measure(w, HarnessTests::jdk, line -> {});
    }

    static void requestCount() throws Exception {
        long before = SERVED.get();
        List<String> markers = new ArrayList<>();
        Result r = Harness.measure(workload("/bytes", "REQUESTS", "300", "WARMUP_MS", "100"),
                HarnessTests::jdk, markers::add);
        check(r.ok() == 300 && r.requests() == 300, "300 measured, got " + r.summary());
        check(SERVED.get() - before >= 300, "the warmup comes on top");
        check(markers.equals(List.of(Harness.OPEN_MARKER, Harness.CLOSE_MARKER)), "markers " + markers);
        check(r.elapsedS > 0, "elapsed");
    }

    static void duration() throws Exception {
        long before = SERVED.get();
        List<Long> marked = new ArrayList<>();
        Result r = Harness.measure(workload("/bytes", "DURATION_MS", "400", "CONCURRENCY", "3"),
                HarnessTests::jdk, m -> marked.add(System.nanoTime()));
        long served = SERVED.get() - before;
        check(r.ok() > 50, "some load: " + r.summary());
        // Every request is measured or in flight at the deadline, but for at most one
        // per worker sent before the open marker was printed.
        long unmeasured = served - (r.requests() + r.inFlightAtDeadline + r.sentAfterWindow);
        check(unmeasured >= 0 && unmeasured <= 3, "server " + served + " vs " + r.summary());
        check(r.sentAfterWindow > 0, "the load goes on in the tail");
        // From the open to the close marker: 400 ms, or more when a loaded machine
        // wakes the closing thread late (the server's window then widens too).
        double betweenMarkers = (marked.get(1) - marked.get(0)) / 1e9;
        check(r.elapsedS >= 0.395, "elapsed " + r.elapsedS + ": shorter than the window");
        check(Math.abs(r.elapsedS - betweenMarkers) < 0.02,
                "elapsed " + r.elapsedS + ", " + betweenMarkers + " s between the markers: from the open to the close marker");
    }

    static void openLoopRate() throws Exception {
        Result r = quiet(workload("/bytes", "RATE", "200", "DURATION_MS", "500", "CONCURRENCY", "4"));
        // The schedule holds 200/s for the window and a 100 ms tail: 120 requests in
        // all. A late wake-up on a loaded machine widens the window: its share follows it.
        long inWindow = r.requests() + r.inFlightAtDeadline;
        long all = inWindow + r.sentAfterWindow;
        check(all >= 115 && all <= 121, "120 sent at 200/s in 0.6 s: " + r.summary());
        check(inWindow >= 200 * r.elapsedS - 5 && inWindow <= 200 * r.elapsedS + 1,
                "200/s over the window measured: " + r.summary());
    }

    static void openLoopLatency() throws Exception {
        // One worker, 100/s wanted, 30 ms per response: the schedule falls behind and
        // the queueing delay must show in the latency.
        Result r = quiet(workload("/delay/30", "RATE", "100", "DURATION_MS", "600", "CONCURRENCY", "1"));
        check(r.ok() >= 10, "completed: " + r.summary());
        check(r.latencyUs.getMinValue() >= 30_000, "min " + r.latencyUs.getMinValue());
        check(r.latencyUs.getMaxValue() > 200_000, "max " + r.latencyUs.getMaxValue()
                + ": a closed-loop measure would stay near 30 ms");
    }

    static void statuses() throws Exception {
        Result r4 = quiet(workload("/status/404", "REQUESTS", "20"));
        check(r4.ok() == 0 && r4.errors("status_4xx") == 20, r4.summary());
        Result r5 = quiet(workload("/status/503", "REQUESTS", "20"));
        check(r5.ok() == 0 && r5.errors("status_5xx") == 20 && r5.answered() == 20, r5.summary());
    }

    static void resultFile() throws Exception {
        Path dir = Files.createTempDirectory("harness-test");
        Path file = dir.resolve("result.json");
        try {
            Workload w = workload("/bytes", "REQUESTS", "50", "RESULT_PATH", file.toString());
            check(Harness.runAndReport(w, HarnessTests::jdk) == Harness.EXIT_OK, "exit 0");
            String json = Files.readString(file);
            check(json.startsWith("{\"benchgate_result\":1,\"requests\":50,\"ok\":50,"), json);
            Matcher m = Pattern.compile("\"latency_histogram\":\"([^\"]+)\"").matcher(json);
            check(m.find(), "histogram in " + json);
            Histogram h = Histogram.decodeFromCompressedByteBuffer(
                    ByteBuffer.wrap(Base64.getDecoder().decode(m.group(1))), 0);
            check(h.getTotalCount() == 50, "decoded count " + h.getTotalCount());
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }

    static void noResponse() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Workload w = workload("http://127.0.0.1:" + port + "/", "REQUESTS", "5");
        Result r = quiet(w);
        check(r.errors("connect") == 5 && r.ok() == 0, r.summary());
        check(Harness.runAndReport(w, HarnessTests::jdk) == Harness.EXIT_NO_RESPONSE, "exit 1");
    }

    static void badVariables() {
        String[][] cases = {
            {"CONCURRENCY", "x", "BENCHGATE_CONCURRENCY must be a non-negative integer, got 'x'"},
            {"RATE", "-1", "BENCHGATE_RATE must be a decimal number >= 0"},
            {"DURATION_MS", "5", "set exactly one of BENCHGATE_DURATION_MS and BENCHGATE_REQUESTS"},
            {"HTTP_VERSION", "3", "BENCHGATE_HTTP_VERSION must be 1.1 or 2"},
            {"METHOD", "PATCH", "BENCHGATE_METHOD must be one of"},
            {"URL", "", "BENCHGATE_URL is not set"},
        };
        for (String[] c : cases) {
            try {
                workload("/x", "REQUESTS", "5", c[0], c[1]);
                throw new AssertionError(c[0] + "=" + c[1] + " was accepted");
            } catch (BadWorkload e) {
                check(e.getMessage().contains(c[2]), e.getMessage());
            }
        }
    }

    static void unsupported() throws Exception {
        Workload w = workload("/bytes", "REQUESTS", "5", "HTTP_VERSION", "2");
        int code = Harness.runAndReport(w, wl -> {
            throw new Unsupported("HTTP/1.1 only");
        });
        check(code == Harness.EXIT_UNSUPPORTED, "exit " + code);
    }

    static void classify() {
        check(ErrorClasses.classify(new RuntimeException(new SocketTimeoutException())).equals("timeout"), "timeout");
        check(ErrorClasses.classify(new IOException(new ConnectException())).equals("connect"), "connect");
        check(ErrorClasses.classify(new IOException("Broken pipe")).equals("write"), "write");
        check(ErrorClasses.classify(new IOException("reset")).equals("read"), "read");
        check(ErrorClasses.classify(new RuntimeException(new RequestFailed("write", null))).equals("write"), "explicit");
        try {
            new RequestFailed("boom", null);
            throw new AssertionError("accepted an unknown class");
        } catch (IllegalArgumentException e) {
            check(e.getMessage().contains("error class must be one of"), e.getMessage());
        }
    }

    /** benchgate's side of the window loop, played by a test: commands in, lines out. */
    static final class LoopDriver {
        final java.io.PipedWriter commands = new java.io.PipedWriter();
        final java.util.concurrent.BlockingQueue<String> lines = new java.util.concurrent.LinkedBlockingQueue<>();
        final Thread client;
        final Exception[] failed = {null};

        LoopDriver(Workload w) throws IOException {
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.PipedReader(commands));
            client = new Thread(() -> {
                try {
                    WindowLoop.run(w, HarnessTests::jdk, in, lines::add);
                } catch (Exception e) {
                    failed[0] = e;
                }
            });
            client.start();
        }

        void send(String line) throws IOException {
            commands.write(line + "\n");
            commands.flush();
        }

        String next() throws InterruptedException {
            String line = lines.poll(10, java.util.concurrent.TimeUnit.SECONDS);
            check(line != null, "no line from the client within 10 s");
            return line;
        }

        void exit() throws Exception {
            send(WindowLoop.EXIT);
            client.join(10_000);
            check(!client.isAlive(), "the client exits on BENCHGATE-EXIT");
            check(failed[0] == null, "the client failed: " + failed[0]);
        }
    }

    static void windowLoop() throws Exception {
        Workload w = workload("/bytes", "DURATION_MS", "300", "WARMUP_MS", "200", "CONCURRENCY", "3");
        LoopDriver d = new LoopDriver(w);
        try {
            check(d.next().equals(WindowLoop.DECLARE), "the loop declared first");
            check(d.next().equals(WindowLoop.READY), "ready after the warmup");
            for (int k = 1; k <= 3; k++) {
                long before = SERVED.get();
                d.send("BENCHGATE-WINDOW-OPEN " + k);
                Thread.sleep(300);
                d.send("BENCHGATE-WINDOW-CLOSE " + k);
                long served = SERVED.get() - before;
                String line = d.next();
                long outer = SERVED.get() - before;
                check(line.startsWith(WindowLoop.RESULT + "{\"benchgate_result\":1,"), line);
                check(line.endsWith(",\"window\":" + k + "}"), "window " + k + ": " + line);
                Matcher m = Pattern.compile("\"requests\":(\\d+),\"ok\":(\\d+)").matcher(line);
                check(m.find(), line);
                long requests = Long.parseLong(m.group(1));
                check(requests > 30 && requests == Long.parseLong(m.group(2)), line);
                // The client counts from its reading of OPEN to that of CLOSE, which lies inside
                // the span from sending OPEN to reading the result: never more than the server
                // answered there, but for the 3 requests in flight as OPEN arrived. Each reading
                // may come late on a loaded machine, so the lower bound is loose: a window that
                // counted from the start, or nothing, still fails.
                check(requests <= outer + 3 && requests >= served / 2, "window " + k + ": the client counted "
                        + requests + ", the server " + served + " between the sends, " + outer + " up to the result");
            }
        } finally {
            d.exit();
        }
    }

    static void windowLoopPause() throws Exception {
        Workload w = workload("/bytes", "DURATION_MS", "300", "RATE", "300", "CONCURRENCY", "2");
        LoopDriver d = new LoopDriver(w);
        try {
            d.next();
            d.next();
            d.send(WindowLoop.PAUSE);
            check(d.next().equals(WindowLoop.PAUSED), "PAUSED answers PAUSE");
            long paused = SERVED.get();
            Thread.sleep(200);
            check(SERVED.get() == paused, "no request while paused: " + (SERVED.get() - paused));
            d.send("BENCHGATE-WINDOW-OPEN 1"); // resumes, then counts
            Thread.sleep(300);
            d.send("BENCHGATE-WINDOW-CLOSE 1");
            Matcher m = Pattern.compile("\"requests\":(\\d+)").matcher(d.next());
            check(m.find(), "a result");
            long requests = Long.parseLong(m.group(1));
            // The schedule starts over at the resume: about 90 at 300/s, no burst of what the pause skipped.
            check(requests >= 60 && requests <= 110, "300/s over 0.3 s after a resume: " + requests);
        } finally {
            d.exit();
        }
    }

    private HarnessTests() {}
}
