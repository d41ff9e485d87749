package dev.benchgate.harness;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One trial's workload, read from the {@code BENCHGATE_*} variables and validated
 * (docs/external-clients.md, "Environment variables"). Durations in ms, sizes in bytes.
 */
public final class Workload {
    /** The request methods benchgate sends. */
    public static final List<String> METHODS = List.of("GET", "HEAD", "POST", "PUT", "DELETE");

    /** Name for log lines and messages (the client's program name). */
    public final String name;
    /** Full target URL. */
    public final String url;
    /** Scheme, host and port of the server. */
    public final String baseUrl;
    /** Request method, upper case. */
    public final String method;
    /** Request body size; 0 = no body. */
    public final int bodyBytes;
    /** Closed loop: workers; open loop: the most requests in flight. */
    public final int concurrency;
    /** Open loop: requests per second; 0 for a closed loop. */
    public final double rate;
    /** Warmup before the measurement. */
    public final long warmupMs;
    /** Length of the measurement; 0 when {@link #requests} is set. */
    public final long durationMs;
    /** Number of measured requests; 0 when {@link #durationMs} is set. */
    public final long requests;
    /** Per-request timeout. */
    public final long timeoutMs;
    /** "1.1" or "2" (h2c prior knowledge over plain HTTP, ALPN over TLS). */
    public final String httpVersion;
    /** HTTPS with a self-signed certificate: accept it ({@link Tls#trustAll}). */
    public final boolean tls;
    /** Where the result file goes; empty: none is written. */
    public final String resultPath;

    private Workload(String name, Map<String, String> env) throws BadWorkload {
        this.name = name;
        url = text(env, "BENCHGATE_URL", "");
        if (url.isEmpty()) {
            throw new BadWorkload("BENCHGATE_URL is not set (e.g. http://127.0.0.1:8080/bytes/22)");
        }
        baseUrl = text(env, "BENCHGATE_BASE_URL", "");
        method = text(env, "BENCHGATE_METHOD", "GET").toUpperCase(Locale.ROOT);
        if (!METHODS.contains(method)) {
            throw new BadWorkload("BENCHGATE_METHOD must be one of " + METHODS + ", got '" + method + "'");
        }
        bodyBytes = (int) Math.min(count(env, "BENCHGATE_BODY_BYTES", 0), Integer.MAX_VALUE - 16);
        concurrency = (int) Math.min(count(env, "BENCHGATE_CONCURRENCY", 1), 100_000);
        if (concurrency < 1) {
            throw new BadWorkload("BENCHGATE_CONCURRENCY must be >= 1, got 0");
        }
        String rateText = text(env, "BENCHGATE_RATE", "0");
        double r;
        try {
            r = Double.parseDouble(rateText);
        } catch (NumberFormatException e) {
            r = Double.NaN;
        }
        if (!Double.isFinite(r) || r < 0) {
            throw new BadWorkload("BENCHGATE_RATE must be a decimal number >= 0 (0 = closed loop), got '"
                    + rateText + "'");
        }
        rate = r;
        warmupMs = count(env, "BENCHGATE_WARMUP_MS", 0);
        durationMs = count(env, "BENCHGATE_DURATION_MS", 0);
        requests = count(env, "BENCHGATE_REQUESTS", 0);
        if ((durationMs == 0) == (requests == 0)) {
            throw new BadWorkload("set exactly one of BENCHGATE_DURATION_MS and BENCHGATE_REQUESTS (got "
                    + durationMs + " and " + requests + ")");
        }
        timeoutMs = Math.max(1, count(env, "BENCHGATE_TIMEOUT_MS", 10_000));
        httpVersion = text(env, "BENCHGATE_HTTP_VERSION", "1.1");
        if (!httpVersion.equals("1.1") && !httpVersion.equals("2")) {
            throw new BadWorkload("BENCHGATE_HTTP_VERSION must be 1.1 or 2, got '" + httpVersion + "'");
        }
        String tlsText = text(env, "BENCHGATE_TLS", "0");
        if (!tlsText.equals("0") && !tlsText.equals("1")) {
            throw new BadWorkload("BENCHGATE_TLS must be 0 or 1, got '" + tlsText + "'");
        }
        tls = tlsText.equals("1");
        resultPath = text(env, "BENCHGATE_RESULT_PATH", "");
    }

    /** Reads and validates the variables of {@code env} (usually {@code System.getenv()}). */
    public static Workload fromEnv(String name, Map<String, String> env) throws BadWorkload {
        return new Workload(name, env);
    }

    /**
     * Reads the process's variables; on a bad one prints why on stderr and exits 2.
     * For a client's {@code main}: {@code Workload w = Workload.fromEnvOrExit("MyBench");}
     */
    public static Workload fromEnvOrExit(String name) {
        try {
            return new Workload(name, System.getenv());
        } catch (BadWorkload e) {
            System.err.println(name + ": " + e.getMessage());
            System.exit(Harness.EXIT_BAD_WORKLOAD);
            throw new IllegalStateException("unreachable");
        }
    }

    /** True for an open loop (requests start at {@link #rate} per second). */
    public boolean openLoop() {
        return rate > 0;
    }

    /** The request body: {@link #bodyBytes} bytes of 'x', or null when there is none. */
    public byte[] body() {
        if (bodyBytes == 0) {
            return null;
        }
        byte[] b = new byte[bodyBytes];
        Arrays.fill(b, (byte) 'x');
        return b;
    }

    private static String text(Map<String, String> env, String key, String dflt) {
        String v = env.get(key);
        return v == null || v.isEmpty() ? dflt : v;
    }

    private static long count(Map<String, String> env, String key, long dflt) throws BadWorkload {
        String raw = text(env, key, "");
        if (raw.isEmpty()) {
            return dflt;
        }
        if (raw.chars().allMatch(c -> c >= '0' && c <= '9') && raw.length() <= 18) {
            return Long.parseLong(raw);
        }
        throw new BadWorkload(key + " must be a non-negative integer, got '" + raw + "'");
    }
}
