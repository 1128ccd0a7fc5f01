//! The child environment: scrub, terminal overrides, caller entries, DSH_* entries.

use std::collections::BTreeMap;

use dsh_shell::{ParentEnv, ProcessRunner, RunnerOptions, ShellExecRequest, bash_argv};

use super::support::{fixture_with, limits, parent_env, spec, spec_with};

fn parse_env(text: &str) -> BTreeMap<String, String> {
    text.split('\0')
        .filter_map(|entry| entry.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

#[tokio::test]
async fn the_parent_environment_is_scrubbed_and_overridden() {
    let f = fixture_with(
        limits(64_000),
        parent_env(&[
            ("DSH_FOO", "leak"),
            ("dsh_lower", "leak"),
            ("MY_API_KEY", "leak"),
            ("GITHUB_TOKEN", "leak"),
            ("DB_PASSWORD", "leak"),
            ("AWS_SECRET_ACCESS_KEY", "leak"),
            ("KEEP_ME", "kept"),
            ("TERM", "xterm-256color"),
            ("PAGER", "less"),
            ("GIT_PAGER", "delta"),
        ]),
    );
    let result = f
        .runner
        .run(&bash_argv("env -0"), &spec("env -0"))
        .await
        .unwrap();
    let env = parse_env(&result.stdout.text);
    for leaked in [
        "DSH_FOO",
        "dsh_lower",
        "MY_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
    ] {
        assert!(!env.contains_key(leaked), "{leaked} reached the child");
    }
    assert_eq!(env["KEEP_ME"], "kept");
    assert_eq!(env["NO_COLOR"], "1");
    assert_eq!(env["TERM"], "dumb");
    assert_eq!(env["PAGER"], "cat");
    assert_eq!(env["GIT_PAGER"], "cat");
    assert_eq!(
        env.get("PATH").map(String::as_str),
        std::env::var("PATH").ok().as_deref()
    );
}

#[tokio::test]
async fn caller_entries_pass_and_dsh_env_wins() {
    let f = fixture_with(limits(64_000), parent_env(&[("DSH_SESSION_ID", "stale")]));
    let mut request = ShellExecRequest::new("env -0");
    request.env.insert("SEAM_VAR".into(), "env-ok".into());
    request.env.insert("TERM".into(), "vt100".into());
    request.env.insert("MY_TOKEN".into(), "explicit".into());
    request.env.insert("DSH_SHARED".into(), "from-env".into());
    request
        .dsh_env
        .insert("DSH_SHARED".into(), "from-dsh-env".into());
    request
        .dsh_env
        .insert("DSH_SEAM_VAR".into(), "dsh-ok".into());
    let result = f
        .runner
        .run(&bash_argv("env -0"), &spec_with(request))
        .await
        .unwrap();
    let env = parse_env(&result.stdout.text);
    assert_eq!(env["SEAM_VAR"], "env-ok");
    assert_eq!(env["TERM"], "vt100");
    assert_eq!(env["MY_TOKEN"], "explicit");
    assert_eq!(env["DSH_SHARED"], "from-dsh-env");
    assert_eq!(env["DSH_SEAM_VAR"], "dsh-ok");
    assert!(!env.contains_key("DSH_SESSION_ID"));
}

#[tokio::test]
async fn the_default_parent_is_this_process() {
    let runner = ProcessRunner::new(
        limits(64_000),
        RunnerOptions {
            parent_env: ParentEnv::Inherit,
            spill_dir: None,
        },
    );
    let result = runner
        .run(&bash_argv("env -0"), &spec("env -0"))
        .await
        .unwrap();
    let env = parse_env(&result.stdout.text);
    assert_eq!(
        env.get("PATH").map(String::as_str),
        std::env::var("PATH").ok().as_deref()
    );
    for name in env.keys() {
        assert!(!name.to_uppercase().starts_with("DSH_"), "{name}");
    }
}
