//! The escapes a hostile probe found, through the real binary: a confined command reads
//! no secret of the harness and writes none of its control files, as root and as an
//! unprivileged user.

use dsh_test_support::fake_deepseek::FakeDeepSeek;
use pretty_assertions::assert_eq;

use super::headless::{answer, bash_call, exported, only_session, run, tool_results};
use super::support::{Run, Sandbox};

/// A key no test output may ever contain.
const KEY: &str = "sk-never-readable-7f3a91";

/// A credential-named variable of the caller's, also never readable.
const TOKEN: (&str, &str) = ("GITHUB_TOKEN", "ghp-never-readable-52c0d4");

/// Everything a command can read of the harness and its other processes through `/proc`:
/// for dsh, its parent and the orphan guard, the heap (where the key lives once dsh moved it
/// off the start-up block), every descriptor (a read that would block gives up), and for
/// each of their threads the start-up environment block, the command line and memory.
const PROBE: &str = r#"targets="$PPID $(ps -o ppid= -p $PPID 2>/dev/null) $(pgrep -x bash -f -- '-c .*dsh-orphan-guard' 2>/dev/null)"
for p in $targets; do
  while read -r range perms offset dev inode name; do
    case "$name" in \[heap\])
      start=$((16#${range%-*})); end=$((16#${range#*-}))
      dd if=/proc/$p/mem bs=4096 skip=$((start/4096)) count=$(((end-start)/4096)) 2>/dev/null | strings;;
    esac
  done < /proc/$p/maps 2>/dev/null
  for t in /proc/$p /proc/$p/task/*; do
    tr '\0' '\n' < $t/environ 2>/dev/null
    tr '\0' ' ' < $t/cmdline 2>/dev/null; echo
    head -c 4096 $t/mem 2>/dev/null | strings
  done
  for f in /proc/$p/fd/*; do timeout 0.2 head -c 65536 "$f" 2>/dev/null | strings; done
done; echo probe-done"#;

fn leaks(text: &str) -> bool {
    text.contains(KEY) || text.contains(TOKEN.1)
}

/// Runs the probe through `dsh tools call bash` as root, or as `nobody` when `as_nobody`,
/// in `mode`.
fn probe_through_tools(as_nobody: bool, mode: &str) -> Option<Run> {
    let sandbox = Sandbox::new();
    let arguments = serde_json::json!({"command": PROBE, "description": "probe"}).to_string();
    let mut command =
        sandbox.command_maybe_as_nobody(as_nobody, &["tools", "call", "bash", &arguments])?;
    command
        .env("DEEPSEEK_API_KEY", KEY)
        .env(TOKEN.0, TOKEN.1)
        .env("DSH_PERMISSION_MODE", mode);
    Some(Run::from(command.output().unwrap()))
}

/// Says why an unprivileged variant did not run (the machine cannot switch users).
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says so in the test output"
)]
fn skipped(what: &str) {
    eprintln!("skipped: {what} needs root and setpriv to run as an unprivileged user");
}

#[test]
fn the_probe_finds_the_key_when_nothing_confines_the_command() {
    // The control: unconfined, as root, the probe does read dsh's heap, so the tests
    // below would see a leak if there were one.
    let run = probe_through_tools(false, "danger-full-access").unwrap();
    assert!(run.stdout.contains("probe-done"), "{}", run.stderr);
    assert!(
        run.stdout.contains(KEY),
        "the probe missed the key in dsh's memory"
    );
}

#[test]
fn the_api_key_is_not_readable_from_the_harness_as_root() {
    assert_probe_found_nothing(&probe_through_tools(false, "workspace-write").unwrap());
}

/// The probe ran to its end and found neither secret.
fn assert_probe_found_nothing(run: &Run) {
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
    let Some(run) = probe_through_tools(true, "workspace-write") else {
        skipped("the_api_key_is_not_readable_from_the_harness_unprivileged");
        return;
    };
    assert!(
        !run.stderr.contains("cannot clear the credentials"),
        "the start-up block was not scrubbed: {}",
        run.stderr
    );
    assert_probe_found_nothing(&run);
}

/// A real turn whose command probes for the key: it must reach neither the tool result, nor
/// the next request, nor the session log.
async fn probe_in_a_turn(as_nobody: bool) -> Option<()> {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", PROBE));
    fake.push(answer("Probed."));
    let mut command = sandbox
        .command_maybe_as_nobody(as_nobody, &["--profile", "headless", "probe the harness"])?;
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
    if probe_in_a_turn(true).await.is_none() {
        skipped("a_turn_never_carries_the_key_unprivileged");
    }
}

/// `DSH_HOME` inside the workspace (dsh started in `~` with the default `~/.dsh`), at `inside` (relative to the workspace): the command tries to make every later
/// run unconfined, to corrupt the live log, and to put a directory of its own in the home's
/// place by moving the directory above it.
async fn home_inside_the_workspace(as_nobody: bool, inside: &str) -> Option<()> {
    let sandbox = Sandbox::new();
    let home = sandbox.work().join(inside);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("cordis.patch.yml"), "[]\n").unwrap();
    let unconfined = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../profiles/examples/unconfined.patch.yml"
    );
    let attack = format!(
        "cat {unconfined} >> \"$DSH_HOME/cordis.patch.yml\"; echo appended=$?; \
         cat {unconfined} >> {inside}/cordis.patch.yml; echo relative=$?; \
         echo '{{\"type\":\"bogus\"}}' >> \"$DSH_SESSION_JSONL\"; echo corrupted=$?; \
         mkdir -p \"$DSH_HOME/profiles/headless\" && echo '- id: bash-sandbox' > \
         \"$DSH_HOME/profiles/headless/cordis.patch.yml\"; echo planted=$?; \
         touch beside; echo beside=$?; parent=$(dirname \"$DSH_HOME\"); \
         mv \"$parent\" \"$parent-moved\"; echo parent_moved=$?; \
         mv \"$DSH_HOME\" moved-home; status=$?; echo moved=$status; exit $status"
    );
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", &attack));
    fake.push(answer("Tried."));
    let mut command =
        sandbox.command_maybe_as_nobody(as_nobody, &["--profile", "headless", "try"])?;
    command
        .env("DSH_HOME", &home)
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", KEY)
        .env_remove("DSH_PERMISSION_MODE");
    let done = run(command).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "one tool call, then its answer");
    let result = &tool_results(&requests[1].body)[0].1;
    for refused in [
        "appended=1",
        "relative=1",
        "corrupted=1",
        "planted=1",
        "parent_moved=1",
        "moved=1",
    ] {
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
    // `mv` may copy what it cannot rename, but the home stays where and what it was.
    assert!(std::fs::symlink_metadata(&home).unwrap().is_dir());
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
    home_inside_the_workspace(false, ".dsh").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deeper_dsh_home_cannot_be_swapped_by_moving_its_parent() {
    home_inside_the_workspace(false, "sub/deeper/.dsh")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dsh_home_inside_the_workspace_stays_read_only_unprivileged() {
    if home_inside_the_workspace(true, "sub/.dsh").await.is_none() {
        skipped("dsh_home_inside_the_workspace_stays_read_only_unprivileged");
    }
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

/// One headless turn with `patch` whose model runs `command` once: what the model got back.
async fn tool_result_of_one_call(
    sandbox: &Sandbox,
    patch: &std::path::Path,
    command: &str,
) -> String {
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(bash_call("call_1", command));
    fake.push(answer("Tried."));
    let mut dsh = sandbox.command(&[
        "--profile",
        "headless",
        "--patch",
        patch.to_str().unwrap(),
        "try",
    ]);
    dsh.env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", KEY)
        .env_remove("DSH_PERMISSION_MODE");
    let done = run(dsh).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    tool_results(&fake.requests()[1].body)[0].1.clone()
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
    let result = tool_result_of_one_call(
        &sandbox,
        &patch,
        "ls store >/dev/null && touch store/planted; echo planted=$?; \
         for f in $(find store -type f); do echo x >> \"$f\"; done; echo appended=$?",
    )
    .await;
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
    let result = tool_result_of_one_call(&sandbox, &patch, "echo ran > beside.txt").await;
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

#[test]
fn a_workspace_that_is_the_home_directory_is_refused() {
    let sandbox = Sandbox::new();
    let home = sandbox.work();
    let arguments =
        serde_json::json!({"command": "echo x >> .profile-probe", "description": "probe"})
            .to_string();
    let run = Run::from(
        sandbox
            .command(&["tools", "call", "bash", &arguments])
            .env("HOME", &home)
            .env("DSH_HOME", home.join(".dsh"))
            .env_remove("DSH_PERMISSION_MODE")
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "workspace-write refused: the workspace {} would make every file in your home \
             directory (shell start-up files and SSH keys among them) writable",
            home.display()
        )),
        "{}",
        run.stdout
    );
    assert!(!home.join(".profile-probe").exists());
}

#[test]
fn a_dsh_home_named_through_a_link_in_the_workspace_is_refused() {
    // A command could replace the link with a directory of its own, which the next dsh
    // would take for its home (and its `cordis.patch.yml`).
    let sandbox = Sandbox::new();
    let real = sandbox.work().join("dh");
    std::fs::create_dir_all(&real).unwrap();
    let link = sandbox.work().join("dhlink");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let arguments =
        serde_json::json!({"command": "echo ran > beside.txt", "description": "probe"}).to_string();
    let run = Run::from(
        sandbox
            .command(&["tools", "call", "bash", &arguments])
            .env("DSH_HOME", &link)
            .env_remove("DSH_PERMISSION_MODE")
            .output()
            .unwrap(),
    );
    assert!(
        run.stdout.contains(&format!(
            "workspace-write refused: the protected path {} (dsh's home ($DSH_HOME)) passes \
             through the symbolic link {} inside the writable {}",
            link.display(),
            link.display(),
            sandbox.work().display()
        )),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(!sandbox.work().join("beside.txt").exists());
}
