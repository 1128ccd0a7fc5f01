//! The header: dsh's key order, and the refusals.

use dsh_session::SessionHeader;

#[test]
fn headers_print_in_dsh_key_order() {
    let mut header = SessionHeader::new("s1", 5).with_cwd("/srv");
    header.delegation_depth = Some(0);
    header.parent_session = Some("p".into());
    assert_eq!(
        header.to_json_string(),
        r#"{"version":0,"id":"s1","createdAt":5,"cwd":"/srv","parentSession":"p","delegationDepth":0}"#
    );
}

#[test]
fn relative_cwd_and_foreign_id_are_refused() {
    let header = SessionHeader::new("s1", 5).with_cwd("srv");
    assert!(
        header
            .validate("s1")
            .unwrap_err()
            .reason
            .contains("absolute")
    );
    assert!(SessionHeader::new("s2", 5).validate("s1").is_err());
    assert!(SessionHeader::new("s1", 5).validate("s1").is_ok());
}
