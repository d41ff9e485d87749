package dev.benchgate.harness;

import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.util.List;
import javax.net.ssl.SSLHandshakeException;

/** benchgate's error classes (docs/external-clients.md) and how failures map to them. */
public final class ErrorClasses {
    /** The classes, in the order the result file lists them. */
    public static final List<String> NAMES =
            List.of("connect", "timeout", "read", "write", "status_4xx", "status_5xx");
    /** Index of {@code status_4xx} in {@link #NAMES}. */
    static final int STATUS_4XX = 4;
    /** Index of {@code status_5xx} in {@link #NAMES}. */
    static final int STATUS_5XX = 5;

    /** Position of a class in {@link #NAMES}, or -1. */
    public static int index(String name) {
        return NAMES.indexOf(name);
    }

    /** The class of an error status, or null for a success (below 400). */
    public static String ofStatus(int status) {
        if (status >= 500) {
            return "status_5xx";
        }
        return status >= 400 ? "status_4xx" : null;
    }

    /**
     * Maps a failure to an error class, looking through the cause chain: an explicit
     * {@link RequestFailed} first, then the JDK's exception types; anything else is
     * {@code read} (closed or reset mid-response, malformed response).
     */
    public static String classify(Throwable t) {
        for (Throwable e = t; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof RequestFailed) {
                return ((RequestFailed) e).errorClass();
            }
        }
        for (Throwable e = t; e != null; e = e.getCause() == e ? null : e.getCause()) {
            // SocketTimeoutException and HttpClient 5's connect and connection-request
            // timeouts are InterruptedIOExceptions.
            if (e instanceof InterruptedIOException || e instanceof HttpTimeoutException) {
                return "timeout";
            }
            if (e instanceof ConnectException || e instanceof NoRouteToHostException
                    || e instanceof UnknownHostException || e instanceof SSLHandshakeException) {
                return "connect";
            }
            String msg = e.getMessage();
            if (msg != null && msg.contains("Broken pipe")) {
                return "write";
            }
        }
        return "read";
    }

    private ErrorClasses() {}
}
