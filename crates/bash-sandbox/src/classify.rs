//! How a confined outcome is read: denials, runner failures and runner spawn failures (dsh's
//! `bash-sandbox/src/helpers.ts`).

use std::io::ErrorKind;
use std::path::Path;

use dsh_shell::ShellError;
use nix::unistd::{AccessFlags, access};

use crate::backend::RunnerFailureRule;

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

/// The first stderr line proving that the runner failed (so the command never ran): the
/// exit is nonzero and allowed by the rule, and the line is not informational and contains
/// a fatal signature (both case-insensitive). `None` when the evidence is insufficient.
pub fn classify_runner_failure(
    exit_code: Option<i32>,
    stderr: &str,
    rule: &RunnerFailureRule,
) -> Option<String> {
    let code = exit_code.filter(|code| *code != 0)?;
    if !rule.allowed_exit_codes.is_empty() && !rule.allowed_exit_codes.contains(&code) {
        return None;
    }
    let informational: Vec<String> = rule
        .informational_lines
        .iter()
        .map(|line| line.to_lowercase())
        .collect();
    let fatal: Vec<String> = rule
        .fatal_signatures
        .iter()
        .filter(|signature| !signature.trim().is_empty())
        .map(|signature| signature.to_lowercase())
        .collect();
    stderr
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .find(|line| {
            let lowered = line.to_lowercase();
            !informational.contains(&lowered)
                && fatal.iter().any(|signature| lowered.contains(signature))
        })
        .map(str::to_owned)
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
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io;
    use std::path::PathBuf;

    use super::*;
    use crate::backend::{Backend, Enforcement};

    const LANDLOCK: Backend = Backend::Landlock {
        enforcement: Enforcement::Partial,
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
    fn runner_failures_follow_dshs_rules() {
        let rule = LANDLOCK.runner_failure_rule();
        let partial = "landlock-run: partial enforcement (older Landlock ABI)";
        // The informational line alone is no failure, whatever the exit.
        assert_eq!(
            classify_runner_failure(Some(125), &format!("{partial}\n"), &rule),
            None
        );
        // A child's EACCES after the notice is a denial, not a runner failure.
        let child = format!("{partial}\nbash: /etc/x: Permission denied\n");
        assert_eq!(classify_runner_failure(Some(1), &child, &rule), None);
        // Exit 125 plus a fatal line is; the fatal line is the detail.
        let fatal = format!("{partial}\r\nlandlock-run: cannot open rule path: /w: gone\n");
        assert_eq!(
            classify_runner_failure(Some(125), &fatal, &rule).as_deref(),
            Some("landlock-run: cannot open rule path: /w: gone")
        );
        // The exit gate: the same line under another exit is the command's own output.
        assert_eq!(classify_runner_failure(Some(1), &fatal, &rule), None);
        assert_eq!(classify_runner_failure(None, &fatal, &rule), None);
        assert_eq!(classify_runner_failure(Some(0), &fatal, &rule), None);
        // bwrap has no exit gate.
        let bwrap = Backend::Bwrap.runner_failure_rule();
        assert_eq!(
            classify_runner_failure(Some(1), "BWRAP: setting up uid map: x", &bwrap).as_deref(),
            Some("BWRAP: setting up uid map: x")
        );
    }

    #[test]
    fn blank_fatal_signatures_are_ignored() {
        let rule = RunnerFailureRule {
            allowed_exit_codes: &[],
            fatal_signatures: &[" ", "runner: "],
            informational_lines: &[],
        };
        assert_eq!(classify_runner_failure(Some(1), "anything\n", &rule), None);
        assert!(classify_runner_failure(Some(1), "runner: boom", &rule).is_some());
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
