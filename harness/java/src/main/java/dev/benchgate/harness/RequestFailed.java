package dev.benchgate.harness;

/**
 * Thrown by a {@link Request} to say which error class a failed request is in
 * (one of {@link ErrorClasses#NAMES}); wrap the original as the cause.
 */
public final class RequestFailed extends Exception {
    private static final long serialVersionUID = 1L;
    private final String errorClass;

    /**
     * @param errorClass connect, timeout, read, write, status_4xx or status_5xx
     * @param cause the failure, or null
     */
    public RequestFailed(String errorClass, Throwable cause) {
        super(errorClass, cause);
        if (ErrorClasses.index(errorClass) < 0) {
            throw new IllegalArgumentException("error class must be one of "
                    + String.join(", ", ErrorClasses.NAMES) + ", got '" + errorClass + "'");
        }
        this.errorClass = errorClass;
    }

    /** The error class this failure is counted in. */
    public String errorClass() {
        return errorClass;
    }
}
