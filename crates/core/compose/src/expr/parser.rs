//! Tokens and syntax of the expression subset.

use super::ExprError;

/// A parsed expression, ready to evaluate many times.
#[derive(Debug, Clone, PartialEq)]
pub struct Expression {
    source: String,
    ast: Ast,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ast {
    String(String),
    Number(f64),
    Bool(bool),
    Null,
    Undefined,
    Name(String),
    Member {
        object: Box<Ast>,
        property: Box<Ast>,
        optional: bool,
    },
    Call {
        callee: Box<Ast>,
        args: Vec<Ast>,
    },
    /// A parenthesized expression: it ends an optional chain, as in JavaScript.
    Paren(Box<Ast>),
    Not(Box<Ast>),
    Binary {
        op: BinaryOp,
        left: Box<Ast>,
        right: Box<Ast>,
    },
    Conditional {
        test: Box<Ast>,
        then: Box<Ast>,
        otherwise: Box<Ast>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinaryOp {
    StrictEq,
    StrictNe,
    And,
    Or,
    Nullish,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    String(String),
    Number(f64),
    Punct(&'static str),
}

/// Bounds the parser's recursion, which each `(`, `[`, `!` and `?` deepens by one.
const MAX_NESTING: usize = 64;

const PUNCTUATION: [&str; 15] = [
    "===", "!==", "?.", "??", "||", "&&", "!", "?", ":", ".", ",", "(", ")", "[", "]",
];

impl Expression {
    /// Parses `source`.
    pub fn parse(source: &str) -> Result<Self, ExprError> {
        let fail = |message: String| ExprError {
            source_text: source.to_owned(),
            message,
        };
        let tokens = tokenize(source).map_err(fail)?;
        let nesting = tokens
            .iter()
            .filter(|token| matches!(token, Token::Punct("(" | "[" | "!" | "?")))
            .count();
        if nesting > MAX_NESTING {
            return Err(fail(format!(
                "too deeply nested (more than {MAX_NESTING} parentheses, brackets, `!` and `?`)"
            )));
        }
        let mut parser = Parser { tokens, at: 0 };
        let ast = parser.conditional().map_err(fail)?;
        if let Some(token) = parser.peek() {
            return Err(fail(format!("unexpected {}", describe(token))));
        }
        Ok(Self {
            source: source.to_owned(),
            ast,
        })
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub(crate) fn ast(&self) -> &Ast {
        &self.ast
    }
}

fn describe(token: &Token) -> String {
    match token {
        Token::Name(name) => format!("name `{name}`"),
        Token::String(text) => format!("string {text:?}"),
        Token::Number(number) => format!("number {number}"),
        Token::Punct(punct) => format!("`{punct}`"),
    }
}

fn tokenize(source: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut rest = source;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
        } else if c == '\'' || c == '"' {
            let (text, after) = string_literal(rest, c)?;
            tokens.push(Token::String(text));
            rest = after;
        } else if c.is_ascii_digit() {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
                .unwrap_or(rest.len());
            let text = &rest[..end];
            let number = text
                .parse::<f64>()
                .map_err(|_| format!("`{text}` is not a supported number literal"))?;
            tokens.push(Token::Number(number));
            rest = &rest[end..];
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len());
            tokens.push(Token::Name(rest[..end].to_owned()));
            rest = &rest[end..];
        } else if let Some(punct) = PUNCTUATION.iter().find(|p| rest.starts_with(**p)) {
            // `a ?.5 : b` is a conditional, not optional chaining.
            let optional_digit =
                *punct == "?." && rest[2..].chars().next().is_some_and(|c| c.is_ascii_digit());
            let punct = if optional_digit { "?" } else { punct };
            tokens.push(Token::Punct(punct));
            rest = &rest[punct.len()..];
        } else {
            let operator: String = rest
                .chars()
                .take_while(|c| "=+-*/%<>&|^~;{}`".contains(*c))
                .collect();
            let shown = if operator.is_empty() {
                c.to_string()
            } else {
                operator
            };
            return Err(format!(
                "`{shown}` is not supported in dsh config expressions{}",
                if shown == "==" || shown == "!=" {
                    " (use === or !==)"
                } else {
                    ""
                }
            ));
        }
    }
    Ok(tokens)
}

/// A string literal starting at `source` (on its quote), with JavaScript's escapes; returns
/// the text and what follows the closing quote.
fn string_literal(source: &str, quote: char) -> Result<(String, &str), String> {
    let mut text = String::new();
    let mut chars = source.char_indices().skip(1).peekable();
    while let Some((at, c)) = chars.next() {
        if c == quote {
            return Ok((text, source.get(at + 1..).unwrap_or_default()));
        }
        if c != '\\' {
            text.push(c);
            continue;
        }
        let (_, escaped) = chars
            .next()
            .ok_or_else(|| "unterminated string literal".to_owned())?;
        match escaped {
            'n' => text.push('\n'),
            't' => text.push('\t'),
            'r' => text.push('\r'),
            'b' => text.push('\u{8}'),
            'f' => text.push('\u{c}'),
            'v' => text.push('\u{b}'),
            '0' if !chars.peek().is_some_and(|(_, next)| next.is_ascii_digit()) => text.push('\0'),
            'x' => {
                let hex: String = chars.by_ref().take(2).map(|(_, c)| c).collect();
                text.push(hex_char(&hex, 2).ok_or_else(|| format!("bad escape \\x{hex}"))?);
            }
            'u' => {
                let code = unicode_escape(&mut chars)?;
                let code = if (0xD800..0xDC00).contains(&code) {
                    // A high surrogate must pair with a low one: `\uD83D\uDE00`.
                    let low = match (chars.next(), chars.next()) {
                        (Some((_, '\\')), Some((_, 'u'))) => unicode_escape(&mut chars)?,
                        _ => return Err(format!("lone surrogate \\u{code:04X}")),
                    };
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(format!("lone surrogate \\u{code:04X}"));
                    }
                    0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    code
                };
                text.push(
                    char::from_u32(code).ok_or_else(|| format!("lone surrogate \\u{code:04X}"))?,
                );
            }
            '1'..='9' | '0' => return Err("octal escapes are not allowed".to_owned()),
            '\n' | '\u{2028}' | '\u{2029}' => {}
            '\r' => {
                chars.next_if(|(_, next)| *next == '\n');
            }
            other => text.push(other),
        }
    }
    Err("unterminated string literal".to_owned())
}

/// The code of `\uXXXX` or `\u{X...}`, after the `u`.
fn unicode_escape(
    chars: &mut std::iter::Peekable<impl Iterator<Item = (usize, char)>>,
) -> Result<u32, String> {
    if chars.next_if(|(_, c)| *c == '{').is_some() {
        let hex: String = chars
            .by_ref()
            .map(|(_, c)| c)
            .take_while(|c| *c != '}')
            .collect();
        return u32::from_str_radix(&hex, 16)
            .ok()
            .filter(|code| !hex.is_empty() && hex.len() <= 6 && *code <= 0x10_FFFF)
            .ok_or_else(|| format!("bad escape \\u{{{hex}}}"));
    }
    let hex: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
    hex_code(&hex, 4).ok_or_else(|| format!("bad escape \\u{hex}"))
}

fn hex_code(hex: &str, digits: usize) -> Option<u32> {
    (hex.len() == digits && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| u32::from_str_radix(hex, 16).ok())
        .flatten()
}

fn hex_char(hex: &str, digits: usize) -> Option<char> {
    hex_code(hex, digits).and_then(char::from_u32)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, punct: &str) -> bool {
        if matches!(self.peek(), Some(Token::Punct(p)) if *p == punct) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: &str) -> Result<(), String> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(match self.peek() {
                Some(token) => format!("expected `{punct}`, found {}", describe(token)),
                None => format!("expected `{punct}` before the end"),
            })
        }
    }

    fn conditional(&mut self) -> Result<Ast, String> {
        let test = self.logical()?;
        if !self.eat("?") {
            return Ok(test);
        }
        let then = self.conditional()?;
        self.expect(":")?;
        let otherwise = self.conditional()?;
        Ok(Ast::Conditional {
            test: Box::new(test),
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        })
    }

    /// `||` and `??` chains; JavaScript forbids mixing `??` with `||` or `&&` unparenthesized.
    fn logical(&mut self) -> Result<Ast, String> {
        let (mut left, mut bare_and) = self.and()?;
        let mut chain: Option<BinaryOp> = None;
        loop {
            let op = if self.eat("||") {
                BinaryOp::Or
            } else if self.eat("??") {
                BinaryOp::Nullish
            } else {
                return Ok(left);
            };
            let (right, right_bare_and) = self.and()?;
            let mixes = chain.is_some_and(|previous| previous != op)
                || (op == BinaryOp::Nullish && (bare_and || right_bare_and));
            if mixes {
                return Err("`??` cannot be mixed with `||` or `&&` without parentheses".to_owned());
            }
            chain = Some(op);
            bare_and = false;
            left = Ast::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    /// An `&&` chain, and whether it is one (unparenthesized).
    fn and(&mut self) -> Result<(Ast, bool), String> {
        let mut left = self.equality()?;
        let mut chained = false;
        while self.eat("&&") {
            let right = self.equality()?;
            chained = true;
            left = Ast::Binary {
                op: BinaryOp::And,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
        Ok((left, chained))
    }

    fn equality(&mut self) -> Result<Ast, String> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat("===") {
                BinaryOp::StrictEq
            } else if self.eat("!==") {
                BinaryOp::StrictNe
            } else {
                return Ok(left);
            };
            let right = self.unary()?;
            left = Ast::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    fn unary(&mut self) -> Result<Ast, String> {
        if self.eat("!") {
            return Ok(Ast::Not(Box::new(self.unary()?)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Ast, String> {
        let mut node = self.primary()?;
        loop {
            if self.eat(".") || self.eat("?.") {
                let optional = matches!(self.tokens.get(self.at - 1), Some(Token::Punct("?.")));
                if optional && self.eat("(") {
                    return Err("optional calls `?.(` are not supported".to_owned());
                }
                let property = if optional && self.eat("[") {
                    let property = self.conditional()?;
                    self.expect("]")?;
                    property
                } else {
                    match self.peek().cloned() {
                        Some(Token::Name(name)) => {
                            self.at += 1;
                            Ast::String(name)
                        }
                        Some(token) => {
                            return Err(format!(
                                "expected a property name, found {}",
                                describe(&token)
                            ));
                        }
                        None => return Err("expected a property name before the end".to_owned()),
                    }
                };
                node = Ast::Member {
                    object: Box::new(node),
                    property: Box::new(property),
                    optional,
                };
            } else if self.eat("[") {
                let property = self.conditional()?;
                self.expect("]")?;
                node = Ast::Member {
                    object: Box::new(node),
                    property: Box::new(property),
                    optional: false,
                };
            } else if self.eat("(") {
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.conditional()?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                node = Ast::Call {
                    callee: Box::new(node),
                    args,
                };
            } else {
                return Ok(node);
            }
        }
    }

    fn primary(&mut self) -> Result<Ast, String> {
        let Some(token) = self.peek().cloned() else {
            return Err("unexpected end of expression".to_owned());
        };
        self.at += 1;
        Ok(match token {
            Token::String(text) => Ast::String(text),
            Token::Number(number) => Ast::Number(number),
            Token::Name(name) => match name.as_str() {
                "true" => Ast::Bool(true),
                "false" => Ast::Bool(false),
                "null" => Ast::Null,
                "undefined" => Ast::Undefined,
                _ => Ast::Name(name),
            },
            Token::Punct("(") => {
                let inner = self.conditional()?;
                self.expect(")")?;
                Ast::Paren(Box::new(inner))
            }
            Token::Punct(punct) => return Err(format!("unexpected `{punct}`")),
        })
    }
}
