package dev.benchgate.harness;

/**
 * Builds one worker's {@link Request} for a workload. Called once per worker thread,
 * on that thread, before the clock starts; the requests it returns may share one
 * thread-safe client built beforehand. Throw {@link Unsupported} for a workload the
 * client cannot run (exit code 3).
 */
@FunctionalInterface
public interface RequestFactory {
    /** Returns the request this worker sends over and over. */
    Request create(Workload workload) throws Exception;
}
