package dev.benchgate.harness;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** The measured window's figures, and the result file benchgate reads. */
public final class Result {
    /** Successful requests' latency in µs, from the (intended) start to the end of the body. */
    public final Histogram latencyUs;
    /** Failed requests per class, in the order of {@link ErrorClasses#NAMES}. */
    public final long[] errors;
    /** Length of the measured window. */
    public final double elapsedS;
    /** Requests that completed after the window closed (duration mode): in no figure. */
    public final long inFlightAtDeadline;
    /** Requests sent after the window's end, in the tail that keeps the load on: in no figure. */
    public final long sentAfterWindow;

    Result(Histogram latencyUs, long[] errors, double elapsedS, long inFlightAtDeadline, long sentAfterWindow) {
        this.latencyUs = latencyUs;
        this.errors = errors;
        this.elapsedS = elapsedS;
        this.inFlightAtDeadline = inFlightAtDeadline;
        this.sentAfterWindow = sentAfterWindow;
    }

    /** Successful requests. */
    public long ok() {
        return latencyUs.getTotalCount();
    }

    /** Requests completed in the window: {@link #ok} plus every error. */
    public long requests() {
        return ok() + Arrays.stream(errors).sum();
    }

    /** Errors of one class ({@link ErrorClasses#NAMES}). */
    public long errors(String errorClass) {
        return errors[ErrorClasses.index(errorClass)];
    }

    /** Measured requests that got an HTTP response (a success or an error status). */
    public long answered() {
        return ok() + errors[ErrorClasses.STATUS_4XX] + errors[ErrorClasses.STATUS_5XX];
    }

    /** The result file's JSON, latency as {@code latency_histogram} (V2 compressed, base64). */
    public String toJson() {
        return toJson(0);
    }

    /** {@link #toJson}, with {@code "window": k} when {@code k > 0} (the window loop's record). */
    public String toJson(long window) {
        // The compressed form is normally far smaller; the slack covers incompressible input.
        ByteBuffer buf = ByteBuffer.allocate(latencyUs.getNeededByteBufferCapacity() * 2 + 1024);
        int len = latencyUs.encodeIntoCompressedByteBuffer(buf);
        String b64 = Base64.getEncoder().encodeToString(Arrays.copyOf(buf.array(), len));
        StringBuilder json = new StringBuilder();
        json.append("{\"benchgate_result\":1,\"requests\":").append(requests()).append(",\"ok\":").append(ok());
        json.append(",\"errors\":{");
        for (int i = 0; i < errors.length; i++) {
            json.append(i == 0 ? "" : ",").append('"').append(ErrorClasses.NAMES.get(i)).append("\":")
                    .append(errors[i]);
        }
        json.append("},\"elapsed_s\":").append(String.format(Locale.ROOT, "%.6f", elapsedS));
        json.append(",\"latency_histogram\":\"").append(b64).append('"');
        if (window > 0) {
            json.append(",\"window\":").append(window);
        }
        json.append("}\n");
        return json.toString();
    }

    /** Writes {@link #toJson} to {@code path} atomically: a temporary file, then a rename. */
    public void write(Path path) throws IOException {
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        Files.write(tmp, toJson().getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The line the interop test compares with benchgate's decoding of the histogram. */
    public String hdrLine() {
        return String.format(Locale.ROOT, "HDR count=%d min=%d max=%d p99=%d", latencyUs.getTotalCount(),
                latencyUs.getMinValue(), latencyUs.getMaxValue(), latencyUs.getValueAtPercentile(99.0));
    }

    /** One log line: the counts and the window. */
    public String summary() {
        StringBuilder errs = new StringBuilder();
        for (int i = 0; i < errors.length; i++) {
            errs.append(i == 0 ? "" : " ").append(ErrorClasses.NAMES.get(i)).append('=').append(errors[i]);
        }
        return String.format(Locale.ROOT, "requests=%d ok=%d errors{%s} elapsed_s=%.3f in_flight_at_deadline=%d sent_after_window=%d",
                requests(), ok(), errs, elapsedS, inFlightAtDeadline, sentAfterWindow);
    }
}
