package dev.benchgate.harness;

/** A {@code BENCHGATE_*} variable is missing or invalid: exit code 2. */
public final class BadWorkload extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message names the variable and what it must be */
    public BadWorkload(String message) {
        super(message);
    }
}
