//! YAML text to [`Node`], keeping `!!js` expressions.

use std::collections::HashMap;

use saphyr_parser::Event;
use saphyr_parser::Parser;
use saphyr_parser::ScalarStyle;
use saphyr_parser::Span;
use saphyr_parser::Tag;

use super::scalar::plain_key;
use super::scalar::resolve_plain;
use crate::node::Map;
use crate::node::Node;

/// Why a YAML document could not be read, with its 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (line {line}, column {column})")]
pub struct YamlError {
    /// What is wrong.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// How deeply collections may nest.
const MAX_DEPTH: usize = 128;
/// How many values aliases may expand to in one document.
const MAX_ALIAS_EXPANSION: usize = 100_000;

/// Parses one YAML document. `Ok(None)` when the text holds no document (empty or only
/// comments); more than one document is an error.
pub fn parse_document(text: &str) -> Result<Option<Node>, YamlError> {
    let mut builder = Builder::default();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|error| YamlError {
            message: error.info().to_owned(),
            line: error.marker().line(),
            column: error.marker().col() + 1,
        })?;
        builder.feed(event, span)?;
    }
    Ok(builder.document)
}

enum Frame {
    Seq {
        items: Vec<Node>,
        anchor: usize,
    },
    Map {
        map: Map,
        key: Option<String>,
        anchor: usize,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    /// Each anchored value with the number of values it holds.
    anchors: HashMap<usize, (Node, usize)>,
    document: Option<Node>,
    documents: usize,
    /// Values copied by aliases so far.
    expanded: usize,
}

/// The number of values in `node`, itself included.
fn size(node: &Node) -> usize {
    match node {
        Node::Seq(items) => 1 + items.iter().map(size).sum::<usize>(),
        Node::Map(map) => 1 + map.iter().map(|(_, value)| size(value)).sum::<usize>(),
        _ => 1,
    }
}

fn error_at(span: Span, message: impl Into<String>) -> YamlError {
    YamlError {
        message: message.into(),
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

impl Builder {
    fn feed(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(error_at(
                        span,
                        "expected a single document, found a second one",
                    ));
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                let is_key = matches!(self.stack.last(), Some(Frame::Map { key: None, .. }));
                if is_key {
                    if tag.is_some() {
                        return Err(error_at(span, "a mapping key cannot carry a tag"));
                    }
                    let key = match style {
                        ScalarStyle::Plain => {
                            plain_key(&value).map_err(|message| error_at(span, message))?
                        }
                        _ => value.into_owned(),
                    };
                    return self.key(key, span);
                }
                let node = scalar(&value, style, tag.as_deref(), span)?;
                self.value(node, anchor, span)?;
            }
            Event::SequenceStart(anchor, tag) => {
                self.check_collection_tag(tag.as_deref(), "seq", span)?;
                self.check_not_key(span)?;
                self.check_depth(span)?;
                self.stack.push(Frame::Seq {
                    items: Vec::new(),
                    anchor,
                });
            }
            Event::MappingStart(anchor, tag) => {
                self.check_collection_tag(tag.as_deref(), "map", span)?;
                self.check_not_key(span)?;
                self.check_depth(span)?;
                self.stack.push(Frame::Map {
                    map: Map::new(),
                    key: None,
                    anchor,
                });
            }
            Event::SequenceEnd => {
                if let Some(Frame::Seq { items, anchor }) = self.stack.pop() {
                    self.value(Node::Seq(items), anchor, span)?;
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map { map, anchor, .. }) = self.stack.pop() {
                    self.value(Node::Map(map), anchor, span)?;
                }
            }
            Event::Alias(anchor) => {
                if matches!(self.stack.last(), Some(Frame::Map { key: None, .. })) {
                    return Err(error_at(span, "an alias cannot be a mapping key"));
                }
                let (node, count) = self
                    .anchors
                    .get(&anchor)
                    .cloned()
                    .ok_or_else(|| error_at(span, "alias to an unknown anchor"))?;
                self.expanded += count;
                if self.expanded > MAX_ALIAS_EXPANSION {
                    return Err(error_at(
                        span,
                        format!("aliases expand to more than {MAX_ALIAS_EXPANSION} values"),
                    ));
                }
                self.value(node, 0, span)?;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }

    fn check_depth(&self, span: Span) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(error_at(
                span,
                format!("collections nest deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn check_not_key(&self, span: Span) -> Result<(), YamlError> {
        if matches!(self.stack.last(), Some(Frame::Map { key: None, .. })) {
            return Err(error_at(span, "mapping keys must be scalars"));
        }
        Ok(())
    }

    fn check_collection_tag(
        &self,
        tag: Option<&Tag>,
        expected: &str,
        span: Span,
    ) -> Result<(), YamlError> {
        match tag {
            None => Ok(()),
            Some(tag) if tag.is_yaml_core_schema() && tag.suffix == expected => Ok(()),
            Some(tag) => Err(error_at(
                span,
                format!("unknown tag {} on a collection", tag_text(tag)),
            )),
        }
    }

    fn key(&mut self, key: String, span: Span) -> Result<(), YamlError> {
        if let Some(Frame::Map { map, key: slot, .. }) = self.stack.last_mut() {
            if map.contains_key(&key) {
                return Err(error_at(span, format!("duplicated mapping key \"{key}\"")));
            }
            *slot = Some(key);
        }
        Ok(())
    }

    fn value(&mut self, node: Node, anchor: usize, span: Span) -> Result<(), YamlError> {
        if anchor != 0 {
            let count = size(&node);
            self.anchors.insert(anchor, (node.clone(), count));
        }
        match self.stack.last_mut() {
            None => self.document = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { map, key, .. }) => match key.take() {
                Some(key) => map.insert(key, node),
                None => return Err(error_at(span, "mapping keys must be scalars")),
            },
        }
        Ok(())
    }
}

fn scalar(
    value: &str,
    style: ScalarStyle,
    tag: Option<&Tag>,
    span: Span,
) -> Result<Node, YamlError> {
    let Some(tag) = tag else {
        return match style {
            ScalarStyle::Plain => resolve_plain(value).map_err(|message| error_at(span, message)),
            _ => Ok(Node::String(value.to_owned())),
        };
    };
    if !tag.is_yaml_core_schema() {
        return Err(error_at(
            span,
            format!(
                "unknown tag {} (dsh config knows !!js and the JSON schema tags)",
                tag_text(tag)
            ),
        ));
    }
    let resolved = || resolve_plain(value).map_err(|message| error_at(span, message));
    let node = match tag.suffix.as_str() {
        "js" => Node::Expr(value.to_owned()),
        "str" => Node::String(value.to_owned()),
        "null" => match resolved()? {
            Node::Null => Node::Null,
            _ => return Err(error_at(span, format!("`{value}` is not a !!null"))),
        },
        "bool" => match resolved()? {
            node @ Node::Bool(_) => node,
            _ => return Err(error_at(span, format!("`{value}` is not a !!bool"))),
        },
        "int" | "float" => match resolved()? {
            node @ Node::Number(_) => node,
            _ => {
                return Err(error_at(
                    span,
                    format!("`{value}` is not a !!{}", tag.suffix),
                ));
            }
        },
        _ => {
            return Err(error_at(
                span,
                format!(
                    "unknown tag {} (dsh config knows !!js and the JSON schema tags)",
                    tag_text(tag)
                ),
            ));
        }
    };
    Ok(node)
}

/// A tag as it is written: `!!js`, `!local`, or `!<uri>`.
fn tag_text(tag: &Tag) -> String {
    if tag.is_yaml_core_schema() {
        format!("!!{}", tag.suffix)
    } else if tag.handle == "!" {
        format!("!{}", tag.suffix)
    } else {
        format!("!<{}{}>", tag.handle, tag.suffix)
    }
}
