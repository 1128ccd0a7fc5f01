//! The dsh session log: the only truth of what a model saw.
//!
//! A [`Session`] is an append-only list of [`SessionEvent`]s with contiguous `seq`s. Three event
//! types make up the *surface* the model sees (`user/message`, `assistant/message`,
//! `tool/result`); [`Session::derive_messages`] folds it into the model's messages. Core events
//! have typed views in [`vocab`]; plugin events stay opaque JSON and round-trip untouched.
//! Live sessions are held by the [`SessionStore`] service, which publishes every append on
//! `session/event` for persistence.
//!
//! The format is dsh 0.1's, byte for byte: [`dsh_protocol::json`] prints JSON the way JavaScript
//! does. How a log is stored (packed chunk rows, the line decoder, legacy upgrades, the log
//! file) is `dsh-persistence`'s business.

pub mod data;
pub mod derive;
pub mod event;
pub mod fields;
pub mod header;
pub mod invariant;
mod js_values;
pub mod plugin;
pub mod repair;
pub mod seed;
pub mod session;
pub mod store;
pub mod surface;
pub mod vocab;

pub use data::EventData;
pub use derive::DerivedMessage;
pub use event::{Canonical, SessionEvent, SurfaceKeyOrder, SurfaceOp};
pub use header::{SESSION_FORMAT_VERSION, SessionHeader};
pub use plugin::{PLUGIN_NAME, SessionPlugin};
pub use session::{Session, SessionError, SurfaceIntent, validate_log};
pub use store::{
    CreateOptions, EventNotice, LiveSession, SESSIONS, SessionCreated, SessionDisposed,
    SessionEventAppended, SessionFlush, SessionStore, StoreError,
};
