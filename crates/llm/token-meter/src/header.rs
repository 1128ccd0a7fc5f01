//! Request headers as the meter compares them: dsh's canonical form (`canonicalHeader`) and
//! its field-wise equality (`headerEquals`), with the header's price computed once.

use dsh_protocol::json::to_js_string;
use serde_json::{Map, Value};

use crate::estimate::{BLOCK_OVERHEAD, estimate_system, text_tokens};

/// A canonical request header (`{config, adapterDefaults?, system?, tools?}`) and its price.
#[derive(Debug, Clone, PartialEq)]
pub struct PricedHeader {
    value: Value,
    tokens: u64,
    /// `JSON.stringify(tools)`, which both the price and the equality use.
    tools_text: Option<String>,
}

/// The call-config fields `callConfigEquals` compares.
const CONFIG_FIELDS: [&str; 5] = [
    "provider",
    "model",
    "reasoningEffort",
    "temperature",
    "maxTokens",
];

impl PricedHeader {
    /// Canonicalizes `header` (a `request/header`'s `header`): `adapterDefaults` only when one
    /// of its flags is `true`, `system` only when a non-empty string, `tools` only when a
    /// non-empty list.
    pub fn new(header: &Value) -> Self {
        let mut canonical = Map::new();
        canonical.insert(
            "config".to_owned(),
            header.get("config").cloned().unwrap_or(Value::Null),
        );
        if let Some(defaults) = header.get("adapterDefaults").filter(|defaults| {
            ["reasoningEffort", "maxTokens"]
                .iter()
                .any(|flag| defaults.get(flag) == Some(&Value::Bool(true)))
        }) {
            canonical.insert("adapterDefaults".to_owned(), defaults.clone());
        }
        if let Some(system) = header
            .get("system")
            .filter(|system| system.as_str().is_some_and(|text| !text.is_empty()))
        {
            canonical.insert("system".to_owned(), system.clone());
        }
        if let Some(tools) = header
            .get("tools")
            .filter(|tools| tools.as_array().is_some_and(|tools| !tools.is_empty()))
        {
            canonical.insert("tools".to_owned(), tools.clone());
        }
        let tools_text = canonical.get("tools").map(to_js_string);
        let value = Value::Object(canonical);
        let tools_tokens = tools_text
            .as_deref()
            .map_or(0, |text| text_tokens(text) + BLOCK_OVERHEAD);
        let tokens = estimate_system(Some(&value)) + tools_tokens;
        Self {
            value,
            tokens,
            tools_text,
        }
    }

    /// The canonical header.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Its price: system prompt plus tools ([`crate::estimate_header`]).
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// dsh's `headerEquals`: the call config (provider, model, effort, temperature, max
    /// tokens, stop list), the adapter-default flags, the system prompt, and the tool schemas
    /// in order by their JSON text.
    pub fn same_as(&self, other: &Self) -> bool {
        let (a, b) = (&self.value, &other.value);
        let config = |header: &Value, field: &str| {
            header
                .get("config")
                .and_then(|config| config.get(field))
                .cloned()
        };
        let flag = |header: &Value, field: &str| {
            header
                .get("adapterDefaults")
                .and_then(|defaults| defaults.get(field))
                .cloned()
        };
        CONFIG_FIELDS
            .iter()
            .chain(&["stop"])
            .all(|field| same_number_or_value(config(a, field), config(b, field)))
            && ["reasoningEffort", "maxTokens"]
                .iter()
                .all(|field| flag(a, field) == flag(b, field))
            && a.get("system") == b.get("system")
            && self.tools_text == other.tools_text
    }
}

/// Value equality where numbers compare as JavaScript numbers (`1` equals `1.0`).
fn same_number_or_value(a: Option<Value>, b: Option<Value>) -> bool {
    match (&a, &b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Whether two optional headers are the same request envelope; two absent ones are.
pub fn same_header(a: Option<&PricedHeader>, b: Option<&PricedHeader>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => std::ptr::eq(a, b) || a.same_as(b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_form_drops_empty_parts() {
        let header = PricedHeader::new(&json!({"config": {"provider": "p", "model": "m"},
            "adapterDefaults": {"maxTokens": false}, "system": "", "tools": []}));
        assert_eq!(
            header.value(),
            &json!({"config": {"provider": "p", "model": "m"}})
        );
        assert_eq!(header.tokens(), 0);
        let kept = PricedHeader::new(&json!({"tools": [{"name": "t"}], "system": "abcd",
            "adapterDefaults": {"maxTokens": true}, "config": {"model": "m", "maxTokens": 8}}));
        assert_eq!(
            to_js_string(kept.value()),
            r#"{"config":{"model":"m","maxTokens":8},"adapterDefaults":{"maxTokens":true},"system":"abcd","tools":[{"name":"t"}]}"#
        );
    }

    #[test]
    fn equality_is_field_wise() {
        let a = PricedHeader::new(
            &json!({"config": {"provider": "p", "model": "m", "temperature": 1}, "system": "s"}),
        );
        let b = PricedHeader::new(
            &json!({"system": "s", "tools": [], "config": {"model": "m", "provider": "p", "temperature": 1.0}}),
        );
        assert!(a.same_as(&b));
        let c = PricedHeader::new(
            &json!({"config": {"provider": "p", "model": "m2", "temperature": 1}, "system": "s"}),
        );
        assert!(!a.same_as(&c));
        let d = PricedHeader::new(
            &json!({"config": {"provider": "p", "model": "m", "temperature": 1}, "system": "t"}),
        );
        assert!(!a.same_as(&d));
        let e = PricedHeader::new(
            &json!({"config": {"provider": "p", "model": "m", "temperature": 1}, "system": "s", "tools": [{"name": "x"}]}),
        );
        assert!(!a.same_as(&e));
        assert!(same_header(None, None));
        assert!(!same_header(Some(&a), None));
        assert!(same_header(Some(&a), Some(&b)));
        let f =
            PricedHeader::new(&json!({"config": {}, "tools": [{"name": "x", "description": "d"}]}));
        let g =
            PricedHeader::new(&json!({"config": {}, "tools": [{"description": "d", "name": "x"}]}));
        assert!(!f.same_as(&g), "tool schemas compare by their JSON text");
        assert_eq!(f.tokens(), crate::estimate_header(Some(f.value())));
    }
}
