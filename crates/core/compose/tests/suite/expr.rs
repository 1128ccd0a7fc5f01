//! The `!!js` subset: what dsh's bundles write evaluates as in Node, the rest is refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use dsh_compose::expr::Expression;
use dsh_compose::expr::LaunchEnv;
use dsh_compose::expr::Template;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::support::yaml;

fn launch(env: &[(&str, &str)]) -> LaunchEnv {
    LaunchEnv {
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
        cwd: "/work/project".to_owned(),
        dsh_home: PathBuf::from("/home/me/.dsh"),
        platform: "linux".to_owned(),
        arch: "x64".to_owned(),
    }
}

fn services(name: &str) -> Result<Option<Value>, String> {
    match name {
        "headlessStartup" => Ok(Some(json!({"task": "run the tests"}))),
        "webStartup" => Ok(Some(
            json!({"host": null, "port": 0, "openBrowser": false, "trustedHosts": ["a.test"]}),
        )),
        "silent" => Ok(None),
        other => Err(format!("row \"x\" does not inject service \"{other}\"")),
    }
}

fn eval(source: &str, env: &[(&str, &str)]) -> Option<Value> {
    Expression::parse(source)
        .unwrap()
        .evaluate(&launch(env), Some(&services))
        .unwrap()
}

fn error(source: &str) -> String {
    match Expression::parse(source) {
        Err(error) => error.to_string(),
        Ok(expression) => expression
            .evaluate(&launch(&[]), Some(&services))
            .unwrap_err()
            .to_string(),
    }
}

#[test]
fn the_expressions_dsh_bundles_ship_evaluate_as_in_node() {
    assert_eq!(
        eval("process.platform === 'win32'", &[]),
        Some(json!(false))
    );
    assert_eq!(eval("process.platform !== 'win32'", &[]), Some(json!(true)));
    assert_eq!(eval("process.cwd()", &[]), Some(json!("/work/project")));
    assert_eq!(
        eval("dshHomePath('sessions')", &[]),
        Some(json!("/home/me/.dsh/sessions"))
    );
    assert_eq!(
        eval("dshHomePath('a', 'b.json')", &[]),
        Some(json!("/home/me/.dsh/a/b.json"))
    );
    assert_eq!(
        eval("process.env.DSH_PERMISSION_MODE ?? 'workspace-write'", &[]),
        Some(json!("workspace-write"))
    );
    assert_eq!(
        eval(
            "process.env.DSH_PERMISSION_MODE ?? 'workspace-write'",
            &[("DSH_PERMISSION_MODE", "")]
        ),
        Some(json!("")),
        "?? keeps an empty string"
    );
    assert_eq!(
        eval(
            "process.env.DSH_TELEMETRY_MODE || 'DISABLED'",
            &[("DSH_TELEMETRY_MODE", "")]
        ),
        Some(json!("DISABLED")),
        "|| does not"
    );
    let policy = "(process.env.DSH_PERMISSION_MODE ?? 'workspace-write') === 'danger-full-access' ? 'never' : 'ask'";
    assert_eq!(eval(policy, &[]), Some(json!("ask")));
    assert_eq!(
        eval(policy, &[("DSH_PERMISSION_MODE", "danger-full-access")]),
        Some(json!("never"))
    );
    assert_eq!(
        eval("process.env.DSH_TOOLS_MODE", &[]),
        None,
        "unset is undefined"
    );
    assert_eq!(
        eval("ctx.headlessStartup.task", &[]),
        Some(json!("run the tests"))
    );
    assert_eq!(
        eval("ctx.webStartup.host ?? '127.0.0.1'", &[]),
        Some(json!("127.0.0.1"))
    );
    assert_eq!(
        eval("ctx.webStartup.port ?? 3080", &[]),
        Some(json!(0)),
        "0 is not nullish"
    );
    assert_eq!(
        eval("ctx.webStartup.trustedHosts", &[]),
        Some(json!(["a.test"]))
    );
    assert_eq!(
        eval("JSON.parse(process.env.X)", &[("X", "{\"a\": [1, 2.5]}")]),
        Some(json!({"a": [1, 2.5]}))
    );
    assert_eq!(eval("ctx.webStartup?.missing?.deeper", &[]), None);
    assert_eq!(
        eval("!process.env.NOPE && \"yes\"", &[]),
        Some(json!("yes"))
    );
    assert_eq!(
        eval("process.env['DSH_X']", &[("DSH_X", "1")]),
        Some(json!("1"))
    );
}

#[test]
fn optional_chains_short_circuit_to_the_end_of_the_chain_as_in_javascript() {
    assert_eq!(eval("JSON.parse(process.env.X ?? 'null')?.a.b", &[]), None);
    assert_eq!(
        eval(
            "JSON.parse(process.env.X)?.a.b",
            &[("X", "{\"a\": {\"b\": 2}}")]
        ),
        Some(json!(2))
    );
    assert!(error("(JSON.parse('null')?.a).b").contains("cannot read property \"b\" of undefined"));
}

