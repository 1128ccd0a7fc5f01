//! A `sessions` row: the header columns, the incarnation and the revision counter.

use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_session::header::{SessionOrigin, version_refusal};
use dsh_session::{SESSION_FORMAT_VERSION, SessionHeader};
use rusqlite::Row;
use rusqlite::types::ValueRef;

use crate::schema::is_uuid;

/// A `sessions` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct SessionRow {
    pub id: String,
    pub version: i64,
    pub created_at: u64,
    pub cwd: Option<String>,
    pub parent_session: Option<String>,
    pub seed_length: Option<u64>,
    pub origin: Option<SessionOrigin>,
    pub delegation_depth: Option<u64>,
    pub agent_preset: Option<String>,
    pub incarnation: String,
    pub revision: u64,
}

fn text(value: ValueRef<'_>, name: &str) -> Result<Option<String>, String> {
    match value {
        ValueRef::Null => Ok(None),
        ValueRef::Text(bytes) => String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|_| format!("stored {name} is not UTF-8")),
        _ => Err(format!("stored {name} must be a string or null")),
    }
}

fn count(value: Option<i64>, name: &str) -> Result<Option<u64>, String> {
    value
        .map(|n| {
            u64::try_from(n)
                .ok()
                .filter(|n| *n <= MAX_SAFE_INTEGER)
                .ok_or_else(|| format!("stored {name} must be a non-negative safe integer"))
        })
        .transpose()
}

fn int(row: &Row<'_>, index: usize, name: &str) -> Result<Option<i64>, String> {
    row.get::<_, Option<i64>>(index)
        .map_err(|_| format!("stored {name} must be an integer"))
}

impl SessionRow {
    /// Reads the columns of `SELECT_SESSION`, checked as dsh checks them; an error carries the
    /// row's id (empty when unreadable) and what is wrong.
    pub fn read(row: &Row<'_>) -> Result<Self, (String, String)> {
        let id = row
            .get_ref(0)
            .ok()
            .and_then(|value| text(value, "id").ok().flatten())
            .unwrap_or_default();
        Self::check(row, &id).map_err(|reason| (id, reason))
    }

    fn check(row: &Row<'_>, id: &str) -> Result<Self, String> {
        let column = |index: usize, name: &str| {
            row.get_ref(index)
                .map_err(|error| error.to_string())
                .and_then(|value| text(value, name))
        };
        if id.is_empty() {
            return Err("stored id must not be empty".into());
        }
        let version = int(row, 1, "version")?.ok_or("stored version must be an integer")?;
        let cwd = column(3, "cwd")?;
        if cwd.as_deref().is_some_and(|cwd| !cwd.starts_with('/')) {
            return Err("stored session cwd must be absolute".into());
        }
        let origin = match column(6, "origin")?.as_deref() {
            None => None,
            Some("subagent") => Some(SessionOrigin::Subagent),
            Some(_) => return Err("stored session origin must be subagent or null".into()),
        };
        let incarnation = column(9, "incarnation")?
            .filter(|incarnation| is_uuid(incarnation))
            .ok_or("stored session incarnation must be a UUID")?;
        Ok(Self {
            id: id.to_owned(),
            version,
            created_at: count(int(row, 2, "created_at")?, "created_at")?
                .ok_or("stored created_at must be an integer")?,
            cwd,
            parent_session: column(4, "parent_session")?,
            seed_length: count(int(row, 5, "seed_length")?, "seed_length")?,
            origin,
            delegation_depth: count(int(row, 7, "delegation_depth")?, "delegation_depth")?,
            agent_preset: column(8, "agent_preset")?,
            incarnation,
            revision: count(int(row, 10, "revision")?, "revision")?
                .ok_or("stored revision must be an integer")?,
        })
    }

    /// The header, refusing a log format this harness does not read.
    pub fn header(&self) -> Result<SessionHeader, String> {
        self.listed_header()
            .filter(|header| header.version == SESSION_FORMAT_VERSION)
            .ok_or_else(|| version_refusal(&self.id, &self.version.into()))
    }

    /// The header as a listing shows it, whatever its format version (loading it refuses a
    /// version other than ours); `None` for a negative version, which no harness writes.
    pub fn listed_header(&self) -> Option<SessionHeader> {
        Some(SessionHeader {
            version: u64::try_from(self.version).ok()?,
            id: self.id.clone(),
            created_at: self.created_at,
            cwd: self.cwd.clone(),
            parent_session: self.parent_session.clone(),
            seed_length: self.seed_length,
            origin: self.origin,
            delegation_depth: self.delegation_depth,
            agent_preset: self.agent_preset.clone(),
        })
    }

    /// The revision: the store's identity, this row's incarnation and its counter.
    pub fn revision(&self, store_identity: &str) -> String {
        format!(
            "{store_identity}:incarnation:{}:revision:{}",
            self.incarnation, self.revision
        )
    }
}

/// Column values of `UPSERT_SESSION` for `header`, with a fresh incarnation.
pub(crate) fn upsert_params(
    header: &SessionHeader,
    incarnation: &str,
) -> [rusqlite::types::Value; 10] {
    use rusqlite::types::Value;
    let int = |n: u64| Value::Integer(i64::try_from(n).unwrap_or(i64::MAX));
    let opt_int = |n: Option<u64>| n.map_or(Value::Null, int);
    let opt_text =
        |text: Option<&str>| text.map_or(Value::Null, |text| Value::Text(text.to_owned()));
    [
        Value::Text(header.id.clone()),
        int(header.version),
        int(header.created_at),
        opt_text(header.cwd.as_deref()),
        opt_text(header.parent_session.as_deref()),
        opt_int(header.seed_length),
        opt_text(header.origin.map(|_| "subagent")),
        opt_int(header.delegation_depth),
        opt_text(header.agent_preset.as_deref()),
        Value::Text(incarnation.to_owned()),
    ]
}
