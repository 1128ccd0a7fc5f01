//! Running the built binary with a private home, against a fake DeepSeek.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dsh_test_support::fake_deepseek::FakeDeepSeek;

/// A temporary home and working directory for one run.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Self { dir }
    }

    /// `$DSH_EMBED_HOME` (created by the binary).
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The binary with `args`, in the sandbox, talking to `fake`.
    pub fn command(&self, fake: &FakeDeepSeek, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-embed-example"));
        command
            .args(args)
            .current_dir(self.dir.path().join("work"))
            .env("DSH_EMBED_HOME", self.home())
            .env("DEEPSEEK_BASE_URL", fake.base_url())
            .env("DEEPSEEK_API_KEY", "sk-test")
            .env_remove("DSH_EMBED_MODEL")
            .env_remove("RUST_LOG");
        command
    }
}

/// What one run printed and how it exited.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Self {
        Self {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

/// Runs `command` off the async runtime, so the fake keeps serving meanwhile.
pub async fn run(mut command: Command) -> Run {
    tokio::task::spawn_blocking(move || Run::from(command.output().unwrap()))
        .await
        .unwrap()
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}
