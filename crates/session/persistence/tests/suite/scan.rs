//! The line scanner: committed lines, torn tails and corruption told apart, whatever the
//! chunking.

use dsh_persistence::log_file::scan::{LogScanner, ScanOutcome};

const TURN: &str = concat!(
    r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
    "\n",
    r#"{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
    "\n"
);

fn scan(text: &str) -> Result<ScanOutcome, String> {
    let mut scanner = LogScanner::new(0);
    scanner.write(text.as_bytes())?;
    Ok(scanner.finish())
}

#[test]
fn complete_lines_are_committed_and_a_fragment_is_torn() {
    let outcome = scan(&format!("{TURN}{{\"type\":\"tu")).unwrap();
    assert_eq!(outcome.events.len(), 2);
    assert_eq!(outcome.committed_bytes, TURN.len());
}

#[test]
fn chunking_does_not_change_the_result() {
    let text = format!("{TURN}{{\"type\":\"x\"");
    for split in 0..text.len() {
        let mut scanner = LogScanner::new(0);
        scanner.write(&text.as_bytes()[..split]).unwrap();
        scanner.write(&text.as_bytes()[split..]).unwrap();
        let outcome = scanner.finish();
        assert_eq!(
            (outcome.events.len(), outcome.committed_bytes),
            (2, TURN.len())
        );
    }
}

#[test]
fn a_bad_line_before_a_turn_end_is_corruption() {
    let text = format!(
        "{}\nnot json\n{}\n",
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}"#
    );
    assert_eq!(
        scan(&text).unwrap_err(),
        "corrupt session log: unparsable committed event at line 2"
    );
}

#[test]
fn a_bad_line_without_a_later_turn_end_is_a_torn_tail() {
    let text = format!(
        "{TURN}not json\n{}\n",
        r#"{"type":"turn/start","seq":2,"time":1,"data":{"turn":2}}"#
    );
    let outcome = scan(&text).unwrap();
    assert_eq!(
        (outcome.events.len(), outcome.committed_bytes),
        (2, TURN.len())
    );
}

#[test]
fn a_readable_turn_end_with_a_bad_envelope_after_damage_is_corruption() {
    let text = format!(
        "{}\nnot json\n{}\n",
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"turn/end","seq":2,"time":1.5,"data":{"turn":1,"reason":{"kind":"completed"}}}"#
    );
    assert_eq!(
        scan(&text).unwrap_err(),
        "corrupt session log: unparsable committed event at line 2"
    );
}

#[test]
fn a_seq_gap_before_a_turn_end_is_corruption() {
    let text = format!(
        "{}\n{}\n",
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}"#
    );
    assert!(
        scan(&text)
            .unwrap_err()
            .contains("seq gap in committed region at line 2 (expected 1, got 2)")
    );
}
