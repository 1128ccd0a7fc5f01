//! Relative paths in patch files: `./` and `../` config strings are taken from the file's
//! directory when the layer is loaded.

use std::fs;
use std::path::Path;

use dsh_compose::Layer;
use dsh_compose::compose;
use dsh_compose::patch::PatchFileKind;
use dsh_compose::profile::Catalog;
use dsh_compose::profile::DshHome;
use dsh_compose::profile::load_profile;
use dsh_compose::profile::profile_layers;
use dsh_compose::profile::scaffold_profile;
use pretty_assertions::assert_eq;

use super::support::yaml;

const PATCH: &str = r#"
- id: llm-deepseek
  config:
    root: ./targeted
- insert:
    - id: llm-replay
      name: dsh-llm-replay
      config:
        session: ./replay/session.jsonl
        sibling: ../shared/x.yml
        nested:
          list: [./a, plain, /abs, "~/home", .hidden, ".", "..", ./]
          deeper: {path: ../../b/./c}
        expression: !!js "'./x'"
        number: 3
    - id: grp
      name: group
      group: true
      config:
        - id: ./child
          name: ./plugin
          config: {file: ./inside}
"#;

fn file_layer(path: &Path, text: &str) -> Layer {
    Layer::file(path, text, PatchFileKind::Overlay).unwrap()
}

#[test]
fn relative_config_strings_are_taken_from_the_patch_files_directory() {
    let layer = file_layer(Path::new("/repo/profiles/examples/replay.patch.yml"), PATCH);
    assert_eq!(layer.label, "/repo/profiles/examples/replay.patch.yml");
    let entries = layer.patches.entries();
    assert_eq!(
        entries[0].get("config"),
        Some(&yaml("root: /repo/profiles/examples/targeted")),
        "a targeting entry's config"
    );
    let inserted = &entries[1].get("insert").unwrap();
    assert_eq!(
        *inserted,
        &yaml(
            r#"
- id: llm-replay
  name: dsh-llm-replay
  config:
    session: /repo/profiles/examples/replay/session.jsonl
    sibling: /repo/profiles/shared/x.yml
    nested:
      list:
        - /repo/profiles/examples/a
        - plain
        - /abs
        - "~/home"
        - .hidden
        - "."
        - ".."
        - /repo/profiles/examples
      deeper: {path: /repo/b/c}
    expression: !!js "'./x'"
    number: 3
- id: grp
  name: group
  group: true
  config:
    - id: ./child
      name: ./plugin
      config: {file: /repo/profiles/examples/inside}
"#
        ),
        "ids, plugin names, other strings and expressions are kept"
    );
}

#[test]
fn bundles_keep_their_strings_as_written() {
    let layer = Layer::bundle("dsh-base", PATCH).unwrap();
    let config = layer.patches.entries()[0].get("config");
    assert_eq!(config, Some(&yaml("root: ./targeted")));
}

#[test]
fn patch_files_and_user_layers_resolve_against_their_own_directories() {
    let dir = tempfile::tempdir().unwrap();
    let home = DshHome::new(dir.path().join("home"));
    let catalog = Catalog::new()
        .with_bundle(
            "dsh-base",
            "- insert:\n    - {id: replay, name: dsh-llm-replay, config: {session: ./bundle}}\n",
        )
        .with_template("headless", "bundles: [dsh-base]\n")
        .unwrap();
    let profile = load_profile(&home, &catalog, "headless").unwrap();
    scaffold_profile(&profile).unwrap();
    fs::write(
        home.home_patch_path(),
        "- id: replay\n  config: {session: ./home.jsonl}\n",
    )
    .unwrap();
    let elsewhere = dir.path().join("repo/profiles/examples");
    fs::create_dir_all(&elsewhere).unwrap();
    let overlay = elsewhere.join("replay.patch.yml");
    fs::write(
        &overlay,
        "- id: replay\n  config: {session: ./replay/session.jsonl, home: ../../home.jsonl}\n",
    )
    .unwrap();

    let home_only = profile_layers(&catalog, &home, &profile, true, &[]).unwrap();
    let composed = compose(&home_only).unwrap();
    let session = home.root().join("home.jsonl");
    assert_eq!(
        composed.rows()[0].as_map().unwrap().get("config"),
        Some(&yaml(&format!("session: {}", session.display())))
    );

    let layers = profile_layers(
        &catalog,
        &home,
        &profile,
        true,
        std::slice::from_ref(&overlay),
    )
    .unwrap();
    let dump = compose(&layers).unwrap().render_dump();
    let recording = elsewhere.join("replay/session.jsonl");
    let sibling = dir.path().join("repo/home.jsonl");
    assert!(
        dump.contains(&format!("session: {}\n", recording.display())),
        "the dump shows the resolved path:\n{dump}"
    );
    assert!(
        dump.contains(&format!("home: {}\n", sibling.display())),
        "{dump}"
    );
}
