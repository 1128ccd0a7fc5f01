//! `read`: windows, footers, refusals.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Disk, code, harness, s, text};

#[tokio::test]
async fn a_window_reads_as_dsh_renders_it() {
    let h = harness(Disk::Local).await;
    let lines = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let body: String = lines.iter().map(|line| format!("line {line}\n")).collect();
    std::fs::write(h.path("big.txt"), body).unwrap();
    let result = h
        .session_call(
            "read",
            json!({"file_path": "big.txt", "offset": 5, "limit": 4}),
        )
        .await;
    let shown = s(&h.path("big.txt"));
    assert_eq!(
        text(&result),
        format!(
            "<path>{shown}</path>\n<type>file</type>\n<content>\n5: line five\n6: line six\n7: line seven\n8: line eight\n\n(Showing lines 5-8 of 10. Use offset=9 to continue.)\n</content>"
        )
    );
    assert_eq!(
        result.meta,
        Some(json!({"path": shown, "offset": 5, "lines": [
            {"number": 5, "text": "line five"}, {"number": 6, "text": "line six"},
            {"number": 7, "text": "line seven"}, {"number": 8, "text": "line eight"}],
            "totalLines": 10}))
    );
    let whole = h.session_call("read", json!({"file_path": shown})).await;
    assert!(text(&whole).ends_with("10: line ten\n\n(End of file - total 10 lines)\n</content>"));
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn refusals_name_the_file_and_the_reason() {
    let h = harness(Disk::Local).await;
    std::fs::write(h.path("blob.bin"), b"PNG\0\x01\x02").unwrap();
    std::fs::write(h.path("latin1.txt"), b"caf\xe9\n").unwrap();
    std::fs::create_dir(h.path("dir")).unwrap();
    let cases = [
        ("blob.bin", "binary file", "FS_NOT_TEXT"),
        ("latin1.txt", "invalid UTF-8 text", "FS_NOT_TEXT"),
        ("missing.txt", "not found", "FS_NOT_FOUND"),
        ("dir", "not a regular file", "FS_NOT_REGULAR_FILE"),
    ];
    for (name, reason, expected) in cases {
        let result = h.session_call("read", json!({"file_path": name})).await;
        assert!(result.is_error, "{name}");
        assert_eq!(
            text(&result),
            format!("Error: cannot read \"{}\": {reason}", s(&h.path(name)))
        );
        assert_eq!(code(&result).as_deref(), Some(expected), "{name}");
    }
    let nul = h
        .session_call("read", json!({"file_path": "a\u{0}b"}))
        .await;
    assert!(nul.is_error);
    assert!(text(&nul).contains("NUL"), "{}", text(&nul));
    let past = h
        .session_call("read", json!({"file_path": "latin1.txt", "offset": 0}))
        .await;
    assert_eq!(text(&past), "Error: offset must be a positive integer");
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn a_large_file_streams_with_an_exact_count() {
    let h = harness(Disk::Local).await;
    let mut body = String::with_capacity(11 << 20);
    let mut n = 0;
    while body.len() < 10 << 20 {
        n += 1;
        body.push_str(&format!(
            "{n:08} the quick brown fox jumps over the lazy dog\n"
        ));
    }
    std::fs::write(h.path("ten.log"), &body).unwrap();
    let result = h
        .session_call(
            "read",
            json!({"file_path": "ten.log", "offset": 150000, "limit": 2}),
        )
        .await;
    let shown = text(&result);
    assert!(shown.contains("150000: 00150000 the quick"), "{shown}");
    assert!(shown.contains(&format!(
        "(Showing lines 150000-150001 of {n}. Use offset=150002 to continue.)"
    )));
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn reads_may_run_in_parallel_and_languages_reach_the_card() {
    let h = harness(Disk::Local).await;
    std::fs::write(h.path("main.rs"), "fn main() {}\n").unwrap();
    let result = h
        .session_call("read", json!({"file_path": "main.rs"}))
        .await;
    assert_eq!(
        result.meta.as_ref().and_then(|meta| meta.get("lang")),
        Some(&json!("rs"))
    );
    assert_eq!(
        h.tools.execution_mode(&dsh_tools::ToolExecutionInput::new(
            "c",
            "read",
            json!({"file_path": "x"}),
            dsh_tools::CancellationToken::new()
        )),
        dsh_tools::ExecutionMode::Parallel
    );
    h.kernel.shutdown().await;
}
