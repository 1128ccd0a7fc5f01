//! The four log-only `compaction/*` payloads: builders that write dsh's key order and
//! readers that check the shape.

use dsh_protocol::{ContentBlock, TokenUsage};
use serde_json::{Map, Value};

use crate::types::SurfaceSpan;

/// The largest integer JavaScript holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A payload that does not have its event's shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{event} {reason}")]
pub struct EventShapeError {
    /// The event type.
    pub event: &'static str,
    /// What is wrong.
    pub reason: String,
}

/// `compaction/start` and `compaction/end` share their identity fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionStart {
    /// The compaction id.
    pub compaction_id: String,
    /// The command that asked for it, if any.
    pub source_command_id: Option<String>,
    /// The open turn enclosing the bracket; `None` for a standalone manual bracket.
    pub turn: Option<u64>,
}

/// `compaction/end`: the bracket closes, with the error chain when it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionEnd {
    /// The compaction id.
    pub compaction_id: String,
    /// The command that asked for it, if any.
    pub source_command_id: Option<String>,
    /// The open turn enclosing the bracket; `None` for a standalone manual bracket.
    pub turn: Option<u64>,
    /// The failure (`errorChain`), absent on success.
    pub error: Option<String>,
}

/// The summarizer's complete provider output.
#[derive(Debug, Clone, PartialEq)]
pub struct RawOutput {
    /// The blocks the provider returned.
    pub blocks: Vec<ContentBlock>,
    /// `true` when exactly one `llm.stream()` call produced them (`llmStreamCall: true`).
    pub llm_stream_call: bool,
}

/// `compaction/summary`: the summary written for the shadowed nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionSummary {
    /// The compaction id.
    pub compaction_id: String,
    /// The command that asked for it, if any.
    pub source_command_id: Option<String>,
    /// The summary blocks.
    pub summary: Vec<ContentBlock>,
    /// The raw provider output, when the summarizer kept it.
    pub raw_output: Option<RawOutput>,
    /// The shadowed span (first and last shadowed seq).
    pub shadowed_range: SurfaceSpan,
    /// Every shadowed seq in surface order.
    pub shadowed_seqs: Vec<u64>,
    /// The estimated tokens of the shadowed nodes.
    pub shadowed_token_count: u64,
    /// The summarizer's provider.
    pub provider: String,
    /// The summarizer's model.
    pub model: String,
    /// The generation cap of the summary call.
    pub max_tokens: Option<u64>,
    /// The summary call's usage.
    pub usage: Option<TokenUsage>,
}

/// `compaction/prune`: the shadow price of one pruned tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionPrune {
    /// The shadowed span.
    pub shadowed_range: SurfaceSpan,
    /// Every shadowed seq in surface order.
    pub shadowed_seqs: Vec<u64>,
    /// The estimated tokens of the shadowed nodes.
    pub shadowed_token_count: u64,
}

fn identity(map: &mut Map<String, Value>, id: &str, command: Option<&str>) {
    map.insert("compactionId".into(), id.into());
    if let Some(command) = command {
        map.insert("sourceCommandId".into(), command.into());
    }
}

fn turn_value(turn: Option<u64>) -> Value {
    turn.map_or(Value::Null, Value::from)
}

fn shadow(map: &mut Map<String, Value>, range: SurfaceSpan, seqs: &[u64], tokens: u64) {
    let mut span = Map::new();
    span.insert("start".into(), range.start.into());
    span.insert("end".into(), range.end.into());
    map.insert("shadowedRange".into(), Value::Object(span));
    map.insert("shadowedSeqs".into(), seqs.to_vec().into());
    map.insert("shadowedTokenCount".into(), tokens.into());
}

impl CompactionStart {
    /// The payload: `compactionId, [sourceCommandId], turn`.
    pub fn to_data(&self) -> Value {
        let mut map = Map::new();
        identity(
            &mut map,
            &self.compaction_id,
            self.source_command_id.as_deref(),
        );
        map.insert("turn".into(), turn_value(self.turn));
        Value::Object(map)
    }

