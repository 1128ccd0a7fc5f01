//! The text the model reads for a bash call (dsh's `render.ts`): stdout, a marked stderr
//! section, then the status markers, each on its own line.

use dsh_shell::{
    CollectedOutput, ESCALATION_HINT_MARKER, SandboxMode, ShellProcessRead, ShellRunResult,
    ShellSandboxInfo,
};

/// A stream's text with the truncation notice (and the full output's path).
fn stream_text(stream: &CollectedOutput) -> String {
    if !stream.truncated {
        return stream.text.clone();
    }
    let path = stream.spill_path.as_ref().map_or_else(
        || "(unavailable)".to_owned(),
        |path| path.display().to_string(),
    );
    format!("{}\n[output truncated; full output: {path}]", stream.text)
}

/// The sandbox denial marker (and the escalation hint when escalation is offered).
fn denial_markers(sandbox: &ShellSandboxInfo, escalation: bool, markers: &mut Vec<String>) {
    let mode = SandboxMode::parse(&sandbox.mode);
    markers.push(mode.map_or_else(
        || format!("[sandbox: file access denied under {} mode]", sandbox.mode),
        dsh_shell::sandbox_denial_marker,
    ));
    if escalation {
        markers.push(ESCALATION_HINT_MARKER.to_owned());
    }
}

/// The text of a finished foreground call. A nonzero exit is reported, not an error;
/// `escalation` adds the escalation hint after a denial marker.
pub fn render_result(value: &ShellRunResult, escalation: bool) -> String {
    let mut body = stream_text(&value.stdout);
    let err = stream_text(&value.stderr);
    if !err.is_empty() {
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        body.push_str("[stderr]\n");
        body.push_str(&err);
    }
    if body.is_empty() {
        body.push_str("(no output)");
    }
    let mut markers = Vec::new();
    if let Some(sandbox) = value.sandbox.as_ref().filter(|sandbox| sandbox.denied) {
        denial_markers(sandbox, escalation, &mut markers);
    }
    if value.timed_out {
        markers.push(format!("[timed out after {}ms]", value.timeout_ms));
    }
    match (&value.signal, value.exit_code) {
        (Some(signal), _) => markers.push(format!("[killed by signal: {signal}]")),
        (None, Some(code)) if code != 0 => markers.push(format!("[exit code: {code}]")),
        (None, None) => markers.push("[exit code: null]".to_owned()),
        (None, Some(_)) => {}
    }
    if markers.is_empty() {
        return body;
    }
    if !body.ends_with('\n') {
        body.push('\n');
    }
    body + &markers.join("\n")
}

/// The text of one background read: the delta, then a notice when output was lost or the
/// sandbox intervened.
pub fn render_process_read(
    read: &ShellProcessRead,
    sandbox: Option<&ShellSandboxInfo>,
    escalation: bool,
) -> String {
    let mut notices = Vec::new();
    if read.lossy {
        let paths: Vec<String> = [&read.stdout_spill_path, &read.stderr_spill_path]
            .into_iter()
            .flatten()
            .map(|path| path.display().to_string())
            .collect();
        let paths = if paths.is_empty() {
            "(unavailable)".to_owned()
        } else {
            paths.join(", ")
        };
        notices.push(format!(
            "[some output was dropped from memory; full output: {paths}]"
        ));
    }
    if let Some(sandbox) = sandbox {
        if sandbox.runner_failed == Some(true) {
            notices.push(format!(
                "[sandbox: the sandbox runner itself failed under {} mode — the command did not \
                 run; this is a sandbox problem, not a command failure]",
                sandbox.mode
            ));
        } else if sandbox.denied {
            denial_markers(sandbox, escalation, &mut notices);
        }
    }
    if notices.is_empty() {
        return read.delta.clone();
    }
    let separator = if !read.delta.is_empty() && !read.delta.ends_with('\n') {
        "\n"
    } else {
        ""
    };
    format!("{}{separator}{}", read.delta, notices.join("\n"))
}

/// The exit status a rendered result ends with, and the text before its marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitStatus {
    /// The text without the exit marker.
    pub body: String,
    /// The exit code (0 when no marker).
    pub exit_code: Option<i64>,
    /// The signal, when a `[killed by signal: X]` marker ends the text.
    pub signal: Option<String>,
}

/// Reverses the final `[killed by signal: X]` or `[exit code: N]` marker (dsh's
/// `parseExitStatus`); no marker means a clean exit.
pub fn parse_exit_status(text: &str) -> ExitStatus {
    if let Some((body, signal)) = final_marker(text, "\n[killed by signal: ")
        .filter(|(_, inner)| !inner.is_empty() && !inner.contains(']'))
    {
        return ExitStatus {
            body: body.to_owned(),
            exit_code: None,
            signal: Some(signal.to_owned()),
        };
    }
    if let Some((body, code)) = final_marker(text, "\n[exit code: ")
        .filter(|(_, inner)| !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|(body, inner)| inner.parse().ok().map(|code| (body, code)))
    {
        return ExitStatus {
            body: body.to_owned(),
            exit_code: Some(code),
            signal: None,
        };
    }
    ExitStatus {
        body: text.to_owned(),
        exit_code: Some(0),
        signal: None,
    }
}

