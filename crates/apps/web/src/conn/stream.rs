//! An accepted socket that enforces its connection's deadlines: while the server waits for
//! a request (a head not finished, or an idle keep-alive), a read that outlives the deadline
//! fails, and the HTTP connection ends and closes the socket. Reads and writes otherwise
//! pass straight through.

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::connection::{Connection, Expiry};
use super::limits::ConnectionLimits;
use super::listener::Slot;

/// A socket of the server, with its connection's state and its place under the cap.
#[derive(Debug)]
pub(crate) struct GuardedStream {
    inner: TcpStream,
    connection: Arc<Connection>,
    limits: ConnectionLimits,
    /// Fires at the current deadline (reset whenever the deadline moves).
    timer: Pin<Box<Sleep>>,
    /// Frees the place under the cap when the socket closes.
    _slot: Slot,
}

impl GuardedStream {
    /// Wraps a socket accepted at `slot`'s connection's start.
    pub(crate) fn new(inner: TcpStream, slot: Slot, limits: ConnectionLimits) -> Self {
        let connection = slot.connection();
        let first = connection
            .deadline(&limits)
            .map_or_else(Instant::now, |(deadline, _)| deadline);
        Self {
            inner,
            connection,
            limits,
            timer: Box::pin(tokio::time::sleep_until(first)),
            _slot: slot,
        }
    }

    /// The connection's shared state.
    pub(crate) fn connection(&self) -> Arc<Connection> {
        Arc::clone(&self.connection)
    }

    /// With no data to read: fails once the connection must close, else waits for data, the
    /// deadline, or an eviction.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Parked first, so an eviction or a new deadline after the checks below wakes us.
        self.connection.park_reader(cx.waker());
        if self.connection.must_close() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room for a new connection (maxConnections)",
            )));
        }
        let Some((deadline, expiry)) = self.connection.deadline(&self.limits) else {
            return Poll::Pending;
        };
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        match self.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                match expiry {
                    Expiry::HeaderRead => "no complete request head within headerReadTimeoutMs",
                    Expiry::Idle => "no request within idleTimeoutMs",
                    Expiry::Request => "no complete request within requestTimeoutMs",
                },
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.connection.received(Instant::now());
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => this.poll_deadline(cx),
        }
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
