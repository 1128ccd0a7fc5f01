//! The escapes a hostile probe found, through the real binary: a confined command reads
//! no secret of the harness and writes none of its control files, as root and as an
//! unprivileged user.

use dsh_test_support::fake_deepseek::FakeDeepSeek;
use pretty_assertions::assert_eq;

use super::headless::{answer, bash_call, exported, only_session, run, tool_results};
use super::support::{NOBODY, Run, Sandbox};

/// A key no test output may ever contain.
const KEY: &str = "sk-never-readable-7f3a91";

/// A credential-named variable of the caller's, also never readable.
const TOKEN: (&str, &str) = ("GITHUB_TOKEN", "ghp-never-readable-52c0d4");

/// Everything a command can read about its parent and ancestors through `/proc`: the
/// environment block, the command line, memory, and every descriptor.
const PROBE: &str = r#"for p in $PPID $(ps -o ppid= -p $PPID 2>/dev/null); do
  tr '\0' '\n' < /proc/$p/environ 2>/dev/null
  tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null; echo
  head -c 65536 /proc/$p/mem 2>/dev/null | strings
  for f in /proc/$p/fd/*; do head -c 65536 "$f" 2>/dev/null | strings; done
done; echo probe-done"#;

fn leaks(text: &str) -> bool {
    text.contains(KEY) || text.contains(TOKEN.1)
}

/// Runs the probe through `dsh tools call bash` as root, or as `nobody` when `as_nobody`.
fn probe_through_tools(as_nobody: bool) -> Option<Run> {
    let sandbox = Sandbox::new();
    let arguments = serde_json::json!({"command": PROBE, "description": "probe"}).to_string();
    let args = ["tools", "call", "bash", arguments.as_str()];
    let mut command = if as_nobody {
        sandbox.give_to(NOBODY);
        sandbox.command_as(NOBODY, &args)?
    } else {
        sandbox.command(&args)
    };
    command
        .env("DEEPSEEK_API_KEY", KEY)
        .env(TOKEN.0, TOKEN.1)
        .env("DSH_PERMISSION_MODE", "workspace-write");
    Some(Run::from(command.output().unwrap()))
}

#[test]
fn the_api_key_is_not_readable_from_the_harness_as_root() {
    let run = probe_through_tools(false).unwrap();
    assert!(
        run.stdout.contains("probe-done"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(!leaks(&run.stdout), "{}", run.stdout);
    assert!(!leaks(&run.stderr), "{}", run.stderr);
}

#[test]
fn the_api_key_is_not_readable_from_the_harness_unprivileged() {
    let Some(run) = probe_through_tools(true) else {
        return;
    };
    assert!(
        run.stdout.contains("probe-done"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(!leaks(&run.stdout), "{}", run.stdout);
    assert!(!leaks(&run.stderr), "{}", run.stderr);
}

/// A real turn whose command probes for the key: it must reach neither the tool result, nor
/// the next request, nor the session log.
async fn probe_in_a_turn(as_nobody: bool) -> Option<()> {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", PROBE));
    fake.push(answer("Probed."));
    let args = ["--profile", "headless", "probe the harness"];
    let mut command = if as_nobody {
        sandbox.give_to(NOBODY);
        sandbox.command_as(NOBODY, &args)?
    } else {
        sandbox.command(&args)
    };
    command
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", KEY)
        .env(TOKEN.0, TOKEN.1)
        .env_remove("DSH_PERMISSION_MODE");
    let done = run(command).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    // The key still works: it went to the model in the header, and only there.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let results = tool_results(&requests[1].body);
    assert!(results[0].1.contains("probe-done"), "{}", results[0].1);
    assert!(!leaks(&results[0].1), "{}", results[0].1);
    assert!(!leaks(&requests[1].body.to_string()));
    let id = only_session(&sandbox);
    let log = exported(&sandbox, &id);
    assert!(!log.iter().any(|event| leaks(&event.to_string())));
    Some(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_never_carries_the_key_as_root() {
    probe_in_a_turn(false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_never_carries_the_key_unprivileged() {
    let _ = probe_in_a_turn(true).await;
}

/// `DSH_HOME` inside the workspace (dsh started in `~` with the default `~/.dsh`): the
/// command tries to make every later run unconfined and to corrupt the live log.
async fn home_inside_the_workspace(as_nobody: bool) -> Option<()> {
    let sandbox = Sandbox::new();
    let home = sandbox.work().join(".dsh");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("cordis.patch.yml"), "[]\n").unwrap();
    let unconfined = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../profiles/examples/unconfined.patch.yml"
    );
    let attack = format!(
        "cat {unconfined} >> \"$DSH_HOME/cordis.patch.yml\"; echo appended=$?; \
         echo '{{\"type\":\"bogus\"}}' >> \"$DSH_SESSION_JSONL\"; echo corrupted=$?; \
         mkdir -p \"$DSH_HOME/profiles/headless\" && echo '- id: bash-sandbox' > \
         \"$DSH_HOME/profiles/headless/cordis.patch.yml\"; echo planted=$?; \
         touch beside; echo beside=$?; mv \"$DSH_HOME\" moved-home; status=$?; \
         echo moved=$status; exit $status"
    );
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", &attack));
    fake.push(answer("Tried."));
    let args = ["--profile", "headless", "try"];
    let mut command = if as_nobody {
        sandbox.give_to(NOBODY);
        sandbox.command_as(NOBODY, &args)?
    } else {
        sandbox.command(&args)
    };
    command
        .env("DSH_HOME", &home)
        .env("HOME", sandbox.work())
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", KEY)
        .env_remove("DSH_PERMISSION_MODE");
    let done = run(command).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let requests = fake.requests();
    let result = &tool_results(&requests[1].body)[0].1;
    for refused in ["appended=1", "corrupted=1", "planted=1", "moved=1"] {
        assert!(result.contains(refused), "{refused}: {result}");
    }
    assert!(
        result.contains("beside=0"),
        "the workspace itself stays writable: {result}"
    );
    assert!(
        result.contains("[sandbox: file access denied under workspace-write mode]"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join("cordis.patch.yml")).unwrap(),
        "[]\n"
    );
    assert!(!sandbox.work().join("moved-home").exists());
    let verify = sandbox
        .command(&["sessions", "verify"])
        .env("DSH_HOME", &home)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    Some(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dsh_home_inside_the_workspace_stays_read_only_as_root() {
    home_inside_the_workspace(false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dsh_home_inside_the_workspace_stays_read_only_unprivileged() {
    let _ = home_inside_the_workspace(true).await;
}

#[test]
fn a_patch_layer_in_the_workspace_stays_read_only() {
    let sandbox = Sandbox::new();
    let patch = sandbox.work().join("project.patch.yml");
    std::fs::write(&patch, "[]\n").unwrap();
    let arguments = serde_json::json!({
        "command": "echo '- id: bash-sandbox' >> project.patch.yml; echo status=$?",
        "description": "tamper"
    })
    .to_string();
    let run = sandbox.run(&[
        "tools",
        "--patch",
        patch.to_str().unwrap(),
        "call",
        "bash",
        &arguments,
    ]);
    assert!(run.stdout.contains("status=1"), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(&patch).unwrap(), "[]\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_store_inside_the_workspace_stays_read_only() {
    let sandbox = Sandbox::new();
    let store = sandbox.work().join("store");
    let patch = sandbox.write(
        "store.patch.yml",
        &format!(
            "- id: session-persistence-jsonl\n  config:\n    root: {}\n",
            store.display()
        ),
    );
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call(
        "call_1",
        "ls store >/dev/null && touch store/planted; echo planted=$?; \
         for f in $(find store -type f); do echo x >> \"$f\"; done; echo appended=$?",
    ));
    fake.push(answer("Tried."));
    let mut command = sandbox.command(&[
        "--profile",
        "headless",
        "--patch",
        patch.to_str().unwrap(),
        "try",
    ]);
    command
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", KEY)
        .env_remove("DSH_PERMISSION_MODE");
    let done = run(command).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let result = &tool_results(&fake.requests()[1].body)[0].1;
    assert!(result.contains("planted=1"), "{result}");
    assert!(result.contains("appended=1"), "{result}");
    assert!(!store.join("planted").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_database_in_the_workspace_refuses_workspace_write_naming_it() {
    let sandbox = Sandbox::new();
    let database = sandbox.work().join("sessions.sqlite");
    let patch = sandbox.write(
        "sqlite.patch.yml",
        &format!(
            "- id: session-persistence-jsonl\n  disabled: true\n\
             - insert:\n    - id: session-persistence-sqlite\n      name: dsh-persistence-sqlite\n      \
             config:\n        path: {}\n",
            database.display()
        ),
    );
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", "echo ran > beside.txt"));
    fake.push(answer("Refused."));
    let mut command = sandbox.command(&[
        "--profile",
        "headless",
        "--patch",
        patch.to_str().unwrap(),
        "try",
    ]);
    command
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", KEY)
        .env_remove("DSH_PERMISSION_MODE");
    let done = run(command).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let result = &tool_results(&fake.requests()[1].body)[0].1;
    assert!(
        result.contains(&format!(
            "workspace-write refused: the workspace {} is itself the directory of the session \
             database {}, which the model's commands may never write; move that out of the \
             workspace",
            sandbox.work().display(),
            database.display()
        )),
        "{result}"
    );
    assert!(!sandbox.work().join("beside.txt").exists());
}