#[test]
fn string_escapes_follow_javascript() {
    assert_eq!(
        eval(r"'\x41\u0042\u{43}\t\'\\'", &[]),
        Some(json!("ABC\t'\\"))
    );
    assert_eq!(eval(r"'\uD83D\uDE00'", &[]), Some(json!("\u{1F600}")));
    assert_eq!(
        eval(r"'\d'", &[]),
        Some(json!("d")),
        "an unknown escape is the character itself"
    );
    assert!(error(r"'\uD83D'").contains("lone surrogate"));
    assert!(error(r"'\x4'").contains("bad escape"));
}

#[test]
fn dsh_home_path_joins_like_node_path_join() {
    assert_eq!(
        eval("dshHomePath('/etc')", &[]),
        Some(json!("/home/me/.dsh/etc"))
    );
    assert_eq!(
        eval("dshHomePath('a/./b', '../c')", &[]),
        Some(json!("/home/me/.dsh/a/c"))
    );
    assert_eq!(eval("dshHomePath()", &[]), Some(json!("/home/me/.dsh")));
    assert_eq!(eval("dshHomePath('')", &[]), Some(json!("/home/me/.dsh")));
}

#[test]
fn deeply_nested_expressions_are_refused_not_overflowing_the_stack() {
    let deep = format!("{}true", "!".repeat(10_000));
    assert!(error(&deep).contains("too deeply nested"));
    let parens = format!("{}1{}", "(".repeat(5_000), ")".repeat(5_000));
    assert!(error(&parens).contains("too deeply nested"));
}

#[test]
fn anything_else_is_refused_with_the_expression_named() {
    let cases = [
        (
            "process.env.A ?? 'x' || 'y'",
            "`??` cannot be mixed with `||` or `&&` without parentheses",
        ),
        ("process.env.A && 'x' ?? 'y'", "`??` cannot be mixed"),
        ("1 + 2", "`+` is not supported in dsh config expressions"),
        (
            "process.env.A == 'x'",
            "`==` is not supported in dsh config expressions (use === or !==)",
        ),
        ("require('fs')", "unknown name `require`"),
        (
            "process.env.NOPE.length",
            "cannot read property \"length\" of undefined",
        ),
        (
            "ctx.other.field",
            "row \"x\" does not inject service \"other\"",
        ),
        (
            "ctx.silent.field",
            "service \"silent\" exposes no fields to config expressions",
        ),
        ("JSON.parse('{')", "JSON.parse: "),
        (
            "process.cwd",
            "the result is a built-in (process, process.env, JSON or a function), not a value",
        ),
        ("'unterminated", "unterminated string literal"),
        ("(process.platform", "expected `)` before the end"),
    ];
    for (source, expected) in cases {
        let message = error(source);
        assert!(
            message.starts_with(&format!("expression `{source}`: ")),
            "{message}"
        );
        assert!(message.contains(expected), "{source}: {message}");
    }
}

#[test]
fn ctx_is_not_available_where_no_services_are() {
    let expression = Expression::parse("ctx.headlessStartup.task").unwrap();
    let message = expression
        .evaluate_truthy(&launch(&[]))
        .unwrap_err()
        .to_string();
    assert!(message.contains("`ctx` is not available here"), "{message}");
}

#[test]
fn a_template_resolves_expressions_and_leaves_out_undefined_keys() {
    let node = yaml(
        "{mode: !!js process.env.DSH_TOOLS_MODE, root: !!js dshHomePath('s'), list: [!!js process.env.NOPE, 1], fixed: {a: b}}",
    );
    let template = Template::compile(&node, "config").unwrap();
    assert!(template.as_literal().is_none());
    let value = template
        .resolve("config", &launch(&[]), Some(&services))
        .unwrap();
    assert_eq!(
        value,
        json!({"root": "/home/me/.dsh/s", "list": [null, 1], "fixed": {"a": "b"}})
    );

    let literal = Template::compile(&yaml("{a: [1, {b: c}]}"), "config").unwrap();
    assert_eq!(literal.as_literal(), Some(&json!({"a": [1, {"b": "c"}]})));
}

#[test]
fn template_errors_carry_the_path_of_the_expression() {
    let errors = Template::compile(&yaml("a:\n  b:\n    - 1\n    - !!js \"'open\"\n"), "config")
        .unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "config.a.b[1]: expression `'open`: unterminated string literal"
    );
    let template = Template::compile(&yaml("{port: !!js ctx.nope.port}"), "config").unwrap();
    let error = template
        .resolve("config", &launch(&[]), Some(&services))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "config.port: expression `ctx.nope.port`: row \"x\" does not inject service \"nope\""
    );
}

#[test]
fn a_relative_home_is_made_absolute() {
    let launch = LaunchEnv::capture(PathBuf::from("rel-home"));
    assert!(
        launch.dsh_home.is_absolute(),
        "{}",
        launch.dsh_home.display()
    );
    assert!(launch.dsh_home.ends_with("rel-home"));
}
