//! How a confined outcome is read: denials, launcher failures and runner spawn failures
//! (after dsh's `bash-sandbox/src/helpers.ts`, except that a launcher failure is read from
//! the status channel rather than from the command's stderr).

use std::io::ErrorKind;
use std::path::Path;

use dsh_shell::ShellError;
use nix::unistd::{AccessFlags, access};

/// Whether a nonzero exit's stderr contains one of `signatures` (case-insensitive). A
/// signal death (`None`) or a zero exit is never a denial.
pub fn matches_signature(exit_code: Option<i32>, stderr: &str, signatures: &[&str]) -> bool {
    if matches!(exit_code, None | Some(0)) {
        return false;
    }
    let lowered = stderr.to_lowercase();
    signatures
        .iter()
        .any(|signature| lowered.contains(&signature.to_lowercase()))
}

/// Launcher failures, read from the status channel (where the command cannot write), never
/// from what the command printed.
pub mod launch_failure {
    /// The Landlock runner writes its failure there; anything written means the command did
    /// not run. The detail is the first line.
    pub fn runner(report: Option<&str>) -> Option<String> {
        let line = report?.lines().find(|line| !line.trim().is_empty())?;
        Some(format!("{}{line}", crate::sandbox_run::RUNNER_LINE_PREFIX))
    }

    /// bubblewrap writes `{"child-pid": …}` there once the command started (`--info-fd`); a
    /// nonzero exit without it means bubblewrap failed first. The detail is bubblewrap's
    /// own `bwrap: ` line on stderr when there is one.
    pub fn bwrap(exit_code: Option<i32>, stderr: &str, report: Option<&str>) -> Option<String> {
        if report.is_some_and(|report| report.contains("\"child-pid\"")) {
            return None;
        }
        if exit_code == Some(0) {
            return None;
        }
        let line = stderr
            .lines()
            .find(|line| line.to_lowercase().starts_with("bwrap: "));
        Some(match (line, exit_code) {
            (Some(line), _) => line.to_owned(),
            (None, Some(code)) => {
                format!("bwrap exited with status {code} before starting the command")
            }
            (None, None) => "bwrap was killed before starting the command".to_owned(),
        })
    }
}

/// Whether a spawn failure is the runner's own: the working directory is a usable directory
/// (so it is not to blame), the error is "not found" or "permission denied", and the
/// program that failed is the runner (`argv[0]`).
pub fn is_runner_spawn_failure(error: &ShellError, runner_program: &str, workdir: &Path) -> bool {
    let ShellError::Spawn {
        program, source, ..
    } = error
    else {
        return false;
    };
    program == runner_program
        && matches!(
            source.kind(),
            ErrorKind::NotFound | ErrorKind::PermissionDenied
        )
        && usable_workdir(workdir)
}

fn usable_workdir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_dir())
        && access(path, AccessFlags::X_OK).is_ok()
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::PathBuf;

    use super::*;
    use crate::backend::{Backend, Enforcement};

    const LANDLOCK: Backend = Backend::Landlock {
        enforcement: Enforcement::Partial,
        abi: 3,
    };

    #[test]
    fn denials_need_a_nonzero_exit_and_the_dialect() {
        let signatures = LANDLOCK.denial_signatures();
        let stderr = "touch: cannot touch '/etc/x': Permission denied\n";
        assert!(matches_signature(Some(1), stderr, signatures));
        assert!(!matches_signature(Some(0), stderr, signatures));
        assert!(!matches_signature(None, stderr, signatures));
        assert!(!matches_signature(Some(1), "No such file", signatures));
        assert!(matches_signature(
            Some(2),
            "x: READ-ONLY FILE SYSTEM",
            Backend::Bwrap.denial_signatures()
        ));
    }

    #[test]
    fn launcher_failures_come_from_the_status_channel() {
        assert_eq!(launch_failure::runner(None), None);
        assert_eq!(
            launch_failure::runner(Some("cannot open rule path: /w: gone\n")).as_deref(),
            Some("landlock-run: cannot open rule path: /w: gone")
        );
        // What the command printed is never a launcher failure under bwrap once it started.
        let started = Some("{\n    \"child-pid\": 42\n}");
        assert_eq!(
            launch_failure::bwrap(Some(1), "bwrap: spoofed\n", started),
            None
        );
        assert_eq!(
            launch_failure::bwrap(Some(1), "bwrap: setting up uid map: denied\n", None).as_deref(),
            Some("bwrap: setting up uid map: denied")
        );
        assert_eq!(
            launch_failure::bwrap(Some(1), "", None).as_deref(),
            Some("bwrap exited with status 1 before starting the command")
        );
    }

    #[test]
    fn runner_spawn_failures_name_the_runner() {
        let spawn = |program: &str, kind: io::ErrorKind, cwd: &str| ShellError::Spawn {
            program: program.to_owned(),
            cwd: PathBuf::from(cwd),
            source: io::Error::from(kind),
        };
        let here = Path::new("/");
        let missing = spawn("/opt/dsh", io::ErrorKind::NotFound, "/");
        assert!(is_runner_spawn_failure(&missing, "/opt/dsh", here));
        assert!(!is_runner_spawn_failure(&missing, "bash", here));
        assert!(!is_runner_spawn_failure(
            &missing,
            "/opt/dsh",
            Path::new("/nonexistent")
        ));
        let denied = spawn("/opt/dsh", io::ErrorKind::PermissionDenied, "/");
        assert!(is_runner_spawn_failure(&denied, "/opt/dsh", here));
        let other = spawn("/opt/dsh", io::ErrorKind::InvalidInput, "/");
        assert!(!is_runner_spawn_failure(&other, "/opt/dsh", here));
        assert!(!is_runner_spawn_failure(
            &ShellError::Closed,
            "/opt/dsh",
            here
        ));
    }
}
