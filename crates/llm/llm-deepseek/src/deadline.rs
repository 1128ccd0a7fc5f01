//! The time bounds of one request attempt, and the `TIMEOUT` failure of each.
//!
//! Three bounds come from the row config. The response headers must arrive within
//! `headersTimeoutMs` of the attempt's start (connecting and sending the request included).
//! Every wait for the next data event may last `streamIdleTimeoutMs`: the wait for headers is
//! one, and each read of the stream is one, re-armed only by a `data:` event (comments and
//! blank keep-alive lines are not data). The whole attempt, to the stream's last byte, must end
//! within `requestTimeoutMs` of its start. A wait ends at the earliest bound that applies to
//! it, and the failure names that bound.

use std::time::Duration;

use dsh_llm::{LlmFailure, codes};
use tokio::time::Instant;

use crate::config::{DeepSeekConfig, MAX_TIMEOUT_MS};

/// The bound that ends a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// `headersTimeoutMs`: the response headers are late.
    Headers,
    /// `streamIdleTimeoutMs`: no data event came in time.
    Idle,
    /// `requestTimeoutMs`: the attempt as a whole took too long.
    Request,
}

/// The three timeouts of a configuration, each checked to be in range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeouts {
    headers: Duration,
    idle: Duration,
    request: Duration,
}

impl Timeouts {
    /// The timeouts of `config`; `INVALID_ADAPTER` names a key outside 1 to
    /// [`MAX_TIMEOUT_MS`].
    pub(crate) fn from_config(config: &DeepSeekConfig) -> Result<Self, LlmFailure> {
        Ok(Self {
            headers: checked("headersTimeoutMs", config.headers_timeout_ms())?,
            idle: checked("streamIdleTimeoutMs", config.stream_idle_timeout_ms())?,
            request: checked("requestTimeoutMs", config.request_timeout_ms())?,
        })
    }

    /// The clock of an attempt starting now.
    pub(crate) fn start(self) -> AttemptClock {
        let now = Instant::now();
        AttemptClock {
            timeouts: self,
            headers_at: now + self.headers,
            request_at: now + self.request,
        }
    }

    fn length(self, bound: Bound) -> Duration {
        match bound {
            Bound::Headers => self.headers,
            Bound::Idle => self.idle,
            Bound::Request => self.request,
        }
    }
}

fn checked(key: &str, ms: u64) -> Result<Duration, LlmFailure> {
    if (1..=MAX_TIMEOUT_MS).contains(&ms) {
        Ok(Duration::from_millis(ms))
    } else {
        Err(LlmFailure::new(
            codes::INVALID_ADAPTER,
            format!(
                "llm-deepseek.{key} must be a whole number of milliseconds from 1 to \
                 {MAX_TIMEOUT_MS}, got {ms}"
            ),
        ))
    }
}

/// The fixed deadlines of one attempt.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptClock {
    timeouts: Timeouts,
    headers_at: Instant,
    request_at: Instant,
}

impl AttemptClock {
    /// The deadline of a wait for the response headers starting now.
    pub(crate) fn headers(&self) -> Deadline {
        self.earliest(&[
            (self.headers_at, Bound::Headers),
            (Instant::now() + self.timeouts.idle, Bound::Idle),
            (self.request_at, Bound::Request),
        ])
    }

    /// The deadline of a wait for data starting now (a read of the stream or an error body).
    pub(crate) fn data(&self) -> Deadline {
        self.earliest(&[
            (Instant::now() + self.timeouts.idle, Bound::Idle),
            (self.request_at, Bound::Request),
        ])
    }

    /// The first of `candidates` to expire; on a tie, the first listed.
    fn earliest(&self, candidates: &[(Instant, Bound)]) -> Deadline {
        let (at, bound) = candidates
            .iter()
            .copied()
            .min_by_key(|(at, _)| *at)
            .unwrap_or((self.request_at, Bound::Request));
        Deadline {
            at,
            bound,
            length: self.timeouts.length(bound),
        }
    }
}

/// When a wait must end, and which bound that is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    /// The instant the wait fails.
    pub(crate) at: Instant,
    /// The bound that sets it.
    pub(crate) bound: Bound,
    length: Duration,
}

impl Deadline {
    /// The `TIMEOUT` failure of this deadline passing; the idle text is dsh's.
    pub(crate) fn failure(&self) -> LlmFailure {
        let ms = self.length.as_millis();
        let message = match self.bound {
            Bound::Headers => format!("DeepSeek response headers timeout after {ms}ms"),
            Bound::Idle => format!("DeepSeek stream idle timeout after {ms}ms"),
            Bound::Request => format!("DeepSeek request timeout after {ms}ms"),
        };
        LlmFailure::new(codes::TIMEOUT, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts(headers: u64, idle: u64, request: u64) -> Timeouts {
        Timeouts::from_config(&DeepSeekConfig {
            headers_timeout_ms: Some(headers),
            stream_idle_timeout_ms: Some(idle),
            request_timeout_ms: Some(request),
            ..DeepSeekConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn the_defaults_are_one_minute_five_minutes_and_half_an_hour() {
        let clock = Timeouts::from_config(&DeepSeekConfig::default())
            .unwrap()
            .start();
        assert_eq!(
            clock.headers().failure().message,
            "DeepSeek response headers timeout after 60000ms"
        );
        assert_eq!(
            clock.data().failure().message,
            "DeepSeek stream idle timeout after 300000ms"
        );
        assert_eq!(
            clock.request_at - clock.headers_at,
            Duration::from_secs(1740)
        );
    }

    #[test]
    fn the_earliest_bound_wins_and_the_headers_bound_ends_at_the_headers() {
        let clock = timeouts(100, 200, 300).start();
        assert_eq!(clock.headers().bound, Bound::Headers);
        assert_eq!(clock.data().bound, Bound::Idle);
        let clock = timeouts(300, 200, 100).start();
        assert_eq!(clock.headers().bound, Bound::Request);
        assert_eq!(clock.data().bound, Bound::Request);
        let clock = timeouts(300, 100, 200).start();
        assert_eq!(clock.headers().bound, Bound::Idle);
        let failure = timeouts(300, 300, 300).start().headers().failure();
        assert_eq!(
            (failure.code.as_str(), failure.message.as_str()),
            ("TIMEOUT", "DeepSeek response headers timeout after 300ms")
        );
        let failure = clock.data().failure();
        assert_eq!(failure.message, "DeepSeek stream idle timeout after 100ms");
        let failure = timeouts(300, 300, 250).start().data().failure();
        assert_eq!(failure.message, "DeepSeek request timeout after 250ms");
    }

    #[test]
    fn out_of_range_timeouts_are_refused_by_key() {
        let config = DeepSeekConfig {
            request_timeout_ms: Some(0),
            ..DeepSeekConfig::default()
        };
        let failure = Timeouts::from_config(&config).unwrap_err();
        assert_eq!(failure.code, "INVALID_ADAPTER");
        assert_eq!(
            failure.message,
            "llm-deepseek.requestTimeoutMs must be a whole number of milliseconds from 1 to \
             2147483647, got 0"
        );
        assert_eq!(
            timeouts(1, MAX_TIMEOUT_MS, 1).length(Bound::Idle),
            Duration::from_millis(MAX_TIMEOUT_MS)
        );
    }
}