    /// Reads a `compaction/start` payload.
    pub fn from_data(data: &Value) -> Result<Self, EventShapeError> {
        let read = Reader::new(dsh_protocol::kinds::COMPACTION_START, data)?;
        Ok(Self {
            compaction_id: read.id("compactionId")?,
            source_command_id: read.optional_id("sourceCommandId")?,
            turn: read.turn()?,
        })
    }
}

impl CompactionEnd {
    /// The payload: `compactionId, [sourceCommandId], turn, [error]`.
    pub fn to_data(&self) -> Value {
        let mut map = Map::new();
        identity(
            &mut map,
            &self.compaction_id,
            self.source_command_id.as_deref(),
        );
        map.insert("turn".into(), turn_value(self.turn));
        if let Some(error) = &self.error {
            map.insert("error".into(), error.as_str().into());
        }
        Value::Object(map)
    }

    /// Reads a `compaction/end` payload.
    pub fn from_data(data: &Value) -> Result<Self, EventShapeError> {
        let read = Reader::new(dsh_protocol::kinds::COMPACTION_END, data)?;
        let error = match read.map.get("error") {
            None => None,
            Some(Value::String(error)) => Some(error.clone()),
            Some(_) => return Err(read.fail("error must be a string")),
        };
        Ok(Self {
            compaction_id: read.id("compactionId")?,
            source_command_id: read.optional_id("sourceCommandId")?,
            turn: read.turn()?,
            error,
        })
    }
}

impl CompactionSummary {
    /// The payload: `compactionId, [sourceCommandId], summary, [rawOutput, llmStreamCall],
    /// shadowedRange, shadowedSeqs, shadowedTokenCount, provider, model, [maxTokens], [usage]`.
    pub fn to_data(&self) -> Result<Value, serde_json::Error> {
        let mut map = Map::new();
        identity(
            &mut map,
            &self.compaction_id,
            self.source_command_id.as_deref(),
        );
        map.insert("summary".into(), serde_json::to_value(&self.summary)?);
        if let Some(raw) = &self.raw_output {
            map.insert("rawOutput".into(), serde_json::to_value(&raw.blocks)?);
            if raw.llm_stream_call {
                map.insert("llmStreamCall".into(), Value::Bool(true));
            }
        }
        shadow(
            &mut map,
            self.shadowed_range,
            &self.shadowed_seqs,
            self.shadowed_token_count,
        );
        map.insert("provider".into(), self.provider.as_str().into());
        map.insert("model".into(), self.model.as_str().into());
        if let Some(max) = self.max_tokens {
            map.insert("maxTokens".into(), max.into());
        }
        if let Some(usage) = &self.usage {
            map.insert("usage".into(), serde_json::to_value(usage)?);
        }
        Ok(Value::Object(map))
    }

    /// Reads a `compaction/summary` payload.
    pub fn from_data(data: &Value) -> Result<Self, EventShapeError> {
        let read = Reader::new(dsh_protocol::kinds::COMPACTION_SUMMARY, data)?;
        let marker = match read.map.get("llmStreamCall") {
            None => false,
            Some(Value::Bool(true)) => true,
            Some(_) => return Err(read.fail("llmStreamCall must be true when present")),
        };
        let raw_output = match read.map.get("rawOutput") {
            None if marker => return Err(read.fail("llmStreamCall requires rawOutput")),
            None => None,
            Some(_) => Some(RawOutput {
                blocks: read.blocks("rawOutput")?,
                llm_stream_call: marker,
            }),
        };
        let (shadowed_range, shadowed_seqs, shadowed_token_count) = read.shadow()?;
        let max_tokens = match read.map.get("maxTokens") {
            None => None,
            Some(_) => Some(read.safe_int("maxTokens")?),
        };
        let usage = match read.map.get("usage") {
            None => None,
            Some(value) => Some(
                serde_json::from_value(value.clone())
                    .map_err(|error| read.fail(&format!("usage: {error}")))?,
            ),
        };
        Ok(Self {
            compaction_id: read.id("compactionId")?,
            source_command_id: read.optional_id("sourceCommandId")?,
            summary: read.blocks("summary")?,
            raw_output,
            shadowed_range,
            shadowed_seqs,
            shadowed_token_count,
            provider: read.string("provider")?,
            model: read.string("model")?,
            max_tokens,
            usage,
        })
    }
}

