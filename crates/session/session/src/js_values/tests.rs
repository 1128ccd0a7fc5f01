//! JavaScript's string forms and strict equality of parsed values.

use serde_json::json;

use super::*;

#[test]
fn javascript_strings_of_values() {
    assert_eq!(js_template(None), "undefined");
    assert_eq!(js_template(Some(&json!(null))), "null");
    assert_eq!(js_template(Some(&json!(1.5))), "1.5");
    assert_eq!(js_template(Some(&json!(2.0))), "2");
    assert_eq!(
        js_template(Some(&json!([1, null, [2, "a"], {}]))),
        "1,,2,a,[object Object]"
    );
    assert_eq!(js_number(7), "7");
    assert!(js_strict_eq(Some(&json!(1)), Some(&json!(1.0))));
    assert!(!js_strict_eq(Some(&json!({})), Some(&json!({}))));
    assert!(!js_strict_eq(None, Some(&json!(null))));
}
