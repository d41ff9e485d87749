package dev.benchgate.harness;

/** The client cannot run this workload (open loop, HTTP/2, ...): exit code 3. */
public final class Unsupported extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param why what is not supported, and if possible what to use instead */
    public Unsupported(String why) {
        super(why);
    }
}
