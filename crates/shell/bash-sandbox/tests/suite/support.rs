//! Helpers: directories outside every writable root, executors over the test runner binary,
//! and fake runners for the classification rules.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_bash_sandbox::{
    FixedPolicy, LaunchStrategy, SandboxBashExecutor, SandboxOptions, SandboxRunner,
};
use dsh_shell::{
    BashRunner, NetworkPolicy, ParentEnv, RunnerOptions, SandboxExecutionPolicy, SandboxMode,
    ShellConfig, ShellError, ShellExecRequest, ShellExecutor, ShellProcess, ShellRunResult,
};

/// The runner binary this crate builds.
pub fn runner() -> SandboxRunner {
    SandboxRunner::new(env!("CARGO_BIN_EXE_dsh-sandbox-run"), Vec::new())
}

/// A directory outside `/tmp` and the OS temp directory (so outside every writable root
/// unless it is the workspace), resolved. The build directory may itself lie under `/tmp` (a
/// checkout there), so the first usable base outside the temp directories is taken: the
/// target directory, `/var/tmp`, then the home directory.
pub fn outside_dir() -> (tempfile::TempDir, PathBuf) {
    let temp_roots = [
        std::fs::canonicalize("/tmp").unwrap_or_else(|_| "/tmp".into()),
        std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir()),
    ];
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let bases = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        Some(PathBuf::from("/var/tmp")),
        home,
    ];
    for base in bases.into_iter().flatten() {
        let _ = std::fs::create_dir_all(&base);
        let Ok(resolved) = std::fs::canonicalize(&base) else {
            continue;
        };
        if temp_roots.iter().any(|root| resolved.starts_with(root)) {
            continue;
        }
        if let Ok(dir) = tempfile::Builder::new()
            .prefix("dsh-sandbox-test-")
            .tempdir_in(&resolved)
        {
            let path = std::fs::canonicalize(dir.path()).unwrap();
            return (dir, path);
        }
    }
    panic!("no writable directory outside /tmp and the temp directory for the sandbox tests")
}

pub fn policy(mode: SandboxMode, root: &Path, network: NetworkPolicy) -> SandboxExecutionPolicy {
    SandboxExecutionPolicy {
        mode,
        workspace_root: root.to_path_buf(),
        session_id: None,
        network,
        protected_paths: Vec::new(),
    }
}

/// A short grace, spill files in their own directory.
pub fn bash() -> (BashRunner, tempfile::TempDir) {
    let spill = tempfile::tempdir().unwrap();
    let config = ShellConfig {
        grace_ms: 200,
        ..ShellConfig::default()
    };
    let bash = BashRunner::with_options(
        config,
        RunnerOptions {
            parent_env: ParentEnv::Inherit,
            spill_dir: Some(spill.path().to_path_buf()),
        },
    )
    .unwrap();
    (bash, spill)
}

/// Options with every command through `runner` and no bubblewrap (the tests must not
/// depend on the host having it), probes bounded by 5 s.
pub fn options(runner: SandboxRunner) -> SandboxOptions {
    SandboxOptions {
        bwrap: None,
        strategy: LaunchStrategy::Runner,
        ..SandboxOptions::new(runner)
    }
}

/// The default options: confinements held on launch threads, the real runner where a
/// thread cannot hold one, no bubblewrap.
pub fn thread_options() -> SandboxOptions {
    SandboxOptions {
        bwrap: None,
        ..SandboxOptions::new(runner())
    }
}

pub struct Fixture {
    pub executor: Arc<SandboxBashExecutor>,
    pub shell: Arc<dyn ShellExecutor>,
    _spill: Option<tempfile::TempDir>,
}

impl Fixture {
    /// A fixture over an executor built by the caller (who keeps its spill directory).
    pub fn new(executor: Arc<SandboxBashExecutor>, shell: Arc<dyn ShellExecutor>) -> Self {
        Self {
            executor,
            shell,
            _spill: None,
        }
    }
}

/// An executor whose standing policy is `standing`.
pub fn executor_with(standing: SandboxExecutionPolicy, options: SandboxOptions) -> Fixture {
    let (bash, spill) = bash();
    let executor = Arc::new(SandboxBashExecutor::new(
        bash,
        Arc::new(FixedPolicy(standing)),
        options,
    ));
    let shell: Arc<dyn ShellExecutor> = Arc::clone(&executor) as Arc<dyn ShellExecutor>;
    Fixture {
        executor,
        shell,
        _spill: Some(spill),
    }
}

/// An executor with the default strategy (launch threads) and the standing policy
/// `standing`.
pub fn executor(standing: SandboxExecutionPolicy) -> Fixture {
    executor_with(standing, thread_options())
}

/// An executor sending every command through the real runner process.
pub fn runner_executor(standing: SandboxExecutionPolicy) -> Fixture {
    executor_with(standing, options(runner()))
}

/// Both strategies, named, over the same standing policy.
pub fn both(standing: &SandboxExecutionPolicy) -> [(&'static str, Fixture); 2] {
    [
        ("thread", executor(standing.clone())),
        ("runner", runner_executor(standing.clone())),
    ]
}

/// A runner that is a bash script (`bash -c <script> fake-runner <args>…`): it does not
/// confine; it exercises the executor's reading of outcomes.
pub fn fake_runner(script: &str) -> SandboxRunner {
    SandboxRunner::new(
        "bash",
        vec!["-c".to_owned(), script.to_owned(), "fake-runner".to_owned()],
    )
}

/// The part of a fake runner that finds its status channel (`--status-fd <n>` or bwrap's
/// `--info-fd <n>`) and sets `status_fd` to it.
pub const FIND_STATUS_FD: &str = r#"status_fd=; prev=; for a in "$@"; do case "$prev" in --status-fd|--info-fd) status_fd=$a;; esac; prev=$a; done"#;

/// The part of a fake runner that skips to the command after `--` and runs it.
pub const EXEC_AFTER_SEPARATOR: &str =
    r#"while [ "$#" -gt 0 ] && [ "$1" != -- ]; do shift; done; shift; exec "$@""#;

pub async fn run(
    fixture: &Fixture,
    request: ShellExecRequest,
) -> Result<ShellRunResult, ShellError> {
    let spec = fixture.shell.resolve(request)?;
    fixture.shell.run(spec).await
}

/// Runs `command` in `workdir` with `env` entries.
pub async fn run_in(
    fixture: &Fixture,
    command: &str,
    workdir: &Path,
    env: &[(&str, &str)],
) -> ShellRunResult {
    let request = ShellExecRequest {
        workdir: Some(workdir.to_path_buf()),
        timeout_ms: Some(30_000.0),
        env: env
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect(),
        ..ShellExecRequest::new(command)
    };
    run(fixture, request).await.unwrap()
}

pub fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

pub async fn settle(process: &ShellProcess) {
    tokio::time::timeout(Duration::from_secs(20), process.done())
        .await
        .expect("the background process settles");
}

pub async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
