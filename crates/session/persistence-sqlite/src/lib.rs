//! dsh session logs in one SQLite database, exactly as dsh 0.1 stores them (schema 17).
//!
//! The opt-in alternative to the JSONL backend, behind the same
//! [`dsh_persistence::SessionPersistence`] seam: switch a profile to it with one patch
//! (`profiles/examples/sqlite.patch.yml`). Three STRICT tables (`persistence_state`,
//! `sessions`, `events`), `application_id` `0x44534850` ("DSHP") and `user_version` 17; a
//! database dsh 0.1 wrote opens here and ours opens there.
//!
//! - Each append is one `BEGIN IMMEDIATE` transaction that re-checks the schema, checks that
//!   the batch starts where the stored log ends (so a stale writer is refused), inserts rows
//!   and bumps the session's revision. Rows are never rewritten.
//! - Runs of streamed deltas are packed into rows of 3 to 1,024 members ([`packing`]); data of
//!   4 KiB and more is zstd-compressed when that is smaller ([`data_column`]); provenance seqs
//!   are varints ([`varint`]).
//! - A damaged row after the last `turn/end` is a torn tail, cut on the next load; before it,
//!   corruption, reported with the seq and the database path.
//! - A database of another application, of another schema version, or with altered tables is
//!   refused and left untouched: nothing is ever migrated.

mod backend;
pub mod data_column;
pub mod packing;
pub mod path_checks;
mod plugin;
mod rows;
mod scan;
mod schema;
mod session_row;
mod sql;
mod store;
mod tail_cache;
pub mod varint;

pub use backend::SqliteBackend;
pub use path_checks::DatabasePath;
pub use plugin::{
    DEFAULT_BUSY_TIMEOUT_MS, MAX_BUSY_TIMEOUT_MS, PLUGIN_NAME, SqliteConfig,
    SqlitePersistencePlugin,
};
pub use schema::JournalMode;
pub use sql::{APPLICATION_ID, SCHEMA_VERSION};
pub use store::SqliteOptions;
