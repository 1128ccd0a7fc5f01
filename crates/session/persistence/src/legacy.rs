//! Read-side normalization of legacy event shapes (same format version 0, never rewritten on disk).
//!
//! Logs written before the react-loop refactor and before messages had identities are upgraded
//! as they are read: `turn/start` drops its `trigger`, old `turn/end` reasons take their current
//! form, `steering/message` becomes `user/message`, and bare message payloads gain the
//! `legacy-message:<session>:<seq>` identity and the current wrapper. Three retired shapes are
//! refused outright: `request/header-delta`, `mode/set` and `request/header` with reason
//! `"fallback"`. This is dsh's `snapshotStoredEvents` (session-persistence `coordinator.ts`)
//! minus the per-event validation, which the caller runs afterwards.
//!
//! Every rewrite keeps object keys where dsh's spreads put them, so an upgraded event prints the
//! same bytes as dsh's.

use std::borrow::Cow;

use dsh_protocol::json::MAX_SAFE_INTEGER;
use dsh_protocol::kinds;
use dsh_session::event::safe_u64;
use dsh_session::fields::object_fields;
use dsh_session::{SessionEvent, SurfaceOp};
use serde_json::{Map, Value};

/// Upgrades legacy shapes in place (events read from storage, in seq order) and refuses the
/// retired ones.
///
/// The retired types are looked for over the whole log first; then each event is upgraded in
/// order (`turn/start`, `turn/end`, `steering/message`, then the pre-identity message shapes).
/// A legacy `tool/result` replacement inherits the message id of the event it replaces, read
/// from the already upgraded events before it. Current events are left untouched.
///
/// The error is dsh's exact text, such as
/// `session "<id>" contains unsupported legacy mode/set event at seq 3` or
/// `session "<id>" contains malformed pre-react-loop turn/end at seq 5`. After an error the
/// events before the failing one may already be upgraded; callers discard the slice.
pub fn normalize_stored_events(id: &str, events: &mut [SessionEvent]) -> Result<(), String> {
    assert_supported_events(id, events)?;
    for index in 0..events.len() {
        let Some((before, rest)) = events.split_at_mut_checked(index) else {
            break;
        };
        let Some(event) = rest.first_mut() else {
            break;
        };
        if is_current_shape(event) {
            continue;
        }
        migrate_turn_start(id, event)?;
        migrate_turn_end(id, event)?;
        migrate_steering(id, event)?;
        migrate_message(id, event, before);
    }
    Ok(())
}

/// Whether `event` has a shape every migration below leaves untouched: the common case, decided
/// without changing (or fully parsing) chunk payloads and without copying anything.
fn is_current_shape(event: &SessionEvent) -> bool {
    let kind = event.kind.as_ref();
    if !matches!(
        kind,
        kinds::TURN_START
            | kinds::TURN_END
            | kinds::STEERING_MESSAGE
            | kinds::USER_MESSAGE
            | kinds::ASSISTANT_MESSAGE
            | kinds::TOOL_RESULT
    ) {
        return true;
    }
    if let Some(text) = event.data.raw_text()
        && matches!(
            kind,
            kinds::USER_MESSAGE | kinds::ASSISTANT_MESSAGE | kinds::TOOL_RESULT
        )
    {
        // Read from storage: the top-level keys decide, without parsing the message.
        let key = if kind == kinds::USER_MESSAGE {
            "id"
        } else {
            "message"
        };
        return object_fields(text)
            .is_some_and(|fields| fields.iter().any(|(name, _)| name == key));
    }
    let Value::Object(data) = event.data.value() else {
        return kind != kinds::STEERING_MESSAGE;
    };
    match kind {
        kinds::TURN_START => !data.contains_key("trigger"),
        kinds::USER_MESSAGE => data.contains_key("id"),
        kinds::ASSISTANT_MESSAGE | kinds::TOOL_RESULT => data.contains_key("message"),
        kinds::TURN_END => {
            let turn_ok = data.get("turn").and_then(safe_u64).is_some_and(|t| t >= 1);
            let Some(reason) = data.get("reason").and_then(Value::as_object) else {
                return false;
            };
            let settled = match reason.get("kind").and_then(Value::as_str) {
                Some("completed" | "blocked" | "max-tokens" | "interrupted") => reason.len() == 1,
                Some("aborted") => reason.contains_key("reason"),
                Some("error") => reason.contains_key("error"),
                _ => false,
            };
            turn_ok && has_only_keys(data, &["turn", "reason"], &[]) && settled
        }
        _ => false,
    }
}

