//! Handing the URL to the user's browser: `$BROWSER` when set (a `:`-separated list of
//! commands, tried in order; `%s` stands for the URL, else it is appended), else the
//! platform's opener (`xdg-open`, `open`, `cmd /c start`).
//!
//! The opener runs unconfined, so a bare program name is looked up in the system's own
//! directories ([`dsh_shell::system_program`]), never through `PATH`, where a model's command
//! could have planted a program of that name (a project's `.venv/bin`); an absolute path in
//! `$BROWSER` is the user's explicit choice and is run as given. Either way the opener's own
//! `PATH` holds only those directories, so what it runs in turn (`xdg-open` runs `xdg-mime`,
//! `gio`, the browser) cannot be planted either.
//!
//! The opener's command line is readable by any local process (`ps`, `/proc/*/cmdline`) and
//! a browser it starts keeps it for its whole life, so the caller hands it a URL holding only
//! a one-time login code, never the token; nothing is written to a file. Its environment is
//! scrubbed as a shell's is ([`dsh_shell::is_scrubbed_name`]: credentials and `DSH_*`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Starts the default browser on a URL.
#[derive(Debug, Clone, Default)]
pub struct BrowserOpener {
    /// The commands to try; `None` picks as above.
    commands: Option<Vec<Vec<String>>>,
}

impl BrowserOpener {
    /// An opener that runs `program` (with `args` before the URL, or with the URL in place
    /// of an argument `%s`).
    pub fn command(program: impl Into<String>, args: &[&str]) -> Self {
        let mut argv = vec![program.into()];
        argv.extend(args.iter().map(|arg| (*arg).to_owned()));
        Self {
            commands: Some(vec![argv]),
        }
    }

    fn commands(&self) -> Vec<Vec<String>> {
        if let Some(commands) = &self.commands {
            return commands.clone();
        }
        if let Some(browser) = std::env::var("BROWSER")
            .ok()
            .filter(|value| !value.trim().is_empty())
        {
            return browser_commands(&browser);
        }
        let platform: &[&str] = if cfg!(target_os = "macos") {
            &["open"]
        } else if cfg!(windows) {
            &["cmd", "/c", "start", ""]
        } else {
            &["xdg-open"]
        };
        vec![platform.iter().map(|arg| (*arg).to_owned()).collect()]
    }

    /// Opens `url`. The error says why not, in words that follow "because".
    pub async fn open(&self, url: &str) -> Result<(), String> {
        let commands = self.commands();
        let target = url.to_owned();
        tokio::task::spawn_blocking(move || run_first_that_works(&commands, &target))
            .await
            .map_err(|error| format!("the opener task failed ({error})"))?
    }
}

/// `$BROWSER`'s commands: `:`-separated, each split on whitespace.
fn browser_commands(value: &str) -> Vec<Vec<String>> {
    value
        .split(':')
        .map(|command| command.split_whitespace().map(str::to_owned).collect())
        .filter(|argv: &Vec<String>| !argv.is_empty())
        .collect()
}

/// Runs each command on `target` until one succeeds; else the last failure.
fn run_first_that_works(commands: &[Vec<String>], target: &str) -> Result<(), String> {
    let mut failure = "no opener is configured".to_owned();
    for argv in commands {
        match run(argv, target) {
            Ok(()) => return Ok(()),
            Err(reason) => failure = reason,
        }
    }
    Err(failure)
}

fn run(argv: &[String], target: &str) -> Result<(), String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("an empty opener command".to_owned());
    };
    let mut command = Command::new(resolve(program)?);
    let mut placed = false;
    for arg in args {
        if arg.contains("%s") {
            placed = true;
            command.arg(arg.replace("%s", target));
        } else {
            command.arg(arg);
        }
    }
    if !placed {
        command.arg(target);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (name, _) in std::env::vars_os() {
        if dsh_shell::is_scrubbed_name(&name) {
            command.env_remove(&name);
        }
    }
    // What the opener runs in turn comes from the system's directories too.
    command.env("PATH", dsh_shell::system_path());
    let status = command
        .status()
        .map_err(|error| format!("{program} could not start ({error})"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} failed ({status})"))
    }
}

/// Where `program` is run from: an absolute path as given; a bare name from the system's
/// directories only. The error follows "because".
fn resolve(program: &str) -> Result<PathBuf, String> {
    let path = Path::new(program);
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    if program.contains('/') {
        return Err(format!(
            "{program} is a relative path; give the opener's absolute path"
        ));
    }
    dsh_shell::system_program(program).ok_or_else(|| {
        format!(
            "{program} is not a program owned by root in {} (one found through PATH could \
             have been planted by a command); set BROWSER to its absolute path to use it",
            dsh_shell::SYSTEM_PROGRAM_DIRS.join(", ")
        )
    })
}

/// Whether dsh runs in an SSH session (a browser opened there would be on the wrong machine).
pub(crate) fn in_ssh_session() -> bool {
    ["SSH_CONNECTION", "SSH_TTY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_come_from_system_directories_only() {
        assert!(resolve("sh").unwrap().is_absolute());
        assert_eq!(
            resolve("/opt/browser/run").unwrap(),
            PathBuf::from("/opt/browser/run")
        );
        assert!(
            resolve("bin/browser")
                .unwrap_err()
                .contains("is a relative path")
        );
        let missing = resolve("dsh-test-browser-nowhere").unwrap_err();
        assert!(
            missing.starts_with("dsh-test-browser-nowhere is not a program owned by root in"),
            "{missing}"
        );
    }

    #[test]
    fn browser_lists_are_split_into_commands() {
        assert_eq!(
            browser_commands("firefox -new-tab %s:xdg-open::"),
            vec![
                vec!["firefox".to_owned(), "-new-tab".to_owned(), "%s".to_owned()],
                vec!["xdg-open".to_owned()],
            ]
        );
    }
}
