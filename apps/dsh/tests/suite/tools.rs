//! `dsh tools`: list the profile's tools, and run one call through the whole pipeline as the
//! model would, with the real shell.

use pretty_assertions::assert_eq;

use super::support::Sandbox;

#[test]
fn list_names_every_tool_with_one_line() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["tools", "list"]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert_eq!(
        run.stdout,
        "bash\tExecute a bash command (`bash -c`) and return its stdout/stderr.\n\
         job_kill\tRequest cancellation of a running background job by job id.\n\
         job_list\tList your background jobs (running and finished) with their ids, kinds, and statuses.\n\
         job_output\tRead a background job.\n"
    );
}

#[test]
fn list_json_gives_full_schemas() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["tools", "--profile", "web", "list", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let bash: serde_json::Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(bash["name"], "bash");
    assert_eq!(
        bash["parameters"]["required"],
        serde_json::json!(["command", "description"])
    );
    assert!(
        bash["description"]
            .as_str()
            .unwrap()
            .contains("`[exit code: N]`")
    );
}

#[test]
fn a_call_prints_what_the_model_reads() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&[
        "tools",
        "call",
        "bash",
        r#"{"command":"echo hi; echo oops >&2; exit 3","description":"demo"}"#,
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (Some(0), "hi\n[stderr]\noops\n[exit code: 3]\n", "")
    );
    let pwd = sandbox.run(&[
        "tools",
        "call",
        "bash",
        r#"{"command":"pwd","description":"d"}"#,
    ]);
    let work = std::fs::canonicalize(sandbox.work()).unwrap();
    assert_eq!(
        pwd.stdout,
        format!("{}\n", work.display()),
        "outside a session: the cwd"
    );
}

#[test]
fn a_failed_call_prints_the_error_and_exits_1() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["tools", "call", "bash", r#"{"command":"ls"}"#]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stdout,
        "Error: invalid arguments: missing required property \"description\"\n"
    );
    assert_eq!(
        run.stderr,
        "dsh: tool \"bash\" failed (INVALID_ARGS): invalid arguments: missing required \
         property \"description\"\n"
    );
    let unknown = sandbox.run(&["tools", "call", "nope", "{}"]);
    assert_eq!(
        (unknown.code, unknown.stdout.as_str()),
        (Some(1), "Error: unknown tool \"nope\"\n")
    );
    let not_json = sandbox.run(&["tools", "call", "bash", "{oops"]);
    assert_eq!(not_json.code, Some(1));
    assert!(
        not_json.stderr.contains("are not JSON"),
        "{}",
        not_json.stderr
    );
}

#[test]
fn managed_variables_reach_the_command_and_inherited_ones_do_not() {
    let sandbox = Sandbox::new();
    let run = sandbox
        .command(&[
            "tools",
            "call",
            "bash",
            r#"{"command":"env | grep -E '^(DSH_|MY_API_KEY|PLAIN)' | sort","description":"env"}"#,
        ])
        .env("DSH_SMUGGLED", "1")
        .env("DSH_SHELL", "0")
        .env("MY_API_KEY", "secret")
        .env("PLAIN", "kept")
        .output()
        .unwrap();
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert_eq!(
        stdout,
        format!(
            "DSH_HOME={}\nDSH_SHELL=1\nPLAIN=kept\n",
            sandbox.home().display()
        )
    );
}

#[test]
fn a_timeout_ends_the_call_promptly() {
    let sandbox = Sandbox::new();
    let started = std::time::Instant::now();
    let run = sandbox.run(&[
        "tools",
        "call",
        "bash",
        r#"{"command":"sleep 600","description":"d","timeoutMs":500}"#,
    ]);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("[timed out after 500ms]\n"),
        "{}",
        run.stdout
    );
}
