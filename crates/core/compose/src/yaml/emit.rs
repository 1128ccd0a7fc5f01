//! [`Node`] to YAML text in js-yaml's block style: two-space indentation, sequences indented
//! under their key, plain scalars where they read back unchanged, single quotes otherwise,
//! literal blocks for multi-line text, folded blocks for long lines, `!!js` for expressions.

use std::fmt::Write as _;

use super::scalar::plain_is_ambiguous;
use crate::node::Map;
use crate::node::Node;

/// The line width js-yaml folds long strings at.
const LINE_WIDTH: usize = 80;

/// Prints `node` as one YAML document (no `---` marker), ending with a newline.
pub fn to_yaml(node: &Node) -> String {
    let mut out = String::new();
    match node {
        Node::Seq(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        Node::Map(map) if !map.is_empty() => write_map(&mut out, map, 0),
        scalar => {
            write_scalar(&mut out, scalar, None);
            out.push('\n');
        }
    }
    out
}

/// Prints `rows` as a top-level block sequence (what a run of the dump is).
pub(crate) fn rows_to_yaml(rows: &[&Node]) -> String {
    let mut out = String::new();
    for row in rows {
        out.push_str("- ");
        write_seq_item(&mut out, row, 0);
    }
    out
}

fn indent(out: &mut String, columns: usize) {
    out.extend(std::iter::repeat_n(' ', columns));
}

fn write_map(out: &mut String, map: &Map, column: usize) {
    for (key, value) in map.iter() {
        indent(out, column);
        write_key(out, key, column);
        write_after_key(out, value, column);
    }
}

/// Writes what follows `key:` for a key at `column`.
fn write_after_key(out: &mut String, value: &Node, column: usize) {
    match value {
        Node::Map(map) if !map.is_empty() => {
            out.push('\n');
            write_map(out, map, column + 2);
        }
        Node::Seq(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, column + 2);
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar, Some(column));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Node], column: usize) {
    for item in items {
        indent(out, column);
        out.push_str("- ");
        write_seq_item(out, item, column);
    }
}

/// Writes one sequence item whose dash is at `dash`, after the `- `.
fn write_seq_item(out: &mut String, item: &Node, dash: usize) {
    let inner = dash + 2;
    match item {
        Node::Map(map) if !map.is_empty() => {
            for (index, (key, value)) in map.iter().enumerate() {
                if index > 0 {
                    indent(out, inner);
                }
                write_key(out, key, inner);
                write_after_key(out, value, inner);
            }
        }
        Node::Seq(items) if !items.is_empty() => {
            for (index, nested) in items.iter().enumerate() {
                if index > 0 {
                    indent(out, inner);
                }
                out.push_str("- ");
                write_seq_item(out, nested, inner);
            }
        }
        scalar => {
            write_scalar(out, scalar, Some(dash));
            out.push('\n');
        }
    }
}

/// Writes a scalar (or an empty collection). `parent` is the indentation of the node that
/// holds it; block scalars put their lines two columns further in. `None` forbids blocks.
fn write_scalar(out: &mut String, node: &Node, parent: Option<usize>) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
        Node::Number(number) => {
            let _ = write!(out, "{number}");
        }
        Node::String(text) => write_string(out, text, parent, false),
        Node::Expr(source) => {
            out.push_str("!!js ");
            write_string(out, source, parent, true);
        }
        Node::Map(_) => out.push_str("{}"),
        Node::Seq(_) => out.push_str("[]"),
    }
}

/// Keys longer than this are written in the explicit `? key` form: YAML allows at most 1024
/// characters for an implicit key, quotes and escapes included, so this leaves room for them.
const EXPLICIT_KEY_FROM: usize = 1000;

/// Writes `key:` for a key at `column`; a key too long for the implicit form is written as
/// an explicit `? key` with its `:` on the next line, as js-yaml does.
fn write_key(out: &mut String, key: &str, column: usize) {
    let explicit = key.chars().count() > EXPLICIT_KEY_FROM;
    if explicit {
        out.push_str("? ");
    }
    if is_plain_safe(key, false) {
        out.push_str(key);
    } else if is_single_quotable(key) {
        write_single_quoted(out, key);
    } else {
        write_double_quoted(out, key);
    }
    if explicit {
        out.push('\n');
        indent(out, column);
    }
    out.push(':');
}

fn write_string(out: &mut String, text: &str, parent: Option<usize>, tagged: bool) {
    if let Some(parent) = parent {
        let content = parent + 2;
        if is_foldable_text(text) {
            let width = (LINE_WIDTH.saturating_sub(content)).max(40);
            let pieces = fold_line(text, width);
            if pieces.len() > 1 {
                out.push_str(">-\n");
                for piece in pieces {
                    indent(out, content);
                    out.push_str(piece);
                    out.push('\n');
                }
                out.pop();
                return;
            }
        }
        if text.contains('\n') && is_literal_text(text) {
            write_literal(out, text, content);
            return;
        }
    }
    if is_plain_safe(text, tagged) {
        out.push_str(text);
    } else if is_single_quotable(text) {
        write_single_quoted(out, text);
    } else {
        write_double_quoted(out, text);
    }
}

/// Characters YAML can hold outside double quotes.
fn is_printable(c: char) -> bool {
    matches!(c,
        '\u{20}'..='\u{7e}'
        | '\u{a0}'..='\u{d7ff}'
        | '\u{e000}'..='\u{fefe}'
        | '\u{ff00}'..='\u{fffd}'
        | '\u{10000}'..='\u{10ffff}')
}

fn is_plain_safe(text: &str, tagged: bool) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let last = text.chars().next_back().unwrap_or(first);
    !"-?:,[]{}#&*!|>'\"%@`=".contains(first)
        && first != ' '
        && last != ' '
        && last != ':'
        && text.chars().all(is_printable)
        && !text.contains(": ")
        && !text.contains(" #")
        && (tagged || !plain_is_ambiguous(text))
}

