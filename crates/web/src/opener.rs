//! Handing the URL to the user's browser: `$BROWSER` when set, else the platform's opener
//! (`xdg-open`, `open`, `cmd /c start`). The opener runs with the environment scrubbed of
//! secrets (API keys, tokens, passwords), which a browser has no use for.

use std::process::{Command, Stdio};

/// Starts the default browser on a URL.
#[derive(Debug, Clone, Default)]
pub struct BrowserOpener {
    /// The program to run with the URL as its last argument; `None` picks as above.
    program: Option<Vec<String>>,
}

impl BrowserOpener {
    /// An opener that runs `program` (with `args` before the URL).
    pub fn command(program: impl Into<String>, args: &[&str]) -> Self {
        let mut argv = vec![program.into()];
        argv.extend(args.iter().map(|arg| (*arg).to_owned()));
        Self {
            program: Some(argv),
        }
    }

    fn argv(&self) -> Vec<String> {
        if let Some(argv) = &self.program {
            return argv.clone();
        }
        if let Some(browser) = std::env::var_os("BROWSER").filter(|value| !value.is_empty()) {
            return vec![browser.to_string_lossy().into_owned()];
        }
        let platform: &[&str] = if cfg!(target_os = "macos") {
            &["open"]
        } else if cfg!(windows) {
            &["cmd", "/c", "start", ""]
        } else {
            &["xdg-open"]
        };
        platform.iter().map(|arg| (*arg).to_owned()).collect()
    }

    /// Opens `url`; the error says why not, in words that follow "because".
    pub async fn open(&self, url: &str) -> Result<(), String> {
        let argv = self.argv();
        let url = url.to_owned();
        let run = tokio::task::spawn_blocking(move || {
            let Some((program, args)) = argv.split_first() else {
                return Err("no opener is configured".to_owned());
            };
            let mut command = Command::new(program);
            command
                .args(args)
                .arg(&url)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            for (name, _) in std::env::vars_os() {
                if is_secret(&name.to_string_lossy()) {
                    command.env_remove(&name);
                }
            }
            let status = command
                .status()
                .map_err(|error| format!("{program} could not start ({error})"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("{program} failed ({status})"))
            }
        });
        run.await
            .map_err(|error| format!("the opener task failed ({error})"))?
    }
}

/// Whether an environment variable likely holds a credential.
pub(crate) fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|word| name.contains(word))
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
    fn credentials_are_scrubbed_and_the_rest_kept() {
        for name in [
            "DEEPSEEK_API_KEY",
            "GITHUB_TOKEN",
            "aws_secret_access_key",
            "PGPASSWORD",
        ] {
            assert!(is_secret(name), "{name}");
        }
        for name in [
            "PATH",
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "HOME",
            "XDG_RUNTIME_DIR",
        ] {
            assert!(!is_secret(name), "{name}");
        }
    }
}
