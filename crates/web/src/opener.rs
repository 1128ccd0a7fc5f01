//! Handing the URL to the user's browser: `$BROWSER` when set (a `:`-separated list of
//! commands, tried in order; `%s` stands for the URL, else it is appended), else the
//! platform's opener (`xdg-open`, `open`, `cmd /c start`).
//!
//! The opener never sees the token on its command line, where any local user could read it
//! (`ps`, `/proc/*/cmdline`), and a browser it starts would keep it for its whole life: it is
//! given a [`LaunchPage`] instead, a private file that sends the browser on to the URL. Its
//! environment is scrubbed as a shell's is ([`dsh_shell::is_scrubbed_name`]: credentials and
//! `DSH_*`).

use std::path::PathBuf;
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

    /// Opens `url` through a [`LaunchPage`] (directly when none can be written); returns
    /// the page, which must live until the browser has read it. The error says why not, in
    /// words that follow "because".
    pub async fn open(&self, url: &str) -> Result<Option<LaunchPage>, String> {
        let page = LaunchPage::write(url).ok();
        let target = page
            .as_ref()
            .map_or_else(|| url.to_owned(), LaunchPage::file_url);
        let commands = self.commands();
        tokio::task::spawn_blocking(move || run_first_that_works(&commands, &target))
            .await
            .map_err(|error| format!("the opener task failed ({error})"))??;
        Ok(page)
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
    let mut command = Command::new(program);
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
    let status = command
        .status()
        .map_err(|error| format!("{program} could not start ({error})"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} failed ({status})"))
    }
}

/// A file readable only by this user that sends the browser on to the URL; removed when
/// dropped.
#[derive(Debug)]
pub struct LaunchPage {
    path: PathBuf,
}

impl LaunchPage {
    /// Writes the page for `url` under `$XDG_RUNTIME_DIR` (else the temp directory), in a
    /// new file with an unguessable name: an existing file or link is never written through.
    pub fn write(url: &str) -> std::io::Result<Self> {
        use std::io::Write as _;
        let dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|dir| dir.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let escaped = url
            .replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;");
        let (mut file, path) = create_private(&dir)?;
        let page = Self { path };
        write!(
            file,
            "<!doctype html>\n<meta charset=\"utf-8\">\n<title>dsh web</title>\n\
             <meta http-equiv=\"refresh\" content=\"0;url={escaped}\">\n\
             <p>Opening <a href=\"{escaped}\">dsh web</a>…</p>\n"
        )?;
        Ok(page)
    }

    /// The page's `file://` URL.
    pub fn file_url(&self) -> String {
        format!("file://{}", self.path.display())
    }
}

impl Drop for LaunchPage {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Creates `dsh-web-<random>.html` in `dir`, readable only by this user, refusing to open
/// anything that already exists (`O_EXCL`, which also refuses a planted link).
fn create_private(dir: &std::path::Path) -> std::io::Result<(std::fs::File, PathBuf)> {
    use ring::rand::SecureRandom as _;
    let random = ring::rand::SystemRandom::new();
    let mut last = std::io::Error::other("no name tried");
    for _ in 0..8 {
        let mut bytes = [0_u8; 12];
        random
            .fill(&mut bytes)
            .map_err(|_| std::io::Error::other("the OS random generator failed"))?;
        let name: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let path = dir.join(format!("dsh-web-{name}.html"));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => last = error,
            Err(error) => return Err(error),
        }
    }
    Err(last)
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
    fn browser_lists_are_split_into_commands() {
        assert_eq!(
            browser_commands("firefox -new-tab %s:xdg-open::"),
            vec![
                vec!["firefox".to_owned(), "-new-tab".to_owned(), "%s".to_owned()],
                vec!["xdg-open".to_owned()],
            ]
        );
    }

    #[test]
    fn the_launch_page_is_private_points_at_the_url_and_goes_away() {
        let page = LaunchPage::write("http://127.0.0.1:1/#token=t&x").unwrap_or_else(|e| {
            panic!("{e}");
        });
        let path = page.path.clone();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            text.contains("url=http://127.0.0.1:1/#token=t&amp;x"),
            "{text}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777);
            assert_eq!(mode.ok(), Some(0o600));
        }
        let other = LaunchPage::write("http://127.0.0.1:1/").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(other.path, path, "each page gets a fresh name");
        drop(page);
        assert!(!path.exists());
    }
}
