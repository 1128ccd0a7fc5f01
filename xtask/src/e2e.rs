//! `cargo xtask e2e`: the browser tests. Builds `dsh`, starts the scripted DeepSeek
//! stand-in, prepares a `DSH_HOME` holding a session written by dsh 0.1.1, starts
//! `dsh web --no-open --port 0`, and runs `e2e/web.mjs` (Playwright driving Debian's
//! Chromium) against the URL it prints. Screenshots and the server's log land in
//! `target/e2e-artifacts/`.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::{cargo, report, workspace_root};

/// The dsh 0.1.1 session the resume step opens.
const STORED_SESSION: &str = "session-04d35f8c-088e-43c0-8e5d-9e3b111b62fa";
/// Where the fixture's `DSH_HOME` lives in the repository.
const FIXTURE_HOME: &str = "apps/dsh/tests/fixtures/dsh-0.1.1/01-zstd-default-one-bash/home";

/// Removes the run's `DSH_HOME` when the run ends, however it ends.
struct TempHome(PathBuf);

impl Drop for TempHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Kills the server when the run ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        crate::process_bench::stop(&mut self.0);
    }
}

pub fn run() -> Result<(), String> {
    let root = workspace_root();
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    if !Path::new(&chromium).exists() {
        return Err(format!(
            "no Chromium at {chromium}: install Debian's chromium (apt-get install chromium) or \
             set CHROMIUM"
        ));
    }
    let e2e = root.join("e2e");
    if !e2e.join("node_modules/playwright-core").exists() {
        run_command(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&e2e),
        )?;
    }
    cargo(&["build", "--locked", "-p", "dsh"])?;

    let artifacts = root.join("target/e2e-artifacts");
    let _ = std::fs::remove_dir_all(&artifacts);
    std::fs::create_dir_all(&artifacts)
        .map_err(|error| format!("{}: {error}", artifacts.display()))?;
    // The home and the workspace side by side: a workspace inside $DSH_HOME is refused.
    let scratch = TempHome(std::env::temp_dir().join(format!("dsh-e2e-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&scratch.0);
    let home = scratch.0.join("home");
    copy_tree(&root.join(FIXTURE_HOME), &home)?;
    let workspace = scratch.0.join("workspace");
    std::fs::create_dir_all(&workspace)
        .map_err(|error| format!("{}: {error}", workspace.display()))?;

    let model = crate::scripted_model::start()?;
    let log_path = artifacts.join("dsh-web.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|error| format!("{}: {error}", log_path.display()))?;
    let mut child = Command::new(root.join("target/debug/dsh"))
        .args(["web", "--no-open", "--port", "0"])
        .current_dir(&workspace)
        .env("DSH_HOME", &home)
        .env("DEEPSEEK_BASE_URL", &model)
        .env("DEEPSEEK_API_KEY", "sk-e2e")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .map_err(|error| format!("cannot start dsh web: {error}"))?;
    let stdout = child.stdout.take();
    let mut server = Server(child);
    let url = printed_url(stdout).map_err(|reason| {
        let exit = match server.0.try_wait() {
            Ok(Some(status)) => format!(" (it exited: {status})"),
            _ => String::new(),
        };
        format!("{reason}{exit}; its log: {}", log_path.display())
    })?;
    report(&format!("==> dsh web is at {url}"));

    let status = Command::new("node")
        .arg(e2e.join("web.mjs"))
        .env("DSH_WEB_URL", &url)
        .env("DSH_E2E_ARTIFACTS", &artifacts)
        .env("DSH_E2E_STORED_SESSION", STORED_SESSION)
        .env("CHROMIUM", &chromium)
        .status()
        .map_err(|error| format!("cannot run node: {error}"))?;
    drop(server);
    drop(scratch);
    report(&format!("    artifacts: {}", artifacts.display()));
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "the browser tests failed ({status}); see {}",
            artifacts.display()
        ))
    }
}

/// Waits up to 60 s for the `dsh web: <url>` line and returns the URL; later lines are
/// drained so the server never blocks on a full pipe.
fn printed_url(stdout: Option<impl Read + Send + 'static>) -> Result<String, String> {
    let stdout = stdout.ok_or("dsh web has no stdout")?;
    let (found, url) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !sent && crate::process_bench::web_url(&line).is_some() {
                let url = line.trim().trim_start_matches("dsh web: ").to_owned();
                let _ = found.send(url);
                sent = true;
            }
        }
    });
    url.recv_timeout(Duration::from_secs(60))
        .map_err(|error| match error {
            mpsc::RecvTimeoutError::Timeout => "dsh web printed no URL within 60 s".to_owned(),
            mpsc::RecvTimeoutError::Disconnected => {
                "dsh web closed its stdout before printing its URL".to_owned()
            }
        })
}

fn run_command(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|error| format!("cannot run {command:?}: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed ({status})"))
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|error| format!("{}: {error}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|error| format!("{}: {error}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|error| format!("{}: {error}", from.display()))?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .map_err(|error| format!("{}: {error}", target.display()))?;
        }
    }
    Ok(())
}
