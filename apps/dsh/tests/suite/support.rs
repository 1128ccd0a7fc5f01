//! Running the built `dsh` with a private `DSH_HOME`.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

/// A temporary `DSH_HOME` and working directory for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Self { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Writes `text` at `path` under the sandbox and returns the absolute path.
    pub fn write(&self, path: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dsh"));
        command
            .args(args)
            .current_dir(self.work())
            .env("DSH_HOME", self.home())
            .env_remove("DSH_LOG")
            .env_remove("RUST_LOG");
        command
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().unwrap())
    }

    /// Hands the whole sandbox to the unprivileged user `uid` (for [`Sandbox::command_as`]).
    pub fn give_to(&self, uid: u32) {
        fn walk(path: &Path, uid: u32) {
            std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
            if path.is_dir() && !path.is_symlink() {
                for entry in std::fs::read_dir(path).unwrap() {
                    walk(&entry.unwrap().path(), uid);
                }
            }
        }
        walk(self.dir.path(), uid);
    }

    /// `dsh args` run as the unprivileged user `uid` (through `setpriv`), with its home in
    /// the sandbox; `None` when this machine cannot do that (not root, or no `setpriv`).
    pub fn command_as(&self, uid: u32, args: &[&str]) -> Option<Command> {
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
            .into_iter()
            .find(|path| Path::new(path).exists())?;
        if !nix::unistd::geteuid().is_root() {
            return None;
        }
        let mut command = Command::new(setpriv);
        command
            .args([
                format!("--reuid={uid}"),
                format!("--regid={uid}"),
                "--clear-groups".to_owned(),
                env!("CARGO_BIN_EXE_dsh").to_owned(),
            ])
            .args(args)
            .current_dir(self.work())
            .env("DSH_HOME", self.home())
            .env("HOME", self.dir.path())
            .env_remove("DSH_LOG")
            .env_remove("RUST_LOG");
        Some(command)
    }

    /// `dsh args`, as [`NOBODY`] when `as_nobody` (the sandbox is handed to it first; `None`
    /// where the machine cannot switch users), else as the test's own user.
    pub fn command_maybe_as_nobody(&self, as_nobody: bool, args: &[&str]) -> Option<Command> {
        if as_nobody {
            self.give_to(NOBODY);
            self.command_as(NOBODY, args)
        } else {
            Some(self.command(args))
        }
    }
}

/// The uid unprivileged runs use (`nobody` on Debian).
pub const NOBODY: u32 = 65534;

/// What one run printed and how it exited.
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

pub fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The repository root (the shipped overlays are relative to it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}
