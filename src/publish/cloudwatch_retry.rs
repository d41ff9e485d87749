//! Which CloudWatch (AWS) errors to retry: throttling and transient service
//! faults, by error code and HTTP status. How long to wait is [`RetryPolicy`]'s.
//!
//! [`RetryPolicy`]: crate::retry::RetryPolicy

/// Whether a failed request may succeed when sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Throttled: the service asked to slow down.
    Throttled,
    /// A transient failure: 5xx, a timeout, a broken connection.
    Transient,
    /// Sending it again will not help (bad request, access denied, ...).
    Never,
}

/// AWS error codes that mean "slow down" (the SDKs' common list).
const THROTTLING_CODES: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
];

/// AWS error codes for transient service-side faults.
const TRANSIENT_CODES: &[&str] = &[
    "InternalFailure",
    "InternalServiceError",
    "InternalError",
    "ServiceUnavailable",
    "RequestTimeout",
    "RequestTimeoutException",
];

/// Classifies a service's answer by its error code and HTTP status.
pub fn classify(code: Option<&str>, status: Option<u16>) -> Retry {
    if code.is_some_and(|c| THROTTLING_CODES.contains(&c)) || status == Some(429) {
        Retry::Throttled
    } else if code.is_some_and(|c| TRANSIENT_CODES.contains(&c))
        || status.is_some_and(|s| (500..=599).contains(&s) && s != 501)
    {
        Retry::Transient
    } else {
        Retry::Never
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_and_server_faults_are_retried_client_errors_not() {
        assert_eq!(classify(Some("Throttling"), Some(400)), Retry::Throttled);
        assert_eq!(classify(None, Some(429)), Retry::Throttled);
        assert_eq!(
            classify(Some("InternalFailure"), Some(500)),
            Retry::Transient
        );
        assert_eq!(classify(None, Some(503)), Retry::Transient);
        assert_eq!(classify(None, Some(501)), Retry::Never);
        assert_eq!(classify(Some("AccessDenied"), Some(403)), Retry::Never);
        assert_eq!(
            classify(Some("InvalidParameterValue"), Some(400)),
            Retry::Never
        );
    }
}
