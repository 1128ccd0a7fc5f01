//! The web app's command line, through the launcher (the server itself is tested in
//! dsh-web). The UI row is not built yet, so these runs patch it off.

use pretty_assertions::assert_eq;

use super::support::{Run, Sandbox};

/// `dsh web <args>` with the row that is not built yet switched off.
fn web(sandbox: &Sandbox, args: &[&str]) -> Run {
    let patch = sandbox.write("work/no-ui.yml", "- id: web-runtime\n  disabled: true\n");
    let patch = patch.display().to_string();
    let mut all = vec!["web", "--patch", patch.as_str()];
    all.extend_from_slice(args);
    sandbox.run(&all)
}

#[test]
fn web_help_prints_the_apps_flags_and_binds_nothing() {
    let sandbox = Sandbox::new();
    let help = web(&sandbox, &["--help"]);
    assert_eq!((help.code, help.stderr.as_str()), (Some(0), ""));
    for flag in [
        "--host <host>",
        "--port <port>",
        "--trusted-host <authority>",
        "--no-open",
    ] {
        assert!(help.stdout.contains(flag), "{flag}: {}", help.stdout);
    }
}

#[test]
fn a_wildcard_host_and_a_bad_port_are_refused_before_anything_binds() {
    let sandbox = Sandbox::new();
    let wildcard = web(&sandbox, &["--host", "0.0.0.0"]);
    assert_eq!(wildcard.code, Some(1));
    assert_eq!(
        wildcard.stderr,
        "error: --host 0.0.0.0 is intentionally not supported yet for safety: it would expose \
         remote code execution to the network; use 127.0.0.1 instead\n"
    );
    let port = web(&sandbox, &["--port", "eighty"]);
    assert_eq!(
        (port.code, port.stderr.as_str()),
        (Some(1), "error: --port must be a number, got \"eighty\"\n")
    );
}
