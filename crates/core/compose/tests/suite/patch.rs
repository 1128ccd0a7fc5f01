//! The patch algebra: whole-key replacement by id, inserts, the name guard, and warnings.

use dsh_compose::compose;
use dsh_compose::patch::PatchFileError;
use dsh_compose::patch::PatchFileKind;
use dsh_compose::patch::PatchList;
use pretty_assertions::assert_eq;

use super::support::BASE;
use super::support::layer;
use super::support::yaml;

fn warnings(composition: &dsh_compose::Composition) -> Vec<String> {
    composition
        .warnings()
        .iter()
        .map(|warning| format!("[{}] {}", warning.layer, warning.message))
        .collect()
}

#[test]
fn a_config_patch_replaces_only_that_key_of_that_row() {
    let composition = compose(&[
        layer("base", BASE),
        layer(
            "user",
            "- id: session-persistence-jsonl\n  config:\n    root: /srv/sessions\n",
        ),
    ])
    .unwrap();
    let expected = yaml(
        "
- id: session
  name: dsh-session
- id: session-persistence-jsonl
  name: dsh-persistence-jsonl
  config:
    root: /srv/sessions
- id: tools
  name: dsh-tools
- id: agent-loop
  name: dsh-agent-loop
  config:
    agents: []
",
    );
    assert_eq!(
        dsh_compose::node::Node::Seq(composition.rows().to_vec()),
        expected
    );
    assert!(composition.warnings().is_empty());
}

#[test]
fn config_is_replaced_wholesale_not_merged_and_new_keys_go_last() {
    let composition = compose(&[
        layer(
            "base",
            "- insert:\n    - {id: a, name: p, config: {x: 1, y: 2}}\n",
        ),
        layer("user", "- id: a\n  disabled: true\n  config: {z: 3}\n"),
    ])
    .unwrap();
    assert_eq!(
        composition.rows(),
        &[yaml("{id: a, name: p, config: {z: 3}, disabled: true}")]
    );
}

#[test]
fn inserts_append_at_the_top_level_and_can_be_patched_by_later_entries() {
    let composition = compose(&[
        layer("base", BASE),
        layer(
            "user",
            "
- insert:
    - id: mcp-memory
      name: dsh-mcp-client
      config: {serverName: memory}
- id: mcp-memory
  config: {serverName: remembered}
",
        ),
        layer("later", "- id: mcp-memory\n  disabled: true\n"),
    ])
    .unwrap();
    assert_eq!(
        composition.rows().last().unwrap(),
        &yaml(
            "{id: mcp-memory, name: dsh-mcp-client, config: {serverName: remembered}, disabled: true}"
        )
    );
}

#[test]
fn inserts_into_a_group_land_in_its_config_and_are_indexed() {
    let composition = compose(&[
        layer("base", "- insert:\n    - {id: team, name: 'cordis:group', group: true, config: [{id: a, name: p}]}\n"),
        layer("user", "- id: team\n  insert:\n    - {id: b, name: q}\n- id: b\n  config: {on: yes}\n"),
    ])
    .unwrap();
    assert_eq!(
        composition.rows(),
        &[yaml(
            "{id: team, name: 'cordis:group', group: true, config: [{id: a, name: p}, {id: b, name: q, config: {on: yes}}]}"
        )]
    );
}

#[test]
fn entries_that_match_nothing_warn_and_change_nothing() {
    let base = compose(&[layer("base", BASE)]).unwrap();
    let composition = compose(&[
        layer("base", BASE),
        layer(
            "/home/me/.dsh/cordis.patch.yml",
            "
- id: no-such-row
  disabled: true
- id: tools
  name: dsh-tools-v2
  disabled: true
- config: {orphan: true}
- id: no-such-group
  insert: [{id: x, name: y}]
- id: tools
  insert: [{id: x, name: y}]
",
        ),
    ])
    .unwrap();
    assert_eq!(composition.rows(), base.rows());
    assert_eq!(
        warnings(&composition),
        [
            "[/home/me/.dsh/cordis.patch.yml] patch: entry \"no-such-row\" not found",
            "[/home/me/.dsh/cordis.patch.yml] patch: name mismatch for \"tools\" (expected \"dsh-tools\", got \"dsh-tools-v2\"), skipping",
            "[/home/me/.dsh/cordis.patch.yml] patch: id is required for non-insert patches",
            "[/home/me/.dsh/cordis.patch.yml] patch insert: entry \"no-such-group\" not found",
            "[/home/me/.dsh/cordis.patch.yml] patch insert: entry \"tools\" is not a group",
        ]
    );
}

