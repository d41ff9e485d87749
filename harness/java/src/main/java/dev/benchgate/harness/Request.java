package dev.benchgate.harness;

/**
 * Sends one HTTP request on the calling worker thread, reads the whole response body
 * and returns the status code. A failure is an exception: {@link RequestFailed} names
 * its error class, anything else is classified by {@link ErrorClasses#classify}.
 */
@FunctionalInterface
public interface Request {
    /** Sends the request; returns the HTTP status after reading the whole body. */
    int send() throws Exception;
}
