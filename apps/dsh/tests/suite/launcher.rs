//! The launcher grammar as a user meets it: exit codes and messages.

use pretty_assertions::assert_eq;

use super::support::Sandbox;

#[test]
fn usage_errors_exit_1_with_the_reason() {
    let sandbox = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (&[], "error: --profile <name> is required\n"),
        (
            &["--profile", "web", "--dump-config", "x"],
            "error: config dumps take no app arguments, got \"x\"\n",
        ),
        (
            &["--profile", "web", "--patch="],
            "error: --patch needs a path\n",
        ),
    ];
    for (args, expected) in cases {
        let run = sandbox.run(args);
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (Some(1), "", *expected),
            "{args:?}"
        );
    }
}

#[test]
fn help_and_version() {
    let sandbox = Sandbox::new();
    let help = sandbox.run(&["--help"]);
    assert_eq!(help.code, Some(0));
    assert!(help.stdout.contains("Usage: dsh"), "{}", help.stdout);
    assert!(
        help.stdout.contains("--dump-default-config"),
        "{}",
        help.stdout
    );
    assert!(help.stdout.contains("web"), "{}", help.stdout);
    let version = sandbox.run(&["-V"]);
    assert_eq!(
        (version.code, version.stdout),
        (Some(0), format!("dsh {}\n", env!("CARGO_PKG_VERSION")))
    );
}
