//! The `webserver` row's connection limits: how long a client may take to send a request
//! head, how long a connection may sit idle, and how many may be open at once.

use std::time::Duration;

/// Default time a client has to send a request head (10 s).
pub const DEFAULT_HEADER_READ_TIMEOUT_MS: u64 = 10_000;
/// Default time a connection with no request in flight stays open (60 s).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 60_000;
/// Default time from a request head to its answer (30 s): the body must arrive by then.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 30_000;
/// Default cap on open connections (256: well below the usual 1,024 descriptors, and far
/// above what a browser opens to one server, six per host for each of its profiles).
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// The longest timeout a row may set (one day).
const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// The limits every connection of one server lives under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionLimits {
    /// From accept, or from the first byte of a later request, to the end of its head.
    pub(crate) header_read: Duration,
    /// From the end of a response to the first byte of the next request.
    pub(crate) idle: Duration,
    /// From the end of a request head to its answer (its body read, its handler done).
    pub(crate) request: Duration,
    /// Open connections at most.
    pub(crate) max_connections: usize,
}

impl ConnectionLimits {
    /// The limits from the row's keys (`None`: the default); the error names the key and the
    /// range it takes.
    pub(crate) fn from_config(
        header_read_ms: Option<u64>,
        idle_ms: Option<u64>,
        request_ms: Option<u64>,
        max_connections: Option<usize>,
    ) -> Result<Self, String> {
        let timeout = |key: &str, value: Option<u64>, default: u64| match value {
            None => Ok(Duration::from_millis(default)),
            Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Ok(Duration::from_millis(ms)),
            Some(ms) => Err(format!(
                "webserver: {key} must be between 1 and {MAX_TIMEOUT_MS} milliseconds (got {ms})"
            )),
        };
        let max_connections = match max_connections {
            None => DEFAULT_MAX_CONNECTIONS,
            Some(0) => {
                return Err(
                    "webserver: maxConnections must be at least 1 (got 0): the server could \
                     not take a single request"
                        .to_owned(),
                );
            }
            Some(cap) => cap,
        };
        Ok(Self {
            header_read: timeout(
                "headerReadTimeoutMs",
                header_read_ms,
                DEFAULT_HEADER_READ_TIMEOUT_MS,
            )?,
            idle: timeout("idleTimeoutMs", idle_ms, DEFAULT_IDLE_TIMEOUT_MS)?,
            request: timeout("requestTimeoutMs", request_ms, DEFAULT_REQUEST_TIMEOUT_MS)?,
            max_connections,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_and_out_of_range_values_are_named() {
        assert_eq!(
            ConnectionLimits::from_config(None, None, None, None),
            Ok(ConnectionLimits {
                header_read: Duration::from_secs(10),
                idle: Duration::from_secs(60),
                request: Duration::from_secs(30),
                max_connections: 256,
            })
        );
        assert_eq!(
            ConnectionLimits::from_config(Some(0), None, None, None),
            Err(
                "webserver: headerReadTimeoutMs must be between 1 and 86400000 milliseconds \
                 (got 0)"
                    .to_owned()
            )
        );
        assert!(
            ConnectionLimits::from_config(None, Some(u64::MAX), None, None)
                .is_err_and(|error| error.contains("idleTimeoutMs"))
        );
        assert!(
            ConnectionLimits::from_config(None, None, Some(0), None)
                .is_err_and(|error| error.contains("requestTimeoutMs"))
        );
        assert!(
            ConnectionLimits::from_config(None, None, None, Some(0))
                .is_err_and(|error| error.starts_with("webserver: maxConnections must be"))
        );
    }
}
