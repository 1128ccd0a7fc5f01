//! `DSH_LOG`: a headless turn under `DSH_LOG=dsh=debug` prints its spans as a tree on stderr
//! (each opens and closes), and without `DSH_LOG` none of them shows.

use super::support::{Run, Sandbox, repo_root};

/// `dsh --profile headless --patch profiles/examples/replay.patch.yml "hi"` from the
/// repository root, with `DSH_LOG` set to `log` (or unset).
fn replayed_turn(log: Option<&str>) -> Run {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(&[
        "--profile",
        "headless",
        "--patch",
        "profiles/examples/replay.patch.yml",
        "hi",
    ]);
    command
        .current_dir(repo_root())
        .env_remove("DEEPSEEK_API_KEY")
        .env("DEEPSEEK_BASE_URL", "http://127.0.0.1:9");
    if let Some(log) = log {
        command.env("DSH_LOG", log);
    }
    let run = Run::from(command.output().unwrap());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run
}

/// The innermost span and the message of a span event line
/// (`<time> DEBUG outer{..}:inner{..}: <target>: new`).
fn span_event(line: &str) -> Option<(&str, &str)> {
    let end = line.find("}: ")?;
    let chain = &line[..end];
    let open = chain.rfind('{')?;
    let start = chain[..open].rfind([':', ' ']).map_or(0, |at| at + 1);
    let (_, message) = line[end + 3..].split_once(": ")?;
    Some((&chain[start..open], message))
}

/// The stderr lines where a span named `name` opens (`new`) or closes (`close`).
fn span_lines<'a>(stderr: &'a str, name: &str, event: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|line| {
            span_event(line).is_some_and(|(span, message)| {
                span == name && message.split(' ').next() == Some(event)
            })
        })
        .collect()
}

#[test]
fn dsh_debug_prints_the_spans_of_a_headless_turn() {
    let run = replayed_turn(Some("dsh=debug"));
    let stderr = run.stderr.as_str();
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour codes when stderr is not a terminal:\n{stderr}"
    );
    for name in ["boot", "turn", "step", "request", "tool_call", "flush"] {
        assert!(
            !span_lines(stderr, name, "new").is_empty(),
            "no {name} span opens:\n{stderr}"
        );
        assert!(
            !span_lines(stderr, name, "close").is_empty(),
            "no {name} span closes:\n{stderr}"
        );
    }
    // The tree: the tool call nests in its step, the step in its turn, each naming the session.
    let call = span_lines(stderr, "tool_call", "close")[0];
    assert!(
        call.contains("turn{session_id=session-") && call.contains("}:step{session_id=session-"),
        "{call}"
    );
    assert!(call.contains("call_id=call_demo_1 tool=bash}"), "{call}");
    let request = span_lines(stderr, "request", "new")[0];
    assert!(request.contains("attempt=1}"), "{request}");
    let closed = span_lines(stderr, "turn", "close")[0];
    assert!(closed.contains(" time.busy="), "{closed}");
}

#[test]
fn without_dsh_log_no_span_is_printed() {
    let run = replayed_turn(None);
    for name in ["boot", "turn", "step", "request", "tool_call", "flush"] {
        assert!(
            !run.stderr.contains(&format!("{name}{{")),
            "{name}: {}",
            run.stderr
        );
    }
}
