//! Every SQL statement the backend runs. All are static text: values are always bound as
//! parameters and no SQL is assembled at run time.

/// dsh 0.1's schema 17, byte for byte: `sqlite_schema` keeps this text, so a database we
/// create shows the same schema as one dsh created.
pub(crate) const SCHEMA: &str = include_str!("sql/schema.sql");

/// The schema version this backend reads and writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 17;

/// `PRAGMA application_id` of a dsh session database: ASCII "DSHP".
pub const APPLICATION_ID: i64 = 0x4453_4850;

pub(crate) const SET_APPLICATION_ID: &str = "PRAGMA application_id = 1146308688";
pub(crate) const SET_USER_VERSION: &str = "PRAGMA user_version = 17";
pub(crate) const TRUSTED_SCHEMA_OFF: &str = "PRAGMA trusted_schema = OFF";
pub(crate) const MMAP_OFF: &str = "PRAGMA mmap_size = 0";
pub(crate) const FOREIGN_KEYS_ON: &str = "PRAGMA foreign_keys = ON";
pub(crate) const SYNCHRONOUS_FULL: &str = "PRAGMA synchronous = FULL";
pub(crate) const TRUSTED_SCHEMA: &str = "PRAGMA trusted_schema";
pub(crate) const MMAP_SIZE: &str = "PRAGMA mmap_size";
pub(crate) const SYNCHRONOUS: &str = "PRAGMA synchronous";
pub(crate) const USER_VERSION: &str = "PRAGMA user_version";
pub(crate) const APPLICATION_ID_PRAGMA: &str = "PRAGMA application_id";
/// Changes whenever any connection changes the schema.
pub(crate) const SCHEMA_COOKIE: &str = "PRAGMA schema_version";
/// Changes when another connection commits (never for this connection's own commits).
pub(crate) const DATA_VERSION: &str = "PRAGMA data_version";

pub(crate) const BEGIN: &str = "BEGIN";
pub(crate) const BEGIN_IMMEDIATE: &str = "BEGIN IMMEDIATE";
pub(crate) const COMMIT: &str = "COMMIT";
pub(crate) const ROLLBACK: &str = "ROLLBACK";

pub(crate) const USER_OBJECT_COUNT: &str =
    "SELECT COUNT(*) FROM sqlite_schema WHERE name NOT GLOB 'sqlite_*'";
pub(crate) const SCHEMA_OBJECTS: &str = "SELECT type, name, tbl_name, sql FROM sqlite_schema \
     WHERE name NOT GLOB 'sqlite_*' ORDER BY type, name";

pub(crate) const INSERT_STORE_ID: &str =
    "INSERT INTO persistence_state (singleton, store_id) VALUES (1, ?1)";
pub(crate) const SELECT_STORE_ID: &str =
    "SELECT store_id FROM persistence_state WHERE singleton = 1";

pub(crate) const SELECT_SESSION: &str = "SELECT id, version, created_at, cwd, parent_session, \
     seed_length, origin, delegation_depth, agent_preset, incarnation, revision \
     FROM sessions WHERE id = ?1";
pub(crate) const SELECT_SESSIONS: &str = "SELECT id, version, created_at, cwd, parent_session, \
     seed_length, origin, delegation_depth, agent_preset, incarnation, revision FROM sessions";
pub(crate) const UPSERT_SESSION: &str = "INSERT INTO sessions \
     (id, version, created_at, cwd, parent_session, seed_length, origin, delegation_depth, \
     agent_preset, incarnation, revision) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0) \
     ON CONFLICT(id) DO UPDATE SET version = excluded.version, \
     created_at = excluded.created_at, cwd = excluded.cwd, \
     parent_session = excluded.parent_session, seed_length = excluded.seed_length, \
     origin = excluded.origin, delegation_depth = excluded.delegation_depth, \
     agent_preset = excluded.agent_preset";
pub(crate) const BUMP_REVISION: &str = "UPDATE sessions SET revision = revision + 1 WHERE id = ?1";

pub(crate) const SELECT_EVENTS: &str = "SELECT seq, type, time, data, source_event_seqs, \
     surface_op, ignorable FROM events WHERE session_id = ?1 ORDER BY seq";
pub(crate) const SELECT_EVENTS_FROM: &str = "SELECT seq, type, time, data, source_event_seqs, \
     surface_op, ignorable FROM events WHERE session_id = ?1 AND seq >= ?2 ORDER BY seq";
pub(crate) const SELECT_TAIL_EVENTS: &str = "SELECT seq, type, time, data, source_event_seqs, \
     surface_op, ignorable FROM events WHERE session_id = ?1 ORDER BY seq DESC LIMIT 2";
/// The row just before seq `?2`: a packed row there may reach `?2`.
pub(crate) const SELECT_ROW_BEFORE: &str = "SELECT seq, type, time, data, source_event_seqs, \
     surface_op, ignorable FROM events WHERE session_id = ?1 AND seq < ?2 \
     ORDER BY seq DESC LIMIT 1";
pub(crate) const INSERT_EVENT: &str = "INSERT INTO events \
     (session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
pub(crate) const DELETE_EVENTS_FROM: &str =
    "DELETE FROM events WHERE session_id = ?1 AND seq >= ?2";
