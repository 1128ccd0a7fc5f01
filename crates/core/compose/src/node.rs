//! The composition tree: YAML data that keeps `!!js` expressions and key order.

use serde_json::Number;

/// One value of a row tree, as written in YAML under dsh's dialect (the JSON schema plus
/// `!!js <expression>`). Mappings keep the order their keys were written in.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// `null`, `~` or an empty value.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A finite number. Integral values are kept as integers, as JavaScript does.
    Number(Number),
    /// A string.
    String(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping.
    Map(Map),
    /// A `!!js` expression, kept as its source text until a row activates.
    Expr(String),
}

/// A mapping with string keys in insertion order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map {
    entries: Vec<(String, Node)>,
}

impl Map {
    /// An empty mapping.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }

    /// The value under `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries
            .iter_mut()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }

    /// Sets `key` to `value`: in place when the key exists, else appended.
    pub fn insert(&mut self, key: impl Into<String>, value: Node) {
        let key = key.into();
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => self.entries.push((key, value)),
        }
    }

    /// The values in order, mutably.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Node> {
        self.entries.iter_mut().map(|(_, value)| value)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.entries
            .iter()
            .map(|(key, value)| (key.as_str(), value))
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the mapping is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl FromIterator<(String, Node)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Node)>>(iter: I) -> Self {
        let mut map = Self::new();
        for (key, value) in iter {
            map.insert(key, value);
        }
        map
    }
}

impl Node {
    /// The string, when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(text) => Some(text),
            _ => None,
        }
    }

    /// The mapping, when this is one.
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Self::Map(map) => Some(map),
            _ => None,
        }
    }

    /// The mapping, mutably, when this is one.
    pub fn as_map_mut(&mut self) -> Option<&mut Map> {
        match self {
            Self::Map(map) => Some(map),
            _ => None,
        }
    }

    /// JavaScript truthiness of the literal value (an expression node counts as truthy, as the
    /// object dsh parses it into does).
    pub fn is_truthy(&self) -> bool {
        match self {
            Self::Null => false,
            Self::Bool(value) => *value,
            Self::Number(number) => number.as_f64().is_some_and(|value| value != 0.0),
            Self::String(text) => !text.is_empty(),
            Self::Seq(_) | Self::Map(_) | Self::Expr(_) => true,
        }
    }

    /// The node as JSON, with each expression as `{"__jsExpr": "<source>"}` (dsh's form), so
    /// two trees compare equal exactly when dsh would print them alike.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Self::Null => Value::Null,
            Self::Bool(value) => Value::Bool(*value),
            Self::Number(number) => Value::Number(number.clone()),
            Self::String(text) => Value::String(text.clone()),
            Self::Seq(items) => Value::Array(items.iter().map(Self::to_json).collect()),
            Self::Map(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| (key.to_owned(), value.to_json()))
                    .collect(),
            ),
            Self::Expr(source) => serde_json::json!({ "__jsExpr": source }),
        }
    }
}