#[test]
fn a_matching_name_guard_lets_the_patch_apply() {
    let composition = compose(&[
        layer("base", BASE),
        layer(
            "user",
            "- id: tools\n  name: dsh-tools\n  config: {mode: code}\n",
        ),
    ])
    .unwrap();
    assert_eq!(
        composition.rows()[2],
        yaml("{id: tools, name: dsh-tools, config: {mode: code}}")
    );
}

#[test]
fn patching_other_keys_of_a_group_keeps_its_members_targetable() {
    let composition = compose(&[
        layer("base", "- insert:\n    - {id: team, name: 'cordis:group', group: true, config: [{id: member, name: p}]}\n"),
        layer("user", "- id: team\n  group: true\n  disabled: false\n- id: member\n  disabled: true\n"),
    ])
    .unwrap();
    assert_eq!(
        composition.rows(),
        &[yaml(
            "{id: team, name: 'cordis:group', group: true, config: [{id: member, name: p, disabled: true}], disabled: false}"
        )]
    );
    assert!(composition.warnings().is_empty());
}

#[test]
fn rows_brought_in_by_replacing_a_group_config_are_not_targets_in_that_composition() {
    let composition = compose(&[
        layer("base", "- insert:\n    - {id: team, name: 'cordis:group', group: true, config: [{id: old, name: p}]}\n"),
        layer("user", "- id: team\n  config: [{id: new, name: q}]\n- id: new\n  disabled: true\n- id: old\n  disabled: true\n"),
    ])
    .unwrap();
    assert_eq!(
        composition.rows(),
        &[yaml(
            "{id: team, name: 'cordis:group', group: true, config: [{id: new, name: q}]}"
        )]
    );
    assert_eq!(
        warnings(&composition),
        [
            "[user] patch: entry \"new\" not found",
            "[user] patch: entry \"old\" not found"
        ]
    );
}

#[test]
fn duplicate_row_ids_are_an_error_naming_both_layers() {
    let error = compose(&[
        layer("dsh-base", BASE),
        layer(
            "/tmp/extra.yml",
            "- insert:\n    - {id: tools, name: my-tools}\n",
        ),
    ])
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "duplicate row id \"tools\": a row from dsh-base and a row from /tmp/extra.yml share it; \
         give the second row another id, or patch the first one instead"
    );
}

#[test]
fn bad_patch_files_name_the_file_and_the_reason() {
    let parse =
        |text: &str| PatchList::parse(text, "/p/overlay.yml", PatchFileKind::Overlay).unwrap_err();
    assert_eq!(
        parse("id: tools\n").to_string(),
        "overlay /p/overlay.yml must be a top-level YAML array of loader patch entries"
    );
    assert_eq!(
        parse("# nothing yet\n").to_string(),
        "overlay /p/overlay.yml must be a top-level YAML array of loader patch entries \
         (it is empty; write [] for a layer that changes nothing)"
    );
    assert_eq!(
        parse("- id: a\n- just a string\n").to_string(),
        "overlay entry 2 in /p/overlay.yml must be a mapping (a loader patch entry)"
    );
    assert_eq!(
        parse("- insert: {id: a}\n").to_string(),
        "overlay entry 1 in /p/overlay.yml: `insert` must be a list of rows"
    );
    let PatchFileError::Parse { reason, .. } = parse("- id: [unclosed\n") else {
        panic!("expected a parse error")
    };
    assert!(reason.contains("line 2"), "{reason}");
    assert!(
        parse("- id: [unclosed\n")
            .to_string()
            .starts_with("failed to parse overlay /p/overlay.yml: "),
    );
}

#[test]
fn an_embedded_profile_is_one_bundle_layer() {
    let layer =
        dsh_compose::Layer::bundle("my-app", "- insert:\n    - id: llm\n      name: dsh-llm\n")
            .unwrap();
    assert_eq!(layer.label, "my-app");
    let composition = compose(&[layer]).unwrap();
    assert_eq!(composition.rows().len(), 1);
    let refused = dsh_compose::Layer::bundle("my-app", "id: llm\n").unwrap_err();
    assert!(refused.to_string().contains("my-app"), "{refused}");
}