fn is_single_quotable(text: &str) -> bool {
    text.chars().all(|c| is_printable(c) || c == '\t')
}

fn is_literal_text(text: &str) -> bool {
    text.chars()
        .all(|c| is_printable(c) || c == '\t' || c == '\n')
}

/// A single line that folding can break: printable, no tabs, not starting with a space.
fn is_foldable_text(text: &str) -> bool {
    !text.starts_with(' ') && text.chars().all(is_printable)
}

fn write_single_quoted(out: &mut String, text: &str) {
    out.push('\'');
    out.push_str(&text.replace('\'', "''"));
    out.push('\'');
}

fn write_double_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_printable(c) => out.push(c),
            c if u32::from(c) <= 0xff => {
                let _ = write!(out, "\\x{:02X}", u32::from(c));
            }
            c if u32::from(c) <= 0xffff => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
        }
    }
    out.push('"');
}

/// A `|` block with its lines at column `content`.
fn write_literal(out: &mut String, text: &str, content: usize) {
    out.push('|');
    let starts_indented = text
        .split('\n')
        .find(|line| !line.is_empty())
        .is_some_and(|line| line.starts_with(' '));
    if starts_indented {
        out.push('2');
    }
    let body = text.trim_end_matches('\n');
    let trailing = text.len() - body.len();
    out.push_str(match trailing {
        0 => "-",
        1 if !body.is_empty() => "",
        _ => "+",
    });
    out.push('\n');
    let lines = if trailing > 0 {
        &text[..text.len() - 1]
    } else {
        text
    };
    for line in lines.split('\n') {
        if !line.is_empty() {
            indent(out, content);
            out.push_str(line);
        }
        out.push('\n');
    }
    out.pop();
}

/// js-yaml's `foldLine`: breaks at a space followed by a non-space so each piece is at most
/// `width` long where possible; the space a break replaces is dropped.
fn fold_line(line: &str, width: usize) -> Vec<&str> {
    let bytes = line.as_bytes();
    let breaks = bytes
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| matches!(pair, [b' ', next] if !matches!(next, b' ' | b'\t')))
        .map(|(at, _)| at);
    let mut pieces = Vec::new();
    let (mut start, mut current) = (0, 0);
    for next in breaks {
        if next - start > width {
            let end = if current > start { current } else { next };
            pieces.push(&line[start..end]);
            start = end + 1;
        }
        current = next;
    }
    if line.len() - start > width && current > start {
        pieces.push(&line[start..current]);
        pieces.push(&line[current + 1..]);
    } else {
        pieces.push(&line[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::yaml::parse_document;

    fn row(pairs: &[(&str, Node)]) -> Node {
        Node::Map(
            pairs
                .iter()
                .map(|(key, value)| ((*key).to_owned(), value.clone()))
                .collect(),
        )
    }

    #[test]
    fn rows_print_in_js_yaml_block_style() {
        let tree = Node::Seq(vec![
            row(&[
                ("id", Node::String("hmr".into())),
                (
                    "name",
                    Node::String("@deepseek-ai/cordis-plugin-hmr".into()),
                ),
                (
                    "config",
                    row(&[("root", Node::Seq(vec![Node::String(".".into())]))]),
                ),
                ("disabled", Node::Bool(true)),
            ]),
            row(&[
                ("id", Node::String("webserver".into())),
                ("inject", Node::Seq(vec![Node::String("webStartup".into())])),
                (
                    "config",
                    row(&[
                        (
                            "host",
                            Node::Expr("ctx.webStartup.host ?? '127.0.0.1'".into()),
                        ),
                        ("port", Node::Expr("ctx.webStartup.port ?? 3080".into())),
                        ("agents", Node::Seq(vec![])),
                        ("extra", Node::Map(Map::new())),
                        ("empty", Node::String(String::new())),
                        ("version", Node::String("1.0".into())),
                    ]),
                ),
            ]),
        ]);
        assert_eq!(
            to_yaml(&tree),
            "- id: hmr\n  name: '@deepseek-ai/cordis-plugin-hmr'\n  config:\n    root:\n      - .\n  disabled: true\n\
             - id: webserver\n  inject:\n    - webStartup\n  config:\n    host: !!js ctx.webStartup.host ?? '127.0.0.1'\n    port: !!js ctx.webStartup.port ?? 3080\n    agents: []\n    extra: {}\n    empty: ''\n    version: '1.0'\n"
        );
    }

    #[test]
    fn long_lines_fold_like_js_yaml() {
        let policy = "(process.env.DSH_PERMISSION_MODE ?? 'workspace-write') === 'danger-full-access' ? 'never' : 'ask'";
        let tree = Node::Seq(vec![row(&[(
            "config",
            row(&[("policy", Node::Expr(policy.into()))]),
        )])]);
        let text = to_yaml(&tree);
        assert_eq!(
            text,
            "- config:\n    policy: !!js >-\n      (process.env.DSH_PERMISSION_MODE ?? 'workspace-write') ===\n      'danger-full-access' ? 'never' : 'ask'\n"
        );
        assert_eq!(parse_document(&text).unwrap(), Some(tree));
    }

    #[test]
    fn multi_line_text_prints_as_a_literal_block() {
        let tree = Node::Seq(vec![row(&[(
            "section",
            Node::String("first line\n  indented\n\nlast\n".into()),
        )])]);
        let text = to_yaml(&tree);
        assert_eq!(
            text,
            "- section: |\n    first line\n      indented\n\n    last\n"
        );
        assert_eq!(parse_document(&text).unwrap(), Some(tree));
    }
}
