//! Output budgets and spill files.

use std::os::unix::fs::PermissionsExt;

use dsh_shell::{ParentEnv, ProcessRunner, RunLimits, RunnerOptions, ShellExecRequest, bash_argv};

use super::support::{fixture, fixture_with, limits, parent_env, spec, spec_with};

/// Deterministic bytes of every value (an xorshift stream).
fn noise(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_megabytes_keep_the_last_64000_bytes_and_spill_all_of_them() {
    let f = fixture();
    let data = noise(10_000_000);
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("data.bin");
    std::fs::write(&source, &data).unwrap();
    let command = format!("cat {}", source.display());
    let result = f
        .runner
        .run(&bash_argv(&command), &spec(&command))
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(0));

    let tail = &data[data.len() - 64_000..];
    assert!(result.stdout.truncated);
    assert_eq!(result.stdout.text, String::from_utf8_lossy(tail));

    let spill = result.stdout.spill_path.expect("a spill file");
    assert_eq!(spill.parent().unwrap(), f.spill.path());
    let name = spill.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("dsh-subprocess-{}-", std::process::id()))
            && name.ends_with("-stdout.log"),
        "{name}"
    );
    let mode = std::fs::metadata(&spill).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let spilled = std::fs::read(&spill).unwrap();
    assert_eq!(spilled.len(), data.len());
    assert!(spilled == data, "the spill file differs from the stream");

    assert_eq!(result.stderr.text, "");
    assert!(!result.stderr.truncated && result.stderr.spill_path.is_none());
}

#[tokio::test]
async fn stdout_and_stderr_budgets_are_independent() {
    let f = fixture_with(limits(100), parent_env(&[]));
    let command = "printf 'x%.0s' $(seq 1 500); printf 'e%.0s' $(seq 1 500) >&2";
    let request = ShellExecRequest {
        stdout_max_bytes: Some(500),
        ..ShellExecRequest::new(command)
    };
    let result = f
        .runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    assert!(!result.stdout.truncated);
    assert_eq!(result.stdout.text, "x".repeat(500));
    assert_eq!(result.stdout.spill_path, None);
    assert!(result.stderr.truncated);
    assert_eq!(result.stderr.text, "e".repeat(100));
    let spill = result.stderr.spill_path.unwrap();
    assert!(spill.to_str().unwrap().ends_with("-stderr.log"));
    assert_eq!(std::fs::read(spill).unwrap(), "e".repeat(500).into_bytes());
}

#[tokio::test]
async fn a_stream_past_the_spill_cap_keeps_only_its_tail() {
    let f = fixture_with(
        RunLimits {
            max_spill_bytes: 1_000,
            ..limits(64_000)
        },
        parent_env(&[]),
    );
    let command = "seq 1 2000";
    let request = ShellExecRequest {
        stdout_max_bytes: Some(100),
        ..ShellExecRequest::new(command)
    };
    let result = f
        .runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    assert!(result.stdout.truncated);
    assert!(result.stdout.text.ends_with("1999\n2000\n"));
    assert_eq!(result.stdout.text.len(), 100);
    assert_eq!(result.stdout.spill_path, None);
    assert_eq!(std::fs::read_dir(f.spill.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn the_default_spill_directory_is_private() {
    let runner = ProcessRunner::new(
        limits(10),
        RunnerOptions {
            parent_env: ParentEnv::Inherit,
            spill_dir: None,
        },
    );
    let command = "seq 1 100";
    let request = ShellExecRequest {
        stdout_max_bytes: Some(10),
        ..ShellExecRequest::new(command)
    };
    let result = runner
        .run(&bash_argv(command), &spec_with(request))
        .await
        .unwrap();
    let spill = result.stdout.spill_path.unwrap();
    let dir = spill.parent().unwrap();
    assert!(
        dir.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("dsh-subprocess-")
    );
    assert_eq!(
        std::fs::metadata(dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    std::fs::remove_file(&spill).unwrap();
    let _ = std::fs::remove_dir(dir);
}
