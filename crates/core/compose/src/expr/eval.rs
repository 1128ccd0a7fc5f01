//! Evaluating expressions with JavaScript's semantics for the supported subset.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::ExprError;
use super::parser::Ast;
use super::parser::BinaryOp;
use super::parser::Expression;
use crate::profile::join_normalized;
use crate::yaml::number_from_f64;

/// What expressions can see of the launch: the environment snapshot, the working directory,
/// `$DSH_HOME` and the platform, all fixed when the process started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchEnv {
    /// `process.env`.
    pub env: BTreeMap<String, String>,
    /// `process.cwd()`.
    pub cwd: String,
    /// The root `dshHomePath(...)` joins onto.
    pub dsh_home: PathBuf,
    /// `process.platform`, with Node's names (`linux`, `darwin`, `win32`, ...).
    pub platform: String,
    /// `process.arch`, with Node's names (`x64`, `arm64`, ...).
    pub arch: String,
}

impl LaunchEnv {
    /// A snapshot of this process's environment (variables that are not UTF-8 are left out),
    /// working directory and platform, with `dsh_home` (made absolute against the working
    /// directory) as `$DSH_HOME`.
    pub fn capture(dsh_home: PathBuf) -> Self {
        let dsh_home = std::path::absolute(&dsh_home).unwrap_or(dsh_home);
        Self {
            env: std::env::vars_os()
                .filter_map(|(key, value)| {
                    Some((key.into_string().ok()?, value.into_string().ok()?))
                })
                .collect(),
            cwd: std::env::current_dir()
                .map(|dir| dir.to_string_lossy().into_owned())
                .unwrap_or_default(),
            dsh_home,
            platform: node_platform().to_owned(),
            arch: node_arch().to_owned(),
        }
    }
}

/// `process.platform` as Node names this OS.
fn node_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        "solaris" | "illumos" => "sunos",
        other => other,
    }
}

/// `process.arch` as Node names this CPU.
fn node_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        "powerpc64" => "ppc64",
        "loongarch64" => "loong64",
        other => other,
    }
}

/// Looks up the fields an injected service exposes, for `ctx.<service>`: `Ok(None)` when the
/// service exposes none, `Err` with the reason when it cannot be read.
pub type Services<'a> = &'a dyn Fn(&str) -> Result<Option<Value>, String>;

#[derive(Debug, Clone, PartialEq)]
enum Js {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Js>),
    Object(Vec<(String, Js)>),
    Builtin(Builtin),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    Process,
    ProcessEnv,
    Cwd,
    DshHomePath,
    Json,
    JsonParse,
    Ctx,
}

impl Expression {
    /// Evaluates the expression; `None` means JavaScript's `undefined`. `services` is `None`
    /// where `ctx` is not available (in `disabled`).
    pub fn evaluate(
        &self,
        launch: &LaunchEnv,
        services: Option<Services<'_>>,
    ) -> Result<Option<Value>, ExprError> {
        let scope = Scope { launch, services };
        let fail = |message: String| ExprError {
            source_text: self.source().to_owned(),
            message,
        };
        let value = scope.eval(self.ast()).map_err(fail)?;
        to_json(value).map_err(fail)
    }

    /// Evaluates the expression for its JavaScript truthiness (as `disabled` does).
    pub fn evaluate_truthy(&self, launch: &LaunchEnv) -> Result<bool, ExprError> {
        let scope = Scope {
            launch,
            services: None,
        };
        scope
            .eval(self.ast())
            .map(|value| truthy(&value))
            .map_err(|message| ExprError {
                source_text: self.source().to_owned(),
                message,
            })
    }
}

struct Scope<'a> {
    launch: &'a LaunchEnv,
    services: Option<Services<'a>>,
}

