//! One accepted connection's state: reading a request head, idle between requests, or busy
//! with requests in flight; and the deadline each state sets.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use dsh_kernel::sync::lock;
use futures_util::task::AtomicWaker;
use tokio::time::Instant;

use super::limits::ConnectionLimits;
use super::listener::GuardedListener;

/// Where a connection is between its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for a request head to end: since the accept, or since the first byte that
    /// followed an idle spell.
    Head { since: Instant },
    /// No request in flight and nothing received since the last response ended.
    Idle { since: Instant },
    /// `requests` in flight; `unanswered` since when the newest one has waited for its
    /// answer (its body, its handler), `None` once it was answered (a streamed answer may
    /// then last as long as it likes).
    Busy {
        requests: usize,
        unanswered: Option<Instant>,
    },
}

/// Why a connection's deadline closes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// The request head did not arrive in time.
    HeaderRead,
    /// Nothing was asked for in time after the last response.
    Idle,
    /// A request was not answered in time (a body that never arrives).
    Request,
}

/// A connection's shared state: the stream reading it, the requests it carries, and the
/// listener that may evict it.
#[derive(Debug)]
pub(crate) struct Connection {
    phase: Mutex<Phase>,
    evicted: AtomicBool,
    /// The task reading the socket, woken when a deadline starts or the connection is evicted.
    reader: AtomicWaker,
}

impl Connection {
    /// A connection accepted at `now`: its head is due.
    pub(crate) fn accepted(now: Instant) -> Self {
        Self {
            phase: Mutex::new(Phase::Head { since: now }),
            evicted: AtomicBool::new(false),
            reader: AtomicWaker::new(),
        }
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        lock(&self.phase)
    }

    /// Bytes arrived at `now`: after an idle spell they start the next request's head.
    pub(crate) fn received(&self, now: Instant) {
        let mut phase = self.phase();
        if matches!(*phase, Phase::Idle { .. }) {
            *phase = Phase::Head { since: now };
        }
    }

    /// A request head was read: the connection is busy until the returned guard drops.
    pub(crate) fn start_request(self: &Arc<Self>) -> InFlight {
        {
            let mut phase = self.phase();
            let now = Some(Instant::now());
            *phase = match *phase {
                Phase::Busy { requests, .. } => Phase::Busy {
                    requests: requests.saturating_add(1),
                    unanswered: now,
                },
                Phase::Head { .. } | Phase::Idle { .. } => Phase::Busy {
                    requests: 1,
                    unanswered: now,
                },
            };
        }
        // The reader may be parked on a read with no deadline: let it arm the request's.
        self.reader.wake();
        InFlight(Arc::clone(self))
    }

    fn answered(&self) {
        if let Phase::Busy { unanswered, .. } = &mut *self.phase() {
            *unanswered = None;
        }
    }

    fn finish_request(&self, now: Instant) {
        let idle = {
            let mut phase = self.phase();
            match *phase {
                Phase::Busy {
                    requests,
                    unanswered,
                } if requests > 1 => {
                    *phase = Phase::Busy {
                        requests: requests - 1,
                        unanswered,
                    };
                    false
                }
                _ => {
                    *phase = Phase::Idle { since: now };
                    true
                }
            }
        };
        if idle {
            // The reader may be parked on a read with no deadline: let it arm the idle one.
            self.reader.wake();
        }
    }

    /// When the connection must be closed and why; `None` while its requests are answered
    /// and their answers are still being sent.
    pub(crate) fn deadline(&self, limits: &ConnectionLimits) -> Option<(Instant, Expiry)> {
        match *self.phase() {
            Phase::Head { since } => Some((since + limits.header_read, Expiry::HeaderRead)),
            Phase::Idle { since } => Some((since + limits.idle, Expiry::Idle)),
            Phase::Busy {
                unanswered: Some(since),
                ..
            } => Some((since + limits.request, Expiry::Request)),
            Phase::Busy { .. } => None,
        }
    }

    /// Since when it has been waiting with no request in flight; `None` when busy.
    pub(crate) fn waiting_since(&self) -> Option<Instant> {
        match *self.phase() {
            Phase::Head { since } | Phase::Idle { since } => Some(since),
            Phase::Busy { .. } => None,
        }
    }

    /// Asks the connection to close (unless a request has started meanwhile).
    pub(crate) fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.reader.wake();
    }

    /// Whether it was asked to close.
    pub(crate) fn evicted(&self) -> bool {
        self.evicted.load(Ordering::Acquire)
    }

    /// Whether it was evicted and has no request in flight, so it should close now.
    pub(crate) fn must_close(&self) -> bool {
        self.evicted() && self.waiting_since().is_some()
    }

    /// Remembers the task reading the socket.
    pub(crate) fn park_reader(&self, waker: &Waker) {
        self.reader.register(waker);
    }
}

/// One request in flight on a connection; the connection is busy while any lives.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Connection>);

impl InFlight {
    /// The request was answered: its body was read and its handler is done.
    pub(crate) fn answered(&self) {
        self.0.answered();
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.finish_request(Instant::now());
    }
}

/// The connection a request came on, as a request extension (through axum's `ConnectInfo`).
#[derive(Debug, Clone)]
pub(crate) struct ConnHandle(pub(crate) Arc<Connection>);

impl Connected<IncomingStream<'_, GuardedListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, GuardedListener>) -> Self {
        Self(stream.io().connection())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const LIMITS: ConnectionLimits = ConnectionLimits {
        header_read: Duration::from_secs(10),
        idle: Duration::from_secs(60),
        request: Duration::from_secs(30),
        max_connections: 4,
    };

    #[test]
    fn deadlines_follow_the_phase_and_bytes_never_extend_a_head() {
        let start = Instant::now();
        let connection = Arc::new(Connection::accepted(start));
        let head = Some((start + LIMITS.header_read, Expiry::HeaderRead));
        assert_eq!(connection.deadline(&LIMITS), head);
        connection.received(start + Duration::from_secs(5));
        assert_eq!(
            connection.deadline(&LIMITS),
            head,
            "a slow head keeps its deadline"
        );

        let first = connection.start_request();
        let second = connection.start_request();
        assert!(
            matches!(connection.deadline(&LIMITS), Some((_, Expiry::Request))),
            "an unanswered request must be answered in time"
        );
        second.answered();
        assert_eq!(connection.deadline(&LIMITS), None, "answered: no deadline");
        assert_eq!(connection.waiting_since(), None);
        drop(first);
        assert_eq!(
            connection.deadline(&LIMITS),
            None,
            "one request still in flight"
        );
        drop(second);
        let idle = connection.deadline(&LIMITS);
        assert!(
            matches!(idle, Some((until, Expiry::Idle)) if until >= start + LIMITS.idle),
            "idle once the last request ended: {idle:?}"
        );

        let later = Instant::now() + Duration::from_secs(1);
        connection.received(later);
        assert_eq!(
            connection.deadline(&LIMITS),
            Some((later + LIMITS.header_read, Expiry::HeaderRead)),
            "a byte after an idle spell starts the next head"
        );
    }

    #[test]
    fn an_evicted_connection_closes_only_when_nothing_is_in_flight() {
        let connection = Arc::new(Connection::accepted(Instant::now()));
        let request = connection.start_request();
        connection.evict();
        assert!(
            !connection.must_close(),
            "a busy connection finishes its request"
        );
        drop(request);
        assert!(connection.must_close());
    }
}
