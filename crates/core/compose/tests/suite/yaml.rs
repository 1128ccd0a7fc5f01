//! The YAML dialect: `!!js` survives, errors name their line, and the emitter round-trips.

use dsh_compose::node::Map;
use dsh_compose::node::Node;
use dsh_compose::yaml::parse_document;
use dsh_compose::yaml::to_yaml;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

#[test]
fn a_js_tag_survives_parse_and_print() {
    let text =
        "- id: session-persistence-jsonl\n  config:\n    root: !!js dshHomePath('sessions')\n";
    let tree = parse_document(text).unwrap().unwrap();
    let Node::Seq(rows) = &tree else {
        panic!("not a sequence")
    };
    let config = rows[0]
        .as_map()
        .unwrap()
        .get("config")
        .unwrap()
        .as_map()
        .unwrap();
    assert_eq!(
        config.get("root"),
        Some(&Node::Expr("dshHomePath('sessions')".into()))
    );
    assert_eq!(to_yaml(&tree), text);
}

#[test]
fn scalars_resolve_under_the_json_schema() {
    let text = "[null, ~, true, False, 3, -4, 1.0, 0.5, 0x1F, 0o17, '3', \"x\", !!str 7, yes, 1e3]";
    let Some(Node::Seq(items)) = parse_document(text).unwrap() else {
        panic!()
    };
    let expected = [
        Node::Null,
        Node::Null,
        Node::Bool(true),
        Node::Bool(false),
        Node::Number(3.into()),
        Node::Number((-4).into()),
        Node::Number(1.into()),
        Node::Number(serde_json::Number::from_f64(0.5).unwrap()),
        Node::Number(31.into()),
        Node::Number(15.into()),
        Node::String("3".into()),
        Node::String("x".into()),
        Node::String("7".into()),
        Node::String("yes".into()),
        Node::Number(1000.into()),
    ];
    assert_eq!(items, expected);
}

#[test]
fn numbers_and_keys_read_as_js_yaml_reads_them() {
    let text = "[1_000, 0b101, 0x_ff, 012, -.5, .5, +1, 1_000.5, 0o7_7]";
    let Some(Node::Seq(items)) = parse_document(text).unwrap() else {
        panic!()
    };
    let number = |value: f64| Node::Number(serde_json::Number::from_f64(value).unwrap());
    assert_eq!(
        items,
        [
            Node::Number(1000.into()),
            Node::Number(5.into()),
            Node::Number(255.into()),
            Node::Number(12.into()),
            Node::String("-.5".into()),
            number(0.5),
            Node::Number(1.into()),
            number(1000.5),
            Node::Number(63.into()),
        ]
    );
    let Some(Node::Map(map)) =
        parse_document("{~: a, 0x10: b, 1.0: c, true: d, '1.0': e}").unwrap()
    else {
        panic!()
    };
    let keys: Vec<&str> = map.iter().map(|(key, _)| key).collect();
    assert_eq!(keys, ["null", "16", "1", "true", "1.0"]);
}

#[test]
fn bad_documents_are_reported_with_their_line() {
    let cases = [
        ("- a\n- b: [\n", "line 3"),
        ("a: 1\na: 2\n", "duplicated mapping key \"a\""),
        ("- !!binary abc\n", "unknown tag !!binary"),
        ("- .inf\n", "not a finite number"),
        ("- 1e400\n", "not a finite number"),
        ("--- []\n--- []\n", "expected a single document"),
    ];
    for (text, expected) in cases {
        let error = parse_document(text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text:?}: {error}");
    }
    assert_eq!(parse_document("# only a comment\n").unwrap(), None);
}

#[test]
fn deep_nesting_and_alias_bombs_are_refused() {
    let deep = format!("{}x", "- ".repeat(1_000));
    let error = parse_document(&deep).unwrap_err().to_string();
    assert!(error.contains("nest deeper than 128 levels"), "{error}");
    // Deep flow collections stop in the parser's own recursion limit.
    let flow = format!("{}x{}", "[".repeat(1_000), "]".repeat(1_000));
    assert!(parse_document(&flow).is_err());
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..10 {
        let previous = format!("*a{}", level - 1);
        bomb.push_str(&format!(
            "a{level}: &a{level} [{}]\n",
            vec![previous; 10].join(", ")
        ));
    }
    let error = parse_document(&bomb).unwrap_err().to_string();
    assert!(
        error.contains("aliases expand to more than 100000 values"),
        "{error}"
    );
}

#[test]
fn anchors_and_aliases_copy_the_anchored_value() {
    let text = "- &base {id: a, name: p}\n- *base\n";
    let Some(Node::Seq(items)) = parse_document(text).unwrap() else {
        panic!()
    };
    assert_eq!(items[0], items[1]);
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9 :#'\"\\\\.@!|>{}\\[\\],?*&%`~=_+-]{0,24}",
        "[a-z \\n\\t#:-]{0,40}",
        "[a-zé Ω\u{85}\u{2028}\u{feff}\r\u{1}\u{7f}]{0,12}",
        "[a-z ]{60,200}",
        Just("true".to_owned()),
        Just("0x10".to_owned()),
        Just("1_000".to_owned()),
        Just("0b101".to_owned()),
        Just("-.5".to_owned()),
        Just(".5".to_owned()),
        Just("1e3".to_owned()),
        Just("012".to_owned()),
        Just(" leading".to_owned()),
        Just("\n\n".to_owned()),
        Just("  \nx".to_owned()),
    ]
}

fn leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        Just(Node::Null),
        any::<bool>().prop_map(Node::Bool),
        (-9_007_199_254_740_991_i64..9_007_199_254_740_991).prop_map(|n| Node::Number(n.into())),
        (-1e12_f64..1e12).prop_filter_map("integral", |f| {
            (f.fract() != 0.0).then(|| Node::Number(serde_json::Number::from_f64(f).unwrap()))
        }),
        text().prop_map(Node::String),
        text().prop_map(Node::Expr),
    ]
}

/// Mapping keys: short ones with YAML-significant characters (not ones that read as
/// another value, which JavaScript would turn into a different string), and rare long ones.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        9 => "[a-z:# '-]{0,8}",
        1 => "[a-z ]{1000,1100}",
    ]
}

fn node() -> impl Strategy<Value = Node> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Node::Seq),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|pairs| { Node::Map(pairs.into_iter().collect::<Map>()) }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn printed_trees_read_back_unchanged(tree in node()) {
        let text = to_yaml(&tree);
        let back = parse_document(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, Some(tree), "printed as:\n{}", text);
    }
}
