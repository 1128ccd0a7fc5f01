//! The widening, spoofing and lifetime findings, through the real binary: temp roots and
//! workspaces that would open too much, inherited descriptors, a command posing as the
//! runner, and commands outliving a killed `dsh`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dsh_test_support::fake_deepseek::FakeDeepSeek;
use serde_json::json;

use super::headless::{answer, bash_call};
use super::support::{Run, Sandbox};

fn call(sandbox: &Sandbox, command: &str, env: &[(&str, &str)]) -> Run {
    let arguments = json!({"command": command, "description": "probe"}).to_string();
    let mut run = sandbox.command(&["tools", "call", "bash", &arguments]);
    run.env_remove("DSH_PERMISSION_MODE");
    for (name, value) in env {
        run.env(name, value);
    }
    Run::from(run.output().unwrap())
}

#[test]
fn a_temp_directory_that_widens_the_roots_is_left_out_and_named() {
    let sandbox = Sandbox::new();
    let probe = "/dsh-tmpdir-probe";
    // A home outside every temp directory, as a real one is.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = outside.path().join("user-home");
    std::fs::create_dir_all(&home).unwrap();
    for tmpdir in ["/", home.to_str().unwrap()] {
        let command = format!("touch {probe} $HOME/probe; echo status=$?");
        let run = call(
            &sandbox,
            &command,
            &[("TMPDIR", tmpdir), ("HOME", home.to_str().unwrap())],
        );
        let planted = std::path::Path::new(probe).exists();
        let _ = std::fs::remove_file(probe);
        assert!(!planted, "TMPDIR={tmpdir} made / writable: {}", run.stdout);
        assert!(
            !home.join("probe").exists(),
            "TMPDIR={tmpdir} made the home writable"
        );
        assert!(run.stdout.contains("status=1"), "{}", run.stdout);
        assert!(
            run.stderr.contains(&format!(
                "TMPDIR {tmpdir} is not a writable root for commands because"
            )),
            "{}",
            run.stderr
        );
    }
    // A missing temp directory is left out too; the command still runs, and nothing blames
    // the host.
    let run = call(&sandbox, "echo ran", &[("TMPDIR", "/nonexistent-dsh-tmp")]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("ran\n"), "{}", run.stdout);
    assert!(!run.stdout.contains("Install bubblewrap"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("TMPDIR /nonexistent-dsh-tmp is not a writable root"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_workspace_of_the_root_directory_is_refused() {
    let sandbox = Sandbox::new();
    let arguments = json!({"command": "touch /dsh-root-probe", "description": "probe"}).to_string();
    let run = Run::from(
        sandbox
            .command(&["tools", "call", "bash", &arguments])
            .current_dir("/")
            .env_remove("DSH_PERMISSION_MODE")
            .output()
            .unwrap(),
    );
    let planted = std::path::Path::new("/dsh-root-probe").exists();
    let _ = std::fs::remove_file("/dsh-root-probe");
    assert!(!planted);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "workspace-write refused: the workspace / would make every file on this machine \
             writable to the model's commands"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_descriptor_the_caller_left_open_never_reaches_the_command() {
    let sandbox = Sandbox::new();
    let outside = sandbox.dir.path().join("outside-file");
    std::fs::write(&outside, "").unwrap();
    let arguments = json!({"command": "echo x >&9; echo status=$?", "description": "probe"});
    let script = format!(
        "exec 9>>'{}'; exec '{}' tools call bash '{}'",
        outside.display(),
        env!("CARGO_BIN_EXE_dsh"),
        arguments
    );
    let run = Run::from(
        Command::new("bash")
            .args(["-c", &script])
            .current_dir(sandbox.work())
            .env("DSH_HOME", sandbox.home())
            .env_remove("DSH_PERMISSION_MODE")
            .output()
            .unwrap(),
    );
    assert!(run.stdout.contains("status=1"), "{}", run.stdout);
    assert!(run.stdout.contains("Bad file descriptor"), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "");
}

#[test]
fn a_command_posing_as_the_runner_is_a_result_with_its_output() {
    let sandbox = Sandbox::new();
    let run = call(
        &sandbox,
        "echo partial output; echo 'landlock-run: cannot open rule path: /x: gone' >&2; exit 125",
        &[],
    );
    assert_eq!(
        run.code,
        Some(0),
        "a nonzero exit is a result: {}",
        run.stdout
    );
    assert!(run.stdout.starts_with("partial output\n"), "{}", run.stdout);
    assert!(run.stdout.contains("[exit code: 125]"), "{}", run.stdout);
    assert!(
        !run.stdout.contains("SANDBOX_UNAVAILABLE"),
        "{}",
        run.stdout
    );
}

/// Whether a process whose command line contains `marker` is alive.
fn alive(marker: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", marker])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A `sleep` duration of `whole` seconds no other test process uses, so a leftover of an
/// earlier run can never satisfy (or spoil) this run's `alive` checks.
fn unique_seconds(whole: u32) -> String {
    format!("{whole}.{}", std::process::id())
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// `dsh tools call bash` of `command`, running, its output discarded.
fn spawn_call(sandbox: &Sandbox, command: &str) -> Child {
    let arguments = json!({"command": command, "description": "long"}).to_string();
    sandbox
        .command(&["tools", "call", "bash", &arguments])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn kill_hard(child: &mut Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = child.wait();
}

#[test]
fn a_running_command_and_its_children_die_with_a_killed_dsh() {
    let sandbox = Sandbox::new();
    let (outer, inner) = (unique_seconds(3131), unique_seconds(4141));
    // Spelled so that only the sleeps themselves match: not dsh's own command line (it holds
    // the arguments) nor bash's.
    let command = format!("s=sleep; $s {outer} & $s {inner}; wait");
    let (outer, inner) = (format!("sleep {outer}"), format!("sleep {inner}"));
    let mut dsh = spawn_call(&sandbox, &command);
    wait_for("both sleeps started", || alive(&outer) && alive(&inner));
    kill_hard(&mut dsh);
    wait_for("both sleeps died with dsh", || {
        !alive(&outer) && !alive(&inner)
    });
}

#[test]
fn a_dsh_killed_at_any_moment_of_a_spawn_leaves_nothing_behind() {
    let sandbox = Sandbox::new();
    let seconds = unique_seconds(7171);
    let (marker, command) = (format!("sleep {seconds}"), format!("s=sleep; $s {seconds}"));
    for delay_ms in (0..40).step_by(2) {
        let mut dsh = spawn_call(&sandbox, &command);
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill_hard(&mut dsh);
    }
    // And once with the command surely running, so the loop above is no vacuous pass.
    let mut dsh = spawn_call(&sandbox, &command);
    wait_for("the last command started", || alive(&marker));
    kill_hard(&mut dsh);
    wait_for("no command outlived its dsh", || !alive(&marker));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_dies_with_a_killed_dsh_too() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    let (job, foreground) = (
        format!("sleep {}", unique_seconds(5151)),
        format!("sleep {}", unique_seconds(6161)),
    );
    let arguments = json!({
        "command": job,
        "description": "a server",
        "run_in_background": true
    })
    .to_string();
    fake.push(dsh_test_support::fake_deepseek::Reply::sse(
        dsh_test_support::sse::tool_call_events(
            "call_job",
            "bash",
            &arguments,
            2,
            Some(dsh_test_support::sse::usage(100, 10, None, None)),
        ),
    ));
    fake.push(bash_call("call_wait", &foreground));
    fake.push(answer("Done."));
    let mut dsh = super::headless::against(&sandbox, &fake, &["--profile", "headless", "serve"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = tokio::task::spawn_blocking(move || {
        wait_for("the job and the foreground command started", || {
            alive(&job) && alive(&foreground)
        });
        kill_hard(&mut dsh);
        wait_for("both died with dsh", || !alive(&job) && !alive(&foreground));
    });
    started.await.unwrap();
}

#[test]
fn a_job_that_left_its_group_dies_with_a_killed_dsh_too() {
    let sandbox = Sandbox::new();
    // Job control gives the job a process group of its own, as `timeout` does for itself.
    let seconds = unique_seconds(8181);
    let marker = format!("sleep {seconds}");
    let mut dsh = spawn_call(&sandbox, &format!("set -m; s=sleep; $s {seconds} & wait"));
    wait_for("the job started", || alive(&marker));
    kill_hard(&mut dsh);
    wait_for("the job died with dsh", || !alive(&marker));
}

#[test]
fn a_bash_planted_on_path_never_runs_unconfined() {
    let sandbox = Sandbox::new();
    // A command could write `bash` into a PATH directory inside its workspace (an activated
    // `.venv/bin`); dsh's own unconfined helpers must never pick it up.
    let log = sandbox.work().join("planted-ran");
    let planted = sandbox.write(
        "work/.venv/bin/bash",
        &format!(
            "#!/bin/sh\ngrep NoNewPrivs /proc/self/status >> {}\nexec /bin/bash \"$@\"\n",
            log.display()
        ),
    );
    std::fs::set_permissions(
        &planted,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        planted.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    let run = call(&sandbox, "echo ran", &[("PATH", &path)]);
    assert!(
        run.stdout.starts_with("ran\n"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    // The command's own bash is found on its PATH, and runs confined (`no_new_privs` set):
    // proof that the planted one was there to be found.
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!log.is_empty(), "the PATH was not honoured at all");
    assert!(
        log.lines().all(|line| line.ends_with('1')),
        "the planted bash ran without confinement: {log}"
    );
}

#[test]
fn a_run_that_spilled_nothing_leaves_no_spill_directory() {
    let sandbox = Sandbox::new();
    let temp = tempfile::tempdir().unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_dsh"));
    let arguments = json!({"command": "echo hi", "description": "probe"}).to_string();
    let output = run
        .args(["tools", "call", "bash", &arguments])
        .current_dir(sandbox.work())
        .env("DSH_HOME", sandbox.home())
        .env("TMPDIR", temp.path())
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("DSH_PERMISSION_MODE")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let left: Vec<_> = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