/// dsh's `assertSupportedEvents`: each retired shape is searched over the whole log in turn.
fn assert_supported_events(id: &str, events: &[SessionEvent]) -> Result<(), String> {
    for retired in [kinds::REQUEST_HEADER_DELTA, kinds::MODE_SET] {
        if let Some(event) = events.iter().find(|event| event.kind == retired) {
            return Err(format!(
                "session \"{id}\" contains unsupported legacy {retired} event at seq {}",
                event.seq
            ));
        }
    }
    for event in events
        .iter()
        .filter(|event| event.kind == kinds::REQUEST_HEADER)
    {
        match event.data.value() {
            // dsh reads `data.reason` without a guard, which throws on `null`.
            Value::Null => return Err("Cannot read properties of null (reading 'reason')".into()),
            Value::Object(data)
                if data.get("reason").and_then(Value::as_str) == Some("fallback") =>
            {
                return Err(format!(
                    "session \"{id}\" contains unsupported legacy request/header reason \
                     \"fallback\" at seq {}",
                    event.seq
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether `record` holds every `required` key and no key outside `required` and `optional`.
fn has_only_keys(record: &Map<String, Value>, required: &[&str], optional: &[&str]) -> bool {
    record
        .keys()
        .all(|key| required.contains(&key.as_str()) || optional.contains(&key.as_str()))
        && required.iter().all(|key| record.contains_key(*key))
}

/// JavaScript's `Number.isSafeInteger(value)`, giving the number (`-0` counts, as in JavaScript).
fn safe_integer(value: Option<&Value>) -> Option<f64> {
    let number = value?.as_f64()?;
    // MAX_SAFE_INTEGER is exact as a double.
    let max = MAX_SAFE_INTEGER as f64;
    (number.is_finite() && number.trunc() == number && number.abs() <= max).then_some(number)
}

/// The stable import identity of a message persisted before identities existed.
fn legacy_message_id(id: &str, seq: u64) -> Value {
    Value::String(format!("legacy-message:{id}:{seq}"))
}

/// A JSON object with `entries` in order.
fn object<const N: usize>(entries: [(&str, Value); N]) -> Map<String, Value> {
    entries
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
}

/// dsh's `migrateLegacyTurnStartEvent`: `{turn, trigger}` becomes `{turn}`.
fn migrate_turn_start(id: &str, event: &mut SessionEvent) -> Result<(), String> {
    if event.kind != kinds::TURN_START {
        return Ok(());
    }
    let Value::Object(data) = &mut *event.data else {
        return Ok(());
    };
    if !data.contains_key("trigger") {
        return Ok(());
    }
    let trigger_kind = data
        .get("trigger")
        .and_then(Value::as_object)
        .and_then(|trigger| trigger.get("kind"))
        .and_then(Value::as_str);
    if !safe_integer(data.get("turn")).is_some_and(|turn| turn >= 1.0)
        || !has_only_keys(data, &["turn", "trigger"], &[])
        || trigger_kind.is_none_or(str::is_empty)
    {
        return Err(format!(
            "session \"{id}\" contains malformed pre-react-loop turn/start at seq {}",
            event.seq
        ));
    }
    // The data holds exactly `turn` and `trigger`, so this leaves dsh's `{turn: data.turn}`.
    data.shift_remove("trigger");
    Ok(())
}

/// What to do with a `turn/end` reason.
enum ReasonUpgrade {
    /// It is current: leave the event alone.
    Keep,
    /// A legacy shape that is not one dsh knows.
    Malformed,
    /// Put this reason in place of the old one.
    Replace(Map<String, Value>),
}

/// dsh's `migrateLegacyTurnEndEvent`: old `aborted`, `disposed` and `error` reasons take their
/// current form; every `turn/end` must be exactly `{turn, reason}`.
fn migrate_turn_end(id: &str, event: &mut SessionEvent) -> Result<(), String> {
    if event.kind != kinds::TURN_END {
        return Ok(());
    }
    let seq = event.seq;
    let malformed =
        || format!("session \"{id}\" contains malformed pre-react-loop turn/end at seq {seq}");
    let Value::Object(data) = &mut *event.data else {
        return Ok(());
    };
    let Some(reason) = data.get("reason").and_then(Value::as_object) else {
        return Err(malformed());
    };
    let Some(kind) = reason.get("kind").and_then(Value::as_str) else {
        return Err(malformed());
    };
    if !safe_integer(data.get("turn")).is_some_and(|turn| turn >= 1.0)
        || !has_only_keys(data, &["turn", "reason"], &[])
    {
        return Err(malformed());
    }
    let upgrade = match kind {
        "completed" | "blocked" | "max-tokens" | "interrupted" => {
            if has_only_keys(reason, &["kind"], &[]) {
                ReasonUpgrade::Keep
            } else {
                ReasonUpgrade::Malformed
            }
        }
        "aborted" if reason.contains_key("reason") => ReasonUpgrade::Keep,
        "aborted" | "disposed" if !has_only_keys(reason, &["kind"], &[]) => {
            ReasonUpgrade::Malformed
        }
        "aborted" => ReasonUpgrade::Replace(aborted_because("legacy")),
        "disposed" => ReasonUpgrade::Replace(aborted_because("disposed")),
        "error" => upgrade_error_reason(reason),
        _ => ReasonUpgrade::Keep,
    };
    match upgrade {
        ReasonUpgrade::Keep => Ok(()),
        ReasonUpgrade::Malformed => Err(malformed()),
        ReasonUpgrade::Replace(current) => {
            // `{...data, reason: currentReason}`: the key keeps its place.
            data.insert("reason".to_owned(), Value::Object(current));
            Ok(())
        }
    }
}

/// `{kind: 'aborted', reason: {kind: cause}}`.
fn aborted_because(cause: &str) -> Map<String, Value> {
    object([
        ("kind", Value::from("aborted")),
        (
            "reason",
            Value::Object(object([("kind", Value::from(cause))])),
        ),
    ])
}

/// The `error` branch of dsh's turn-end upgrade: `{kind, step, failure}` or
/// `{kind, step, message, code?}` becomes `{kind: 'error', error}`.
fn upgrade_error_reason(reason: &Map<String, Value>) -> ReasonUpgrade {
    if reason.contains_key("error") {
        return ReasonUpgrade::Keep;
    }
    if !safe_integer(reason.get("step")).is_some_and(|step| step >= 0.0) {
        return ReasonUpgrade::Malformed;
    }
    let failure = reason.get("failure").and_then(Value::as_object);
    if let Some(failure) = failure {
        let is = |key: &str, check: fn(&Value) -> bool| failure.get(key).is_some_and(check);
        let absent_or = |key: &str, check: fn(&Value) -> bool| failure.get(key).is_none_or(check);
        if has_only_keys(reason, &["kind", "step", "failure"], &[])
            && has_only_keys(
                failure,
                &["message", "code"],
                &["status", "providerRetryAfterMs", "requestId"],
            )
            && is("message", Value::is_string)
            && is("code", Value::is_string)
            && absent_or("status", Value::is_number)
            && absent_or("providerRetryAfterMs", Value::is_number)
            && absent_or("requestId", Value::is_string)
        {
            return ReasonUpgrade::Replace(object([
                ("kind", Value::from("error")),
                ("error", Value::Object(failure.clone())),
            ]));
        }
    }
    let code = reason.get("code");
    let keys: &[&str] = if code.is_none() {
        &["kind", "step", "message"]
    } else {
        &["kind", "step", "message", "code"]
    };
    let Some(message) = reason.get("message").filter(|message| message.is_string()) else {
        return ReasonUpgrade::Malformed;
    };
    if !has_only_keys(reason, keys, &[]) || code.is_some_and(|code| !code.is_string()) {
        return ReasonUpgrade::Malformed;
    }
    let code = code.cloned().unwrap_or_else(|| Value::from("UNKNOWN"));
    ReasonUpgrade::Replace(object([
        ("kind", Value::from("error")),
        (
            "error",
            Value::Object(object([("message", message.clone()), ("code", code)])),
        ),
    ]))
}

/// dsh's `migrateLegacySteeringEvent`: `steering/message {turn, message}` becomes a
/// `user/message` carrying the message; the flat `{turn, content, source}` gains a legacy id.
/// The envelope (`surfaceOp`, `sourceEventSeqs`, ...) stays as it is.
fn migrate_steering(id: &str, event: &mut SessionEvent) -> Result<(), String> {
    if event.kind != kinds::STEERING_MESSAGE {
        return Ok(());
    }
    let seq = event.seq;
    let malformed = || {
        format!("session \"{id}\" contains malformed pre-react-loop steering/message at seq {seq}")
    };
    let Value::Object(data) = &mut *event.data else {
        return Err(malformed());
    };
    let has_turn = safe_integer(data.get("turn")).is_some();
    if has_turn
        && data.get("message").is_some_and(Value::is_object)
        && has_only_keys(data, &["turn", "message"], &[])
    {
        let wrapped = data.shift_remove("message").unwrap_or_default();
        event.data = wrapped.into();
        event.kind = Cow::Borrowed(kinds::USER_MESSAGE);
        return Ok(());
    }
    if !has_turn || !has_only_keys(data, &["turn", "content", "source"], &[]) {
        return Err(malformed());
    }
    // `const {turn, ...message} = data; {...message, id, role: 'user'}`.
    data.shift_remove("turn");
    data.insert("id".to_owned(), legacy_message_id(id, seq));
    data.insert("role".to_owned(), Value::from("user"));
    event.kind = Cow::Borrowed(kinds::USER_MESSAGE);
    Ok(())
}

/// dsh's `migrateLegacyMessageEvent`: a pre-identity message event takes the current wrapper.
///
/// Current-looking malformed events stay untouched so that validation rejects them. `before`
/// holds the events already upgraded, where a replacing `tool/result` finds the id it inherits.
fn migrate_message(id: &str, event: &mut SessionEvent, before: &[SessionEvent]) {
    let seq = event.seq;
    let Value::Object(data) = &mut *event.data else {
        return;
    };
    match event.kind.as_ref() {
        kinds::USER_MESSAGE => {
            if ["id", "role", "message"]
                .iter()
                .any(|key| data.contains_key(*key))
                || !data.contains_key("content")
                || !data.contains_key("source")
            {
                return;
            }
            data.insert("id".to_owned(), legacy_message_id(id, seq));
            data.insert("role".to_owned(), Value::from("user"));
        }
        kinds::ASSISTANT_MESSAGE => {
            if data.contains_key("message")
                || !data.contains_key("content")
                || !data.contains_key("provenance")
            {
                return;
            }
            let content = data.shift_remove("content").unwrap_or_default();
            let provenance = data.shift_remove("provenance").unwrap_or_default();
            // `{...asRecord(provenance), kind: 'model'}`.
            let mut source = match provenance {
                Value::Object(provenance) => provenance,
                _ => Map::new(),
            };
            source.insert("kind".to_owned(), Value::from("model"));
            let message = object([
                ("id", legacy_message_id(id, seq)),
                ("role", Value::from("assistant")),
                ("content", content),
                ("source", Value::Object(source)),
            ]);
            data.insert("message".to_owned(), Value::Object(message));
        }
        kinds::TOOL_RESULT => {
            if data.contains_key("message")
                || !data.contains_key("callId")
                || !data.contains_key("content")
                || !data.contains_key("isError")
            {
                return;
            }
            let call_id = data.shift_remove("callId").unwrap_or_default();
            let content = data.shift_remove("content").unwrap_or_default();
            let is_error = data.shift_remove("isError").unwrap_or_default();
            let message_id = match event.surface_op {
                Some(SurfaceOp::Replace { start, .. }) => inherited_message_id(before, start),
                _ => Some(legacy_message_id(id, seq)),
            };
            let mut message = Map::new();
            // dsh writes `id: undefined` when the replaced seq had no id; JSON drops the key.
            if let Some(message_id) = message_id {
                message.insert("id".to_owned(), message_id);
            }
            let part = object([
                ("type", Value::from("tool-result")),
                ("toolCallId", call_id.clone()),
                ("content", content),
                ("isError", is_error),
            ]);
            message.insert("role".to_owned(), Value::from("user"));
            message.insert(
                "content".to_owned(),
                Value::Array(vec![Value::Object(part)]),
            );
            let source = object([("kind", Value::from("tool")), ("callId", call_id)]);
            message.insert("source".to_owned(), Value::Object(source));
            data.insert("message".to_owned(), Value::Object(message));
        }
        _ => {}
    }
}

/// The id dsh's `messageIds` map holds for `seq`: that of the latest earlier event with that
/// seq that carries one (the map is set from every upgraded event that has an id).
fn inherited_message_id(before: &[SessionEvent], seq: u64) -> Option<Value> {
    before
        .iter()
        .rev()
        .filter(|event| event.seq == seq)
        .find_map(event_message_id)
        .map(|id| Value::String(id.to_owned()))
}

/// dsh's `eventMessageId`: the string `id` of a `user/message`'s data, or of any other event's
/// `data.message`.
fn event_message_id(event: &SessionEvent) -> Option<&str> {
    let data = event.data.as_object();
    let message = if event.kind == kinds::USER_MESSAGE {
        data
    } else {
        data?.get("message")?.as_object()
    };
    message?.get("id")?.as_str()
}
