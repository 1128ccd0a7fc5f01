//! The JSONL header line: written in dsh's key order, refused with dsh's messages.

use dsh_persistence::log_file::header_line::{
    HeaderProblem, header_line, parse_header_line, parse_header_record,
};
use dsh_session::SessionHeader;

#[test]
fn header_lines_are_written_in_dsh_order() {
    let mut header = SessionHeader::new("s", 7).with_cwd("/w");
    header.seed_length = Some(3);
    header.agent_preset = Some("p".into());
    assert_eq!(
        header_line(&header),
        r#"{"type":"session","version":0,"id":"s","createdAt":7,"cwd":"/w","seedLength":3,"delegationDepth":0,"agentPreset":"p"}"#
    );
    let parsed = parse_header_record(format!("{}\n", header_line(&header)).as_bytes()).unwrap();
    assert_eq!(header_line(&parsed), header_line(&header));
}

#[test]
fn a_newer_version_asks_for_an_upgrade_before_any_shape_check() {
    let problem = parse_header_line(br#"{"version":1,"id":"s"}"#).unwrap_err();
    assert_eq!(
        problem.message(),
        "session \"s\" uses log format v1, but this harness reads only v0: the log was \
         written by a newer harness — upgrade the harness to open it"
    );
    let older = parse_header_line(br#"{"version":-1,"id":"s"}"#).unwrap_err();
    assert!(older.message().contains("older than the supported v0"));
}

#[test]
fn malformed_headers_are_refused() {
    for line in [
        &br#"{"type":"session","version":0,"id":"s","createdAt":-1,"delegationDepth":0}"#[..],
        br#"{"type":"session","version":0,"id":"s","createdAt":1}"#,
        br#"{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"origin":"x"}"#,
        br#"{"type":"other","version":0,"id":"s","createdAt":1,"delegationDepth":0}"#,
    ] {
        assert!(matches!(parse_header_line(line), Err(HeaderProblem::NotHeader(_))));
    }
    let retired = br#"{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"sandboxMode":"x"}"#;
    assert_eq!(parse_header_line(retired), Err(HeaderProblem::Retired));
    assert_eq!(parse_header_record(b"{}"), Err(HeaderProblem::Missing));
    assert_eq!(
        parse_header_record(b"{}\n{}\n"),
        Err(HeaderProblem::Missing)
    );
}
