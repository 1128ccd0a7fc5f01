//! Composition across layers: provenance, the dump, and its invariants.

use dsh_compose::compose;
use dsh_compose::node::Node;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::support::BASE;
use super::support::layer;

#[test]
fn provenance_names_the_inserting_layer_and_each_layer_that_changed_the_row() {
    let composition = compose(&[
        layer("dsh-base", BASE),
        layer("dsh-headless", "- id: tools\n  config: {mode: native}\n"),
        // Restating what is already there changes nothing, so it does not count.
        layer(
            "/home/me/.dsh/cordis.patch.yml",
            "- id: tools\n  config: {mode: native}\n- id: session\n  disabled: false\n",
        ),
        layer(
            "/work/extra.yml",
            "- insert:\n    - {id: extra, name: dsh-extra}\n",
        ),
    ])
    .unwrap();
    let labels: Vec<(String, Vec<String>)> = composition
        .provenance()
        .iter()
        .map(|p| (p.origin.clone(), p.patched_by.clone()))
        .collect();
    assert_eq!(
        labels,
        [
            (
                "dsh-base".to_owned(),
                vec!["/home/me/.dsh/cordis.patch.yml".to_owned()]
            ),
            ("dsh-base".to_owned(), vec![]),
            ("dsh-base".to_owned(), vec!["dsh-headless".to_owned()]),
            ("dsh-base".to_owned(), vec![]),
            ("/work/extra.yml".to_owned(), vec![]),
        ]
    );
}

#[test]
fn the_dump_groups_runs_of_rows_under_provenance_headers() {
    let composition = compose(&[
        layer("dsh-base", BASE),
        layer(
            "/work/extra.yml",
            "- id: tools\n  disabled: true\n- insert:\n    - {id: extra, name: dsh-extra}\n",
        ),
    ])
    .unwrap();
    assert_eq!(
        composition.render_dump(),
        "\
# == dsh-base
- id: session
  name: dsh-session
- id: session-persistence-jsonl
  name: dsh-persistence-jsonl
  config:
    root: !!js dshHomePath('sessions')
# == dsh-base, patched by /work/extra.yml
- id: tools
  name: dsh-tools
  disabled: true
# == dsh-base
- id: agent-loop
  name: dsh-agent-loop
  config:
    agents: []
# == /work/extra.yml
- id: extra
  name: dsh-extra
"
    );
}

#[test]
fn an_expression_survives_parse_patch_and_dump_unchanged() {
    let composition = compose(&[
        layer("dsh-base", BASE),
        layer(
            "user",
            "- id: tools\n  config:\n    mode: !!js process.env.DSH_TOOLS_MODE ?? 'native'\n",
        ),
    ])
    .unwrap();
    let dump = composition.render_dump();
    assert!(
        dump.contains("    root: !!js dshHomePath('sessions')\n"),
        "{dump}"
    );
    assert!(
        dump.contains("    mode: !!js process.env.DSH_TOOLS_MODE ?? 'native'\n"),
        "{dump}"
    );
    let reread = dsh_compose::yaml::parse_document(&dump).unwrap().unwrap();
    assert_eq!(reread, Node::Seq(composition.rows().to_vec()));
}

#[test]
fn an_empty_composition_dumps_as_an_empty_list() {
    assert_eq!(compose(&[]).unwrap().render_dump(), "[]\n");
}

fn row_id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("session"),
        Just("tools"),
        Just("agent-loop"),
        Just("extra"),
        Just("ghost")
    ]
    .prop_map(str::to_owned)
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("true".to_owned()),
        Just("{a: 1}".to_owned()),
        Just("[x, y]".to_owned()),
        Just("!!js process.cwd()".to_owned()),
        "[a-z]{1,6}",
    ]
}

/// A random patch entry in YAML.
fn entry() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            row_id(),
            prop_oneof![Just("config"), Just("disabled"), Just("inject")],
            value()
        )
            .prop_map(|(id, key, value)| format!("- id: {id}\n  {key}: {value}\n")),
        (row_id(), "[a-z]{1,5}")
            .prop_map(|(id, name)| format!("- id: {id}\n  name: {name}\n  disabled: true\n")),
        "[a-z]{1,5}".prop_map(|id| format!("- insert:\n    - {{id: new-{id}, name: p}}\n")),
    ]
}

fn layers() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop::collection::vec(entry(), 0..6).prop_map(|entries| entries.concat()),
        0..4,
    )
}

fn build(texts: &[String]) -> Vec<dsh_compose::Layer> {
    std::iter::once(layer("dsh-base", BASE))
        .chain(texts.iter().enumerate().map(|(index, text)| {
            let text = if text.is_empty() { "[]" } else { text };
            layer(&format!("layer-{index}"), text)
        }))
        .collect()
}

proptest! {
    #[test]
    fn composing_the_same_layers_twice_gives_the_same_tree(texts in layers()) {
        let layers = build(&texts);
        let first = compose(&layers);
        let second = compose(&layers);
        prop_assert_eq!(first, second);
    }

    #[test]
    fn a_patch_naming_no_row_leaves_the_tree_unchanged(texts in layers(), key in "[a-z]{1,8}".prop_filter("a plain key", |key| !matches!(key.as_str(), "id" | "insert" | "name"))) {
        let layers = build(&texts);
        let Ok(before) = compose(&layers) else { return Ok(()) };
        let mut with_ghost = layers;
        with_ghost.push(layer("ghost", &format!("- id: no-row-has-this-id\n  {key}: 1\n")));
        let after = compose(&with_ghost).unwrap();
        prop_assert_eq!(after.rows(), before.rows());
        prop_assert_eq!(after.provenance(), before.provenance());
        prop_assert_eq!(
            after.warnings().last().map(|w| w.message.clone()),
            Some("patch: entry \"no-row-has-this-id\" not found".to_owned())
        );
    }
}
