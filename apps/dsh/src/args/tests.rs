//! The launcher grammar, token by token.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::sessions::{SessionsAction, StoreFormat};
use super::*;

fn parse_args(args: &[&str]) -> Result<Invocation, UsageError> {
    parse(
        std::iter::once("dsh")
            .chain(args.iter().copied())
            .map(OsString::from),
    )
}

fn run(profile: &str, patches: &[&str], args: &[&str]) -> Invocation {
    Invocation::Run {
        profile: profile.to_owned(),
        patches: patches.iter().map(|p| (*p).to_owned()).collect(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
    }
}

#[test]
fn launcher_flags_end_at_the_first_unknown_token() {
    assert_eq!(
        parse_args(&["--profile", "headless", "run the tests"]).unwrap(),
        run("headless", &[], &["run the tests"])
    );
    assert_eq!(
        parse_args(&["--profile", "web", "--port", "0", "--patch", "x.yml"]).unwrap(),
        run("web", &[], &["--port", "0", "--patch", "x.yml"])
    );
    assert_eq!(
        parse_args(&[
            "--profile=tui",
            "--patch",
            "a.yml",
            "--patch=b.yml",
            "--resume",
            "abc"
        ])
        .unwrap(),
        run("tui", &["a.yml", "b.yml"], &["--resume", "abc"])
    );
    assert_eq!(
        parse_args(&["--profile", "web", "-h"]).unwrap(),
        run("web", &[], &["-h"])
    );
    assert_eq!(
        parse_args(&["--profile", "headless", "help", "me"]).unwrap(),
        run("headless", &[], &["help", "me"])
    );
}

#[test]
fn one_double_dash_is_consumed() {
    assert_eq!(
        parse_args(&["--profile", "headless", "--", "--dump-config"]).unwrap(),
        run("headless", &[], &["--dump-config"])
    );
    assert_eq!(
        parse_args(&["--profile", "headless", "--", "--"]).unwrap(),
        run("headless", &[], &["--"])
    );
}

#[test]
fn web_is_an_alias_of_profile_web() {
    assert_eq!(
        parse_args(&["web", "--patch", "p.yml", "--no-open"]).unwrap(),
        run("web", &["p.yml"], &["--no-open"])
    );
    assert_eq!(
        parse_args(&["web", "--dump-config"]).unwrap(),
        Invocation::Dump {
            profile: "web".to_owned(),
            default_only: false,
            patches: Vec::new()
        }
    );
}

#[test]
fn dumps() {
    assert_eq!(
        parse_args(&["--profile", "web", "--dump-config", "--patch", "x.yml"]).unwrap(),
        Invocation::Dump {
            profile: "web".to_owned(),
            default_only: false,
            patches: vec!["x.yml".to_owned()]
        }
    );
    assert_eq!(
        parse_args(&["--profile", "web", "--dump-default-config"]).unwrap(),
        Invocation::Dump {
            profile: "web".to_owned(),
            default_only: true,
            patches: Vec::new()
        }
    );
}

#[test]
fn help_and_version_print() {
    let Invocation::Print(help) = parse_args(&["-h"]).unwrap() else {
        panic!()
    };
    assert!(help.contains("--profile <name>"), "{help}");
    assert!(help.contains("Examples:"), "{help}");
    let Invocation::Print(version) = parse_args(&["-V"]).unwrap() else {
        panic!()
    };
    assert_eq!(version.trim(), format!("dsh {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn sessions_default_to_the_headless_profile() {
    assert_eq!(
        parse_args(&["sessions", "list", "--json"]).unwrap(),
        Invocation::Sessions {
            profile: "headless".into(),
            patches: vec![],
            action: SessionsAction::List { json: true },
        }
    );
    assert_eq!(
        parse_args(&[
            "--profile",
            "web",
            "--patch",
            "a.yml",
            "sessions",
            "--patch",
            "b.yml",
            "show",
            "s1"
        ])
        .unwrap(),
        Invocation::Sessions {
            profile: "web".into(),
            patches: vec!["a.yml".into(), "b.yml".into()],
            action: SessionsAction::Show { id: "s1".into() },
        }
    );
    assert_eq!(
        parse_args(&["sessions", "--profile", "web", "verify"]).unwrap(),
        Invocation::Sessions {
            profile: "web".into(),
            patches: vec![],
            action: SessionsAction::Verify { id: None },
        }
    );
    for args in [
        &["sessions", "--help"][..],
        &["sessions", "-h"],
        &["--profile", "web", "sessions", "list", "--help"],
    ] {
        let Ok(Invocation::Print(text)) = parse_args(args) else {
            panic!("{args:?}")
        };
        assert!(text.contains("Usage: dsh sessions"), "{text}");
    }
    let Ok(Invocation::Print(text)) = parse_args(&["sessions", "--help"]) else {
        panic!()
    };
    assert!(
        text.contains("dsh sessions verify"),
        "the examples are shown: {text}"
    );
    assert!(parse_args(&["sessions", "show"]).is_err());
    assert!(parse_args(&["sessions"]).is_err());
}

#[test]
fn sessions_convert_takes_a_format_a_location_and_an_id() {
    let convert =
        |to, path: Option<&str>, root: Option<&str>, id: Option<&str>| Invocation::Sessions {
            profile: "headless".into(),
            patches: vec!["sqlite.yml".into()],
            action: SessionsAction::Convert {
                to,
                path: path.map(PathBuf::from),
                root: root.map(PathBuf::from),
                id: id.map(str::to_owned),
            },
        };
    let cases: [(&[&str], Invocation); 4] = [
        (
            &["convert", "--to", "sqlite"],
            convert(StoreFormat::Sqlite, None, None, None),
        ),
        (
            &[
                "convert",
                "--to",
                "sqlite",
                "--path",
                "db.sqlite",
                "--id",
                "s1",
            ],
            convert(StoreFormat::Sqlite, Some("db.sqlite"), None, Some("s1")),
        ),
        (
            &["convert", "--to=jsonl", "--root", "/srv/copy"],
            convert(StoreFormat::Jsonl, None, Some("/srv/copy"), None),
        ),
        (
            &["convert", "--id", "s1", "--to", "jsonl"],
            convert(StoreFormat::Jsonl, None, None, Some("s1")),
        ),
    ];
    for (rest, expected) in cases {
        let args: Vec<&str> = ["sessions", "--patch", "sqlite.yml"]
            .into_iter()
            .chain(rest.iter().copied())
            .collect();
        assert_eq!(parse_args(&args).unwrap(), expected, "{rest:?}");
    }
    let Ok(Invocation::Print(help)) = parse_args(&["sessions", "convert", "--help"]) else {
        panic!()
    };
    assert!(
        help.contains("Usage: dsh sessions convert [OPTIONS] --to <format>"),
        "{help}"
    );
    assert!(help.contains("[possible values: sqlite, jsonl]"), "{help}");
    let Ok(Invocation::Print(help)) = parse_args(&["sessions", "--help"]) else {
        panic!()
    };
    assert!(help.contains("dsh sessions convert --to sqlite"), "{help}");
}

#[test]
fn sessions_convert_refuses_the_other_formats_location() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["sessions", "convert"],
            "error: the following required arguments were not provided:\n  --to <format>",
        ),
        (
            &["sessions", "convert", "--to", "sqlite", "--root", "dir"],
            "error: the argument '--root <dir>' cannot be used with '--to sqlite'\n\n\
             Usage: dsh sessions convert [OPTIONS] --to <format>",
        ),
        (
            &[
                "sessions",
                "convert",
                "--to",
                "jsonl",
                "--path",
                "db.sqlite",
            ],
            "error: the argument '--path <file>' cannot be used with '--to jsonl'\n\n\
             Usage: dsh sessions convert [OPTIONS] --to <format>",
        ),
        (
            &["sessions", "convert", "--to", "yaml"],
            "error: invalid value 'yaml' for '--to <format>'",
        ),
        (
            &["sessions", "convert", "--to", "sqlite", "--id", ""],
            "error: a value is required for '--id <id>' but none was supplied",
        ),
    ];
    for (args, expected) in cases {
        let error = parse_args(args).unwrap_err().0;
        assert!(error.starts_with(expected), "{args:?}: {error}");
    }
}

#[test]
fn rejected_inputs() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "error: --profile <name> is required"),
        (&["task"], "error: --profile <name> is required"),
        (&["--bogus"], "error: --profile <name> is required"),
        (&["--profile", ""], "error: --profile needs a name"),
        (
            &["--profile", "web", "--patch="],
            "error: --patch needs a path",
        ),
        (
            &["--profile", "web", "--dump-config", "--dump-default-config"],
            "error: --dump-config and --dump-default-config are mutually exclusive",
        ),
        (
            &["--profile", "web", "--dump-config", "extra"],
            "error: config dumps take no app arguments, got \"extra\"",
        ),
        (
            &[
                "--profile",
                "web",
                "--dump-default-config",
                "--patch",
                "x.yml",
            ],
            "error: --dump-default-config prints the bundle layers and takes no --patch",
        ),
        (
            &["--profile", "x", "web"],
            "error: web takes none of parent --profile, --patch, --dump-config, or --dump-default-config",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(parse_args(args).unwrap_err().0, *expected, "{args:?}");
    }
    assert!(
        parse_args(&["plugin", "--profile", "x", "add", "y"])
            .unwrap_err()
            .0
            .contains("dsh plugin")
    );
    assert!(parse_args(&["--profile"]).is_err());
}
