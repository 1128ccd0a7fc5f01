//! The accept loop's side of the cap: each socket takes a place among at most
//! `maxConnections`; a socket over the cap closes the connection that has waited longest
//! with no request in flight (an idle keep-alive, or a client still dribbling its head) and
//! takes its place, or is closed at once when every connection is busy.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::serve::Listener;
use dsh_kernel::sync::lock;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::connection::Connection;
use super::limits::ConnectionLimits;
use super::stream::GuardedStream;

/// How long a new socket waits for the connection it evicted to close.
const EVICTION_WAIT: Duration = Duration::from_millis(250);

/// The bound listener, handing out sockets that live under the limits.
#[derive(Debug)]
pub(crate) struct GuardedListener {
    inner: TcpListener,
    limits: ConnectionLimits,
    admission: Arc<Admission>,
}

impl GuardedListener {
    /// Serves `inner`'s connections under `limits`.
    pub(crate) fn new(inner: TcpListener, limits: ConnectionLimits) -> Self {
        Self {
            inner,
            limits,
            admission: Arc::new(Admission {
                places: Arc::new(Semaphore::new(limits.max_connections)),
                open: Mutex::default(),
            }),
        }
    }
}

impl Listener for GuardedListener {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        loop {
            // axum's accept retries on its own (and backs off when out of descriptors).
            let (socket, addr) = <TcpListener as Listener>::accept(&mut self.inner).await;
            if let Some(slot) = self.admission.admit().await {
                return (GuardedStream::new(socket, slot, self.limits), addr);
            }
            tracing::debug!(
                "webserver: closed a connection from {addr}: all {} connections are busy \
                 (maxConnections)",
                self.limits.max_connections
            );
            drop(socket);
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// The open connections and the places left.
#[derive(Debug)]
struct Admission {
    places: Arc<Semaphore>,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    next_id: u64,
    connections: HashMap<u64, Arc<Connection>>,
}

impl Admission {
    fn open(&self) -> MutexGuard<'_, Open> {
        lock(&self.open)
    }

    /// A place for a new socket: a free one, else the one an evicted connection gives up;
    /// `None` when every connection is busy.
    async fn admit(self: &Arc<Self>) -> Option<Slot> {
        if let Ok(permit) = Arc::clone(&self.places).try_acquire_owned() {
            return Some(self.seat(permit));
        }
        if !self.evict_longest_waiting() {
            return None;
        }
        match tokio::time::timeout(EVICTION_WAIT, Arc::clone(&self.places).acquire_owned()).await {
            Ok(Ok(permit)) => Some(self.seat(permit)),
            // It went busy before it saw the eviction (or the semaphore closed).
            Ok(Err(_)) | Err(_) => None,
        }
    }

    fn seat(self: &Arc<Self>, permit: OwnedSemaphorePermit) -> Slot {
        let connection = Arc::new(Connection::accepted(Instant::now()));
        let mut open = self.open();
        open.next_id += 1;
        let id = open.next_id;
        open.connections.insert(id, Arc::clone(&connection));
        Slot {
            id,
            connection,
            admission: Arc::clone(self),
            _permit: permit,
        }
    }

    /// Evicts the connection that has waited longest with no request in flight; whether
    /// there was one.
    fn evict_longest_waiting(&self) -> bool {
        let open = self.open();
        let longest = open
            .connections
            .values()
            .filter(|connection| !connection.evicted())
            .filter_map(|connection| Some((connection.waiting_since()?, connection)))
            .min_by_key(|(since, _)| *since);
        match longest {
            Some((_, connection)) => {
                connection.evict();
                true
            }
            None => false,
        }
    }
}

/// A socket's place under the cap; given back when the socket closes.
#[derive(Debug)]
pub(crate) struct Slot {
    id: u64,
    connection: Arc<Connection>,
    admission: Arc<Admission>,
    _permit: OwnedSemaphorePermit,
}

impl Slot {
    /// The connection that holds this place.
    pub(crate) fn connection(&self) -> Arc<Connection> {
        Arc::clone(&self.connection)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.admission.open().connections.remove(&self.id);
    }
}
