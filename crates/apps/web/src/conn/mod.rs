//! Connection hygiene: what keeps idle, slow and numerous clients from starving the server
//! of descriptors.
//!
//! - Every accepted socket is tracked ([`connection::Connection`]): it must finish a request
//!   head within the header-read timeout (counted from its accept, or from the first byte
//!   of a later request, and never extended by more bytes, so a slowloris client is
//!   dropped), and a connection with no request in flight is closed after the idle timeout.
//!   A request is in flight from its head until its response has been handed over, or, for
//!   a streamed response (an event stream), for as long as the stream lives.
//! - At most `maxConnections` sockets are open at once ([`listener::GuardedListener`]): a
//!   new one over the cap closes the connection that has waited longest with no request in
//!   flight, or, when every connection is busy, is closed at once.

pub(crate) mod body;
pub(crate) mod connection;
pub(crate) mod limits;
pub(crate) mod listener;
pub(crate) mod stream;

pub(crate) use body::track_response;
pub(crate) use connection::ConnHandle;
pub(crate) use limits::ConnectionLimits;
pub(crate) use listener::GuardedListener;