impl CompactionPrune {
    /// The payload: `shadowedRange, shadowedSeqs, shadowedTokenCount`.
    pub fn to_data(&self) -> Value {
        let mut map = Map::new();
        shadow(
            &mut map,
            self.shadowed_range,
            &self.shadowed_seqs,
            self.shadowed_token_count,
        );
        Value::Object(map)
    }

    /// Reads a `compaction/prune` payload.
    pub fn from_data(data: &Value) -> Result<Self, EventShapeError> {
        let read = Reader::new(dsh_protocol::kinds::COMPACTION_PRUNE, data)?;
        let (shadowed_range, shadowed_seqs, shadowed_token_count) = read.shadow()?;
        Ok(Self {
            shadowed_range,
            shadowed_seqs,
            shadowed_token_count,
        })
    }
}

/// Field access over one payload object, failing with the event's name.
struct Reader<'a> {
    event: &'static str,
    map: &'a Map<String, Value>,
}

impl<'a> Reader<'a> {
    fn new(event: &'static str, data: &'a Value) -> Result<Self, EventShapeError> {
        match data {
            Value::Object(map) => Ok(Self { event, map }),
            _ => Err(EventShapeError {
                event,
                reason: "payload must be an object".into(),
            }),
        }
    }

    fn fail(&self, reason: &str) -> EventShapeError {
        EventShapeError {
            event: self.event,
            reason: reason.into(),
        }
    }

    fn string(&self, key: &str) -> Result<String, EventShapeError> {
        match self.map.get(key) {
            Some(Value::String(text)) => Ok(text.clone()),
            _ => Err(self.fail(&format!("{key} must be a string"))),
        }
    }

    fn id(&self, key: &str) -> Result<String, EventShapeError> {
        match self.map.get(key) {
            Some(Value::String(text)) if !text.is_empty() => Ok(text.clone()),
            _ => Err(self.fail(&format!("{key} must be a non-empty string"))),
        }
    }