impl Scope<'_> {
    fn eval(&self, ast: &Ast) -> Result<Js, String> {
        Ok(match ast {
            Ast::String(text) => Js::String(text.clone()),
            Ast::Number(number) => Js::Number(*number),
            Ast::Bool(value) => Js::Bool(*value),
            Ast::Null => Js::Null,
            Ast::Undefined => Js::Undefined,
            Ast::Name(name) => self.name(name)?,
            Ast::Member { .. } | Ast::Call { .. } => self.chain(ast)?.unwrap_or(Js::Undefined),
            Ast::Paren(inner) => self.eval(inner)?,
            Ast::Not(inner) => Js::Bool(!truthy(&self.eval(inner)?)),
            Ast::Binary { op, left, right } => {
                let left = self.eval(left)?;
                match op {
                    BinaryOp::And if !truthy(&left) => left,
                    BinaryOp::Or if truthy(&left) => left,
                    BinaryOp::Nullish if !matches!(left, Js::Null | Js::Undefined) => left,
                    BinaryOp::And | BinaryOp::Or | BinaryOp::Nullish => self.eval(right)?,
                    BinaryOp::StrictEq => Js::Bool(left == self.eval(right)?),
                    BinaryOp::StrictNe => Js::Bool(left != self.eval(right)?),
                }
            }
            Ast::Conditional {
                test,
                then,
                otherwise,
            } => {
                if truthy(&self.eval(test)?) {
                    self.eval(then)?
                } else {
                    self.eval(otherwise)?
                }
            }
        })
    }

    /// Evaluates a member/call chain; `None` when a `?.` met null or undefined, which makes
    /// the rest of the chain undefined.
    fn chain(&self, ast: &Ast) -> Result<Option<Js>, String> {
        match ast {
            Ast::Member {
                object,
                property,
                optional,
            } => {
                let Some(object) = self.chain(object)? else {
                    return Ok(None);
                };
                if *optional && matches!(object, Js::Null | Js::Undefined) {
                    return Ok(None);
                }
                let key = property_key(&self.eval(property)?)?;
                self.member(object, &key).map(Some)
            }
            Ast::Call { callee, args } => {
                let Some(callee) = self.chain(callee)? else {
                    return Ok(None);
                };
                let args = args
                    .iter()
                    .map(|arg| self.eval(arg))
                    .collect::<Result<Vec<_>, _>>()?;
                self.call(callee, args).map(Some)
            }
            other => self.eval(other).map(Some),
        }
    }

    fn name(&self, name: &str) -> Result<Js, String> {
        Ok(Js::Builtin(match name {
            "process" => Builtin::Process,
            "dshHomePath" => Builtin::DshHomePath,
            "JSON" => Builtin::Json,
            "ctx" if self.services.is_some() => Builtin::Ctx,
            "ctx" => {
                return Err(
                    "`ctx` is not available here; services can be read in a row's config only"
                        .to_owned(),
                );
            }
            other => {
                return Err(format!(
                    "unknown name `{other}`; config expressions can use process, ctx, \
                     dshHomePath and JSON"
                ));
            }
        }))
    }

    fn member(&self, object: Js, key: &str) -> Result<Js, String> {
        Ok(match object {
            Js::Undefined | Js::Null => {
                let what = if object == Js::Null {
                    "null"
                } else {
                    "undefined"
                };
                return Err(format!("cannot read property \"{key}\" of {what}"));
            }
            Js::Builtin(Builtin::Process) => match key {
                "env" => Js::Builtin(Builtin::ProcessEnv),
                "platform" => Js::String(self.launch.platform.clone()),
                "arch" => Js::String(self.launch.arch.clone()),
                "cwd" => Js::Builtin(Builtin::Cwd),
                _ => Js::Undefined,
            },
            Js::Builtin(Builtin::ProcessEnv) => self
                .launch
                .env
                .get(key)
                .map_or(Js::Undefined, |value| Js::String(value.clone())),
            Js::Builtin(Builtin::Json) if key == "parse" => Js::Builtin(Builtin::JsonParse),
            Js::Builtin(Builtin::Ctx) => {
                let lookup = self.services.ok_or("`ctx` is not available here")?;
                match lookup(key)? {
                    Some(fields) => from_json(fields),
                    None => {
                        return Err(format!(
                            "service \"{key}\" exposes no fields to config expressions"
                        ));
                    }
                }
            }
            Js::Object(entries) => entries
                .into_iter()
                .find(|(name, _)| name == key)
                .map_or(Js::Undefined, |(_, value)| value),
            Js::Array(items) if key == "length" => Js::Number(items.len() as f64),
            Js::Array(items) => key
                .parse::<usize>()
                .ok()
                .and_then(|index| items.into_iter().nth(index))
                .unwrap_or(Js::Undefined),
            Js::String(text) if key == "length" => Js::Number(text.encode_utf16().count() as f64),
            _ => Js::Undefined,
        })
    }

    fn call(&self, callee: Js, args: Vec<Js>) -> Result<Js, String> {
        match callee {
            Js::Builtin(Builtin::Cwd) => Ok(Js::String(self.launch.cwd.clone())),
            Js::Builtin(Builtin::DshHomePath) => {
                let mut segments = Vec::with_capacity(args.len());
                for arg in &args {
                    match arg {
                        Js::String(segment) => segments.push(segment.as_str()),
                        other => {
                            return Err(format!(
                                "dshHomePath takes strings, got {}",
                                type_name(other)
                            ));
                        }
                    }
                }
                let path = join_normalized(&self.launch.dsh_home, &segments);
                Ok(Js::String(path.to_string_lossy().into_owned()))
            }
            Js::Builtin(Builtin::JsonParse) => match args.into_iter().next() {
                Some(Js::String(text)) => serde_json::from_str::<Value>(&text)
                    .map(from_json)
                    .map_err(|error| format!("JSON.parse: {error}")),
                Some(other) => Err(format!(
                    "JSON.parse takes a string, got {}",
                    type_name(&other)
                )),
                None => Err("JSON.parse takes a string, got nothing".to_owned()),
            },
            other => Err(format!("{} is not a function", type_name(&other))),
        }
    }
}

