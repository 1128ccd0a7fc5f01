//! The first line of a log: `{"type":"session","version":0,"id":…,"createdAt":…,…}`.

use dsh_protocol::json::to_js_string;
use dsh_session::event::safe_u64;
use dsh_session::header::{SessionOrigin, version_refusal};
use dsh_session::{SESSION_FORMAT_VERSION, SessionHeader};
use serde::Serialize;
use serde_json::Value;

/// The header line as dsh's JSONL backend writes it: `delegationDepth` always present.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeaderLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    version: u64,
    id: &'a str,
    created_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Option<SessionOrigin>,
    delegation_depth: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_preset: Option<&'a str>,
}

/// The header line text, without its newline.
pub fn header_line(header: &SessionHeader) -> String {
    to_js_string(&HeaderLine {
        kind: "session",
        version: header.version,
        id: &header.id,
        created_at: header.created_at,
        cwd: header.cwd.as_deref(),
        parent_session: header.parent_session.as_deref(),
        seed_length: header.seed_length,
        origin: header.origin,
        delegation_depth: header.delegation_depth.unwrap_or(0),
        agent_preset: header.agent_preset.as_deref(),
    })
}

/// Why a first line is not a usable header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderProblem {
    /// Missing, empty, or not newline-terminated.
    Missing,
    /// Not JSON.
    NotJson,
    /// JSON, but not a session header of this format.
    NotHeader(&'static str),
    /// A header of another format version (the refusal text).
    ForeignVersion(String),
    /// A well-formed header carrying the retired `sandboxMode`/`approvalPolicy` fields.
    Retired,
}

impl HeaderProblem {
    /// dsh's wording of the problem.
    pub fn message(&self) -> String {
        match self {
            Self::Missing => "empty or header-less session log".into(),
            Self::NotJson => "corrupt session log: header line is not valid JSON".into(),
            Self::NotHeader(why) => {
                format!("corrupt session log: first line is not a session header ({why})")
            }
            Self::ForeignVersion(text) => text.clone(),
            Self::Retired => "session header uses retired policy baseline fields".into(),
        }
    }
}

/// Parses one complete header record: exactly one line ending in `\n`.
pub fn parse_header_record(record: &[u8]) -> Result<SessionHeader, HeaderProblem> {
    let newline = record.iter().position(|&byte| byte == b'\n');
    let Some(line) = record
        .strip_suffix(b"\n")
        .filter(|_| newline == Some(record.len() - 1))
    else {
        return Err(HeaderProblem::Missing);
    };
    parse_header_line(line)
}

/// Parses a first line (without its newline).
pub fn parse_header_line(line: &[u8]) -> Result<SessionHeader, HeaderProblem> {
    parse_line(line, true)
}

/// Parses a first line whatever its format version (listing shows every session; opening
/// one of another version is refused elsewhere). `None` when it is not a header.
pub fn parse_header_line_any_version(line: &[u8]) -> Option<SessionHeader> {
    let mut header = parse_line(line, false).ok()?;
    let value: Value = serde_json::from_slice(line).ok()?;
    header.version = value.get("version").and_then(Value::as_u64)?;
    Some(header)
}

fn parse_line(line: &[u8], refuse_foreign: bool) -> Result<SessionHeader, HeaderProblem> {
    let value: Value = serde_json::from_slice(line).map_err(|_| HeaderProblem::NotJson)?;
    let Value::Object(map) = value else {
        return Err(HeaderProblem::NotHeader("not an object"));
    };
    if refuse_foreign
        && let Some(version) = map.get("version").filter(|v| v.is_number())
        && version.as_u64() != Some(SESSION_FORMAT_VERSION)
    {
        let id = match map.get("id") {
            Some(Value::String(id)) => id.clone(),
            Some(other) => to_js_string(other),
            None => "undefined".into(),
        };
        return Err(HeaderProblem::ForeignVersion(version_refusal(&id, version)));
    }
    if map.get("type").and_then(Value::as_str) != Some("session") {
        return Err(HeaderProblem::NotHeader("type is not \"session\""));
    }
    if !map.get("version").is_some_and(Value::is_number) {
        return Err(HeaderProblem::NotHeader("version is not a number"));
    }
    let Some(Value::String(id)) = map.get("id") else {
        return Err(HeaderProblem::NotHeader("id is not a string"));
    };
    let count = |key: &str| map.get(key).and_then(safe_u64);
    let Some(created_at) = count("createdAt") else {
        return Err(HeaderProblem::NotHeader(
            "createdAt is not a non-negative safe integer",
        ));
    };
    let Some(delegation_depth) = count("delegationDepth") else {
        return Err(HeaderProblem::NotHeader(
            "delegationDepth is not a non-negative safe integer",
        ));
    };
    let origin = match map.get("origin") {
        None => None,
        Some(Value::String(origin)) if origin == "subagent" => Some(SessionOrigin::Subagent),
        Some(_) => return Err(HeaderProblem::NotHeader("origin is not \"subagent\"")),
    };
    let text = |key: &str| -> Result<Option<String>, HeaderProblem> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(HeaderProblem::NotHeader("a text field is not a string")),
        }
    };
    let agent_preset = text("agentPreset")?;
    if map.contains_key("sandboxMode") || map.contains_key("approvalPolicy") {
        return Err(HeaderProblem::Retired);
    }
    Ok(SessionHeader {
        version: SESSION_FORMAT_VERSION,
        id: id.clone(),
        created_at,
        cwd: text("cwd")?,
        parent_session: text("parentSession")?,
        seed_length: map.get("seedLength").and_then(safe_u64),
        origin,
        delegation_depth: Some(delegation_depth),
        agent_preset,
    })
}
