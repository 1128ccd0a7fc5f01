//! `SessionHeader`: metadata kept beside the log, never an event.

use serde::Serialize;

use dsh_protocol::json::{MAX_SAFE_INTEGER, to_js_string};

/// The log format this harness reads and writes (`SESSION_FORMAT_VERSION`).
pub const SESSION_FORMAT_VERSION: u64 = 0;

/// Who started a session, when not a person (`origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SessionOrigin {
    /// A sub-agent's session.
    #[serde(rename = "subagent")]
    Subagent,
}

/// A session's metadata, in dsh's key order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// Format version; always [`SESSION_FORMAT_VERSION`] once validated.
    pub version: u64,
    /// The session id.
    pub id: String,
    /// Creation time, epoch milliseconds.
    pub created_at: u64,
    /// The absolute working directory the session ran in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The session this one was forked from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// How many leading events were inherited from the parent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_length: Option<u64>,
    /// Set on sub-agent sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<SessionOrigin>,
    /// Nesting depth of delegation; absent means top level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegation_depth: Option<u64>,
    /// The agent preset the session was composed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_preset: Option<String>,
}

/// A header that breaks the rules of dsh's `validateSessionHeader`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid session header for \"{id}\": {reason}")]
pub struct HeaderError {
    /// The session the header belongs to.
    pub id: String,
    /// What is wrong.
    pub reason: String,
}

impl SessionHeader {
    /// A top-level header with only the required fields.
    pub fn new(id: impl Into<String>, created_at: u64) -> Self {
        Self {
            version: SESSION_FORMAT_VERSION,
            id: id.into(),
            created_at,
            cwd: None,
            parent_session: None,
            seed_length: None,
            origin: None,
            delegation_depth: None,
            agent_preset: None,
        }
    }

    /// Sets the working directory.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Checks the header belongs to `id` and follows the core rules.
    pub fn validate(&self, id: &str) -> Result<(), HeaderError> {
        let fail = |reason: String| HeaderError {
            id: id.to_owned(),
            reason,
        };
        if self.version != SESSION_FORMAT_VERSION {
            return Err(fail(format!(
                "version {} is not the supported v{SESSION_FORMAT_VERSION}",
                self.version
            )));
        }
        if self.id != id {
            return Err(fail(format!("header id \"{}\" does not match", self.id)));
        }
        for (name, value) in [
            ("createdAt", Some(self.created_at)),
            ("seedLength", self.seed_length),
            ("delegationDepth", self.delegation_depth),
        ] {
            if value.is_some_and(|n| n > MAX_SAFE_INTEGER) {
                return Err(fail(format!("{name} must be a non-negative safe integer")));
            }
        }
        if let Some(cwd) = &self.cwd
            && !cwd.starts_with('/')
        {
            return Err(fail(format!("cwd \"{cwd}\" must be an absolute path")));
        }
        Ok(())
    }

    /// The header as compact JSON in dsh's key order.
    pub fn to_json_string(&self) -> String {
        to_js_string(self)
    }
}

/// dsh's refusal of a log in another format version.
pub fn version_refusal(id: &str, version: &serde_json::Value) -> String {
    let shown = to_js_string(version);
    let newer = version
        .as_f64()
        .is_some_and(|v| v > SESSION_FORMAT_VERSION as f64);
    if newer {
        format!(
            "session \"{id}\" uses log format v{shown}, but this harness reads only \
             v{SESSION_FORMAT_VERSION}: the log was written by a newer harness — upgrade the \
             harness to open it"
        )
    } else {
        format!(
            "session \"{id}\" uses log format v{shown}, older than the supported \
             v{SESSION_FORMAT_VERSION}, and this build ships no upgrade path for it"
        )
    }
}

/// Current time in epoch milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}
