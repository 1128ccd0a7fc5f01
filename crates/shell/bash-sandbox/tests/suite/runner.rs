//! The runner binary itself (`dsh-sandbox-run`, the entry `dsh __sandbox-run` shares): its
//! probe, its failures and what it leaves the command.

use std::process::{Command, Output};

use super::support::runner;

fn run_runner(args: &[&str]) -> Output {
    Command::new(runner().program).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_probe_reports_enforcement() {
    let output = run_runner(&["--probe"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = text(&output.stdout);
    assert!(
        stdout == "landlock: fully enforced\n"
            || stdout == "landlock: partially enforced (older ABI)\n",
        "{stdout:?}"
    );
    assert_eq!(text(&output.stderr), "");
}

#[test]
fn failures_exit_125_with_one_runner_line() {
    for (args, line) in [
        (
            &["--probe", "--"][..],
            "landlock-run: usage error: --probe takes no other arguments\n",
        ),
        (
            &["--ro", "/"],
            "landlock-run: usage error: missing `-- <argv>...` command\n",
        ),
        (
            &["--what"],
            "landlock-run: usage error: unknown argument: --what\n",
        ),
        (
            &["--ro", "/nonexistent-root", "--", "true"],
            "landlock-run: cannot open rule path: /nonexistent-root: No such file or directory (os error 2)\n",
        ),
        (
            &["--ro", "/", "--", "/nonexistent-program"],
            "landlock-run: exec failed: /nonexistent-program: No such file or directory (os error 2)\n",
        ),
    ] {
        let output = run_runner(args);
        assert_eq!(output.status.code(), Some(125), "{args:?}");
        assert_eq!(text(&output.stderr), line, "{args:?}");
        assert_eq!(text(&output.stdout), "");
    }
}

#[test]
fn the_command_keeps_its_exit_environment_and_arguments() {
    let output = Command::new(runner().program)
        .args([
            "--ro",
            "/",
            "--rw",
            "/dev/null",
            "--",
            "bash",
            "-c",
            "echo \"$DSH_TEST_VALUE $0 $1\"; exit 7",
            "zero",
            "--ro",
        ])
        .env("DSH_TEST_VALUE", "kept")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(7));
    assert_eq!(text(&output.stdout), "kept zero --ro\n");
    assert_eq!(text(&output.stderr), "");
}

#[test]
fn no_new_privs_is_set_and_the_network_filter_is_seccomp() {
    let status = |extra: &[&str]| {
        let mut args = vec!["--ro", "/"];
        args.extend_from_slice(extra);
        args.extend([
            "--",
            "grep",
            "-E",
            "^(NoNewPrivs|Seccomp):",
            "/proc/self/status",
        ]);
        text(&run_runner(&args).stdout)
    };
    assert_eq!(status(&[]), "NoNewPrivs:\t1\nSeccomp:\t0\n");
    assert_eq!(status(&["--deny-network"]), "NoNewPrivs:\t1\nSeccomp:\t2\n");
}