fn property_key(key: &Js) -> Result<String, String> {
    match key {
        Js::String(text) => Ok(text.clone()),
        Js::Number(number) => Ok(number.to_string()),
        other => Err(format!("{} cannot be a property name", type_name(other))),
    }
}

fn type_name(value: &Js) -> &'static str {
    match value {
        Js::Undefined => "undefined",
        Js::Null => "null",
        Js::Bool(_) => "a boolean",
        Js::Number(_) => "a number",
        Js::String(_) => "a string",
        Js::Array(_) => "an array",
        Js::Object(_) => "an object",
        Js::Builtin(_) => "a built-in",
    }
}

fn truthy(value: &Js) -> bool {
    match value {
        Js::Undefined | Js::Null => false,
        Js::Bool(value) => *value,
        Js::Number(number) => *number != 0.0 && !number.is_nan(),
        Js::String(text) => !text.is_empty(),
        Js::Array(_) | Js::Object(_) | Js::Builtin(_) => true,
    }
}

fn from_json(value: Value) -> Js {
    match value {
        Value::Null => Js::Null,
        Value::Bool(value) => Js::Bool(value),
        Value::Number(number) => Js::Number(number.as_f64().unwrap_or(f64::NAN)),
        Value::String(text) => Js::String(text),
        Value::Array(items) => Js::Array(items.into_iter().map(from_json).collect()),
        Value::Object(entries) => Js::Object(
            entries
                .into_iter()
                .map(|(key, value)| (key, from_json(value)))
                .collect(),
        ),
    }
}

/// The JSON form of a result, `None` for `undefined` (which JSON leaves out of objects and
/// writes as `null` in arrays, as `JSON.stringify` does).
fn to_json(value: Js) -> Result<Option<Value>, String> {
    Ok(Some(match value {
        Js::Undefined => return Ok(None),
        Js::Null => Value::Null,
        Js::Bool(value) => Value::Bool(value),
        Js::Number(number) => Value::Number(
            number_from_f64(number)
                .ok_or_else(|| format!("the result {number} is not a finite number"))?,
        ),
        Js::String(text) => Value::String(text),
        Js::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| to_json(item).map(|item| item.unwrap_or(Value::Null)))
                .collect::<Result<_, _>>()?,
        ),
        Js::Object(entries) => {
            let mut object = serde_json::Map::new();
            for (key, value) in entries {
                if let Some(value) = to_json(value)? {
                    object.insert(key, value);
                }
            }
            Value::Object(object)
        }
        Js::Builtin(_) => {
            return Err(
                "the result is a built-in (process, process.env, JSON or a function), not a value"
                    .to_owned(),
            );
        }
    }))
}