/// `(body, inner)` when `text` ends with `<prefix><inner>]` on its last line.
fn final_marker<'t>(text: &'t str, prefix: &str) -> Option<(&'t str, &'t str)> {
    let inner_and_close = text.strip_suffix(']')?;
    let start = inner_and_close.rfind(prefix)?;
    let inner = inner_and_close.get(start + prefix.len()..)?;
    if inner.contains('\n') {
        return None;
    }
    Some((text.get(..start)?, inner))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_result_plain(value: &ShellRunResult) -> String {
        render_result(value, false)
    }

    fn stream(text: &str) -> CollectedOutput {
        CollectedOutput {
            text: text.to_owned(),
            truncated: false,
            spill_path: None,
        }
    }

    fn value(stdout: &str, stderr: &str, exit_code: Option<i32>) -> ShellRunResult {
        ShellRunResult {
            exit_code,
            signal: None,
            timed_out: false,
            aborted: false,
            timeout_ms: 120_000,
            stdout: stream(stdout),
            stderr: stream(stderr),
            sandbox: None,
        }
    }

    #[test]
    fn stdout_stderr_and_the_exit_marker_render_as_dsh_renders_them() {
        assert_eq!(
            render_result_plain(&value("hi\n", "oops\n", Some(3))),
            "hi\n[stderr]\noops\n[exit code: 3]"
        );
        assert_eq!(render_result_plain(&value("hi", "", Some(0))), "hi");
        assert_eq!(
            render_result_plain(&value("hi", "e", Some(0))),
            "hi\n[stderr]\ne"
        );
        assert_eq!(render_result_plain(&value("", "", Some(0))), "(no output)");
        assert_eq!(
            render_result_plain(&value("", "", Some(1))),
            "(no output)\n[exit code: 1]"
        );
    }

    #[test]
    fn timeouts_signals_truncation_and_denials_are_marked() {
        let mut timed_out = value("partial", "", None);
        timed_out.timed_out = true;
        timed_out.timeout_ms = 500;
        timed_out.signal = Some("SIGTERM".into());
        assert_eq!(
            render_result_plain(&timed_out),
            "partial\n[timed out after 500ms]\n[killed by signal: SIGTERM]"
        );
        let mut truncated = value("tail", "", Some(0));
        truncated.stdout.truncated = true;
        truncated.stdout.spill_path = Some("/tmp/x/out.log".into());
        assert_eq!(
            render_result_plain(&truncated),
            "tail\n[output truncated; full output: /tmp/x/out.log]"
        );
        truncated.stdout.spill_path = None;
        assert_eq!(
            render_result_plain(&truncated),
            "tail\n[output truncated; full output: (unavailable)]"
        );
        let mut denied = value("", "touch: Permission denied\n", Some(1));
        denied.sandbox = Some(ShellSandboxInfo {
            mode: "workspace-write".into(),
            denied: true,
            enforcement: None,
            runner_failed: None,
        });
        assert_eq!(
            render_result_plain(&denied),
            "[stderr]\ntouch: Permission denied\n[sandbox: file access denied under \
             workspace-write mode]\n[exit code: 1]"
        );
        assert!(render_result(&denied, true).ends_with(&format!(
            "workspace-write mode]\n{ESCALATION_HINT_MARKER}\n[exit code: 1]"
        )));
    }

    #[test]
    fn the_exit_marker_parses_back() {
        let parsed = parse_exit_status("hi\n[stderr]\noops\n[exit code: 3]");
        assert_eq!(
            (parsed.body.as_str(), parsed.exit_code),
            ("hi\n[stderr]\noops", Some(3))
        );
        let parsed = parse_exit_status("x\n[killed by signal: SIGKILL]");
        assert_eq!(parsed.signal.as_deref(), Some("SIGKILL"));
        assert_eq!(
            parse_exit_status("[exit code: 3]").exit_code,
            Some(0),
            "needs a newline"
        );
        assert_eq!(parse_exit_status("ok").body, "ok");
    }

    #[test]
    fn background_reads_carry_their_notices() {
        let read = ShellProcessRead {
            delta: "line".into(),
            lossy: true,
            stdout_spill_path: Some("/s/out".into()),
            stderr_spill_path: None,
        };
        assert_eq!(
            render_process_read(&read, None, false),
            "line\n[some output was dropped from memory; full output: /s/out]"
        );
        let quiet = ShellProcessRead {
            delta: String::new(),
            lossy: false,
            stdout_spill_path: None,
            stderr_spill_path: None,
        };
        assert_eq!(render_process_read(&quiet, None, false), "");
    }
}
