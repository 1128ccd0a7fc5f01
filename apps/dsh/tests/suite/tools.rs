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
         edit\tChange an existing UTF-8 text file by replacing literal text with new text.\n\
         glob\tList the files whose paths match a glob pattern.\n\
         grep\tSearch the contents of files with a regular expression (ripgrep syntax, case sensitive).\n\
         job_kill\tRequest cancellation of a running background job by job id.\n\
         job_list\tList your background jobs (running and finished) with their ids, kinds, and statuses.\n\
         job_output\tRead a background job.\n\
         read\tRead a UTF-8 text file; the result shows each line with its number.\n\
         read_image\tRead a PNG, JPEG, WebP or GIF file as an image the model can look at.\n\
         str_replace_editor\tA file tool with four commands for looking at, creating and changing files by absolute path.\n\
         write\tCreate a UTF-8 text file, or replace all of its content.\n"
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

/// `dsh tools call bash` with `command`, in the sandbox's work directory.
fn call_bash(sandbox: &Sandbox, command: &str, extra: &[(&str, &str)]) -> super::support::Run {
    let arguments = serde_json::json!({"command": command, "description": "probe"}).to_string();
    let mut process = sandbox.command(&["tools", "call", "bash", &arguments]);
    for (key, value) in extra {
        process.env(key, value);
    }
    super::support::Run::from(process.output().unwrap())
}

#[test]
fn the_default_shell_confines_writes_to_the_workspace_and_temp() {
    let sandbox = Sandbox::new();
    let run = call_bash(
        &sandbox,
        "echo ok > inside.txt && echo tmp > /tmp/dsh-cli-probe-$$ && rm /tmp/dsh-cli-probe-$$ \
         && cat inside.txt",
        &[],
    );
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "ok\n"),
        "{}",
        run.stderr
    );
    // The user's real home is outside the workspace and the temp directories.
    let home = std::env::var("HOME").unwrap();
    let dotfile = format!("{home}/.bashrc-probe-dsh-tools-test");
    for (command, target) in [
        (
            "touch /etc/dsh-probe".to_owned(),
            "/etc/dsh-probe".to_owned(),
        ),
        (format!("echo x > {dotfile}"), dotfile),
    ] {
        let run = call_bash(&sandbox, &command, &[]);
        let written = std::path::Path::new(&target).exists();
        let _ = std::fs::remove_file(&target);
        assert!(!written, "{target} was written");
        assert_eq!(run.code, Some(0));
        assert!(
            run.stdout
                .contains("[sandbox: file access denied under workspace-write mode]\n"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.ends_with("[exit code: 1]\n"), "{}", run.stdout);
    }
}

#[test]
fn read_only_mode_comes_from_the_environment_and_still_reads() {
    let sandbox = Sandbox::new();
    let run = call_bash(
        &sandbox,
        "cat /etc/hostname >/dev/null && echo read; echo x > /tmp/dsh-ro-probe",
        &[("DSH_PERMISSION_MODE", "read-only")],
    );
    assert!(run.stdout.starts_with("read\n[stderr]\n"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("[sandbox: file access denied under read-only mode]")
    );
    assert!(!std::path::Path::new("/tmp/dsh-ro-probe").exists());
}

#[test]
fn an_escalation_outside_a_session_is_refused_and_nothing_runs() {
    let sandbox = Sandbox::new();
    let marker = sandbox.work().join("escalated");
    let arguments = serde_json::json!({
        "command": format!("touch {}", marker.display()),
        "description": "probe",
        "sandbox_permissions": "danger-full-access",
        "justification": "needs more"
    })
    .to_string();
    let run = sandbox.run(&["tools", "call", "bash", &arguments]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stdout,
        "Error: sandbox escalation to \"danger-full-access\" requires approval, but the call \
         has no agent to route it through\n"
    );
    assert!(!marker.exists());
}

#[test]
fn no_usable_backend_refuses_and_runs_nothing() {
    let sandbox = Sandbox::new();
    // Landlock made unusable (every command through a runner that does not exist), and a
    // fake bubblewrap first on PATH that would run the command unconfined: bubblewrap is
    // only ever taken from fixed, root-owned system paths.
    let patch = sandbox.write(
        "no-backend.patch.yml",
        "- id: bash-sandbox\n  config:\n    runner: [/nonexistent/sandbox-runner]\n    launch: runner\n",
    );
    let fake_bin = sandbox.work().join("fake-bin");
    std::fs::create_dir_all(&fake_bin).unwrap();
    let fake_bwrap = fake_bin.join("bwrap");
    std::fs::write(
        &fake_bwrap,
        "#!/bin/sh\nwhile [ \"$#\" -gt 0 ] && [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &fake_bwrap,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let marker = sandbox.work().join("ran");
    let arguments = serde_json::json!({
        "command": format!("touch {}", marker.display()),
        "description": "probe"
    })
    .to_string();
    let run = sandbox
        .command(&[
            "tools",
            "--patch",
            patch.to_str().unwrap(),
            "call",
            "bash",
            &arguments,
        ])
        .env("PATH", format!("{}:/usr/bin:/bin", fake_bin.display()))
        .output()
        .unwrap();
    let run = super::support::Run::from(run);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.starts_with(
            "Error: sandbox mode \"workspace-write\" is requested but no sandbox backend is \
             usable on this host; refusing to run the command unconfined."
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("(SANDBOX_UNAVAILABLE)"),
        "{}",
        run.stderr
    );
    assert!(!marker.exists(), "nothing ran");
}

#[test]
fn network_deny_refuses_sockets_and_allow_connects() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sandbox = Sandbox::new();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let allowed = call_bash(&sandbox, &connect, &[]);
    assert_eq!(allowed.stdout, "connected\n");
    let patch = sandbox.write(
        "deny.patch.yml",
        "- id: sandbox-policy\n  config:\n    mode: workspace-write\n    network: deny\n",
    );
    let arguments = serde_json::json!({"command": connect, "description": "probe"}).to_string();
    let denied = super::support::Run::from(
        sandbox
            .command(&[
                "tools",
                "--patch",
                patch.to_str().unwrap(),
                "call",
                "bash",
                &arguments,
            ])
            .output()
            .unwrap(),
    );
    assert!(!denied.stdout.contains("connected"), "{}", denied.stdout);
    assert!(
        denied.stdout.ends_with("[exit code: 1]\n"),
        "{}",
        denied.stdout
    );
}

#[test]
fn the_unconfined_overlay_swaps_in_local_bash() {
    let sandbox = Sandbox::new();
    let overlay = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../profiles/examples/unconfined.patch.yml"
    );
    let target = sandbox.dir.path().join("outside-the-workspace");
    let arguments = serde_json::json!({
        "command": format!("touch {} && echo wrote", target.display()),
        "description": "probe"
    })
    .to_string();
    let run = sandbox.run(&["tools", "--patch", overlay, "call", "bash", &arguments]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "wrote\n"),
        "{}",
        run.stderr
    );
    assert!(target.exists());
}