    fn optional_id(&self, key: &str) -> Result<Option<String>, EventShapeError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(_) => self.id(key).map(Some),
        }
    }

    fn safe(&self, value: Option<&Value>, what: &str) -> Result<u64, EventShapeError> {
        value
            .and_then(Value::as_u64)
            .filter(|n| *n <= MAX_SAFE_INTEGER)
            .ok_or_else(|| self.fail(&format!("{what} must be a non-negative safe integer")))
    }

    fn safe_int(&self, key: &str) -> Result<u64, EventShapeError> {
        self.safe(self.map.get(key), key)
    }

    fn turn(&self) -> Result<Option<u64>, EventShapeError> {
        match self.map.get("turn") {
            Some(Value::Null) => Ok(None),
            Some(value) => self.safe(Some(value), "turn").map(Some),
            None => Err(self.fail("turn must be a number or null")),
        }
    }

    fn blocks(&self, key: &str) -> Result<Vec<ContentBlock>, EventShapeError> {
        match self.map.get(key) {
            Some(value @ Value::Array(_)) => serde_json::from_value(value.clone())
                .map_err(|error| self.fail(&format!("{key}: {error}"))),
            _ => Err(self.fail(&format!("{key} must be an array of content blocks"))),
        }
    }

    fn shadow(&self) -> Result<(SurfaceSpan, Vec<u64>, u64), EventShapeError> {
        let span = match self.map.get("shadowedRange") {
            Some(Value::Object(span)) => SurfaceSpan {
                start: self.safe(span.get("start"), "shadowedRange.start")?,
                end: self.safe(span.get("end"), "shadowedRange.end")?,
            },
            _ => return Err(self.fail("shadowedRange must be an object")),
        };
        let seqs = match self.map.get("shadowedSeqs") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| self.safe(Some(item), "shadowedSeqs entry"))
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(self.fail("shadowedSeqs must be an array")),
        };
        Ok((span, seqs, self.safe_int("shadowedTokenCount")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(value: &Value) -> String {
        serde_json::to_string(value).unwrap_or_default()
    }

    #[test]
    fn start_and_end_key_order() {
        let start = CompactionStart {
            compaction_id: "c".into(),
            source_command_id: Some("k".into()),
            turn: None,
        };
        assert_eq!(
            text(&start.to_data()),
            r#"{"compactionId":"c","sourceCommandId":"k","turn":null}"#
        );
        assert_eq!(
            CompactionStart::from_data(&start.to_data()).ok(),
            Some(start)
        );
        let end = CompactionEnd {
            compaction_id: "c".into(),
            source_command_id: None,
            turn: Some(3),
            error: Some("boom: cause".into()),
        };
        assert_eq!(
            text(&end.to_data()),
            r#"{"compactionId":"c","turn":3,"error":"boom: cause"}"#
        );
        assert_eq!(CompactionEnd::from_data(&end.to_data()).ok(), Some(end));
    }

    #[test]
    fn summary_key_order_round_trips() {
        let summary = CompactionSummary {
            compaction_id: "c".into(),
            source_command_id: None,
            summary: vec![ContentBlock::Text { text: "s".into() }],
            raw_output: Some(RawOutput {
                blocks: vec![ContentBlock::Text { text: "r".into() }],
                llm_stream_call: true,
            }),
            shadowed_range: SurfaceSpan { start: 4, end: 9 },
            shadowed_seqs: vec![4, 9],
            shadowed_token_count: 120,
            provider: "deepseek".into(),
            model: "m".into(),
            max_tokens: Some(8192),
            usage: Some(TokenUsage {
                input_tokens: 1,
                output_tokens: 2,
                ..TokenUsage::default()
            }),
        };
        let data = summary.to_data().unwrap_or_default();
        assert_eq!(
            text(&data),
            concat!(
                r#"{"compactionId":"c","summary":[{"type":"text","text":"s"}],"#,
                r#""rawOutput":[{"type":"text","text":"r"}],"llmStreamCall":true,"#,
                r#""shadowedRange":{"start":4,"end":9},"shadowedSeqs":[4,9],"shadowedTokenCount":120,"#,
                r#""provider":"deepseek","model":"m","maxTokens":8192,"usage":{"inputTokens":1,"outputTokens":2}}"#
            )
        );
        assert_eq!(CompactionSummary::from_data(&data).ok(), Some(summary));
    }

    #[test]
    fn summary_marker_needs_raw_output() {
        let data = json!({"compactionId": "c", "summary": [], "llmStreamCall": true,
            "shadowedRange": {"start": 1, "end": 1}, "shadowedSeqs": [1], "shadowedTokenCount": 0,
            "provider": "p", "model": "m"});
        let error = CompactionSummary::from_data(&data).err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some("compaction/summary llmStreamCall requires rawOutput")
        );
    }

    #[test]
    fn prune_shape_and_rejections() {
        let prune = CompactionPrune {
            shadowed_range: SurfaceSpan { start: 7, end: 7 },
            shadowed_seqs: vec![7],
            shadowed_token_count: 33,
        };
        assert_eq!(
            text(&prune.to_data()),
            r#"{"shadowedRange":{"start":7,"end":7},"shadowedSeqs":[7],"shadowedTokenCount":33}"#
        );
        assert_eq!(
            CompactionPrune::from_data(&prune.to_data()).ok(),
            Some(prune)
        );
        assert!(CompactionStart::from_data(&json!({"compactionId": "", "turn": null})).is_err());
        assert!(CompactionStart::from_data(&json!({"compactionId": "c"})).is_err());
        assert!(
            CompactionPrune::from_data(&json!({"shadowedRange": {"start": -1, "end": 1},
            "shadowedSeqs": [], "shadowedTokenCount": 0}))
            .is_err()
        );
    }
}
