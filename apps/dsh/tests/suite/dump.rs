//! `--dump-config` and `--dump-default-config`.

use dsh_compose::node::Node;
use dsh_compose::yaml::parse_document;
use pretty_assertions::assert_eq;

use super::support::Sandbox;
use super::support::display;

fn row_ids(dump: &str) -> Vec<String> {
    let Some(Node::Seq(rows)) = parse_document(dump).unwrap() else {
        panic!("not a YAML list:\n{dump}")
    };
    rows.iter()
        .map(|row| {
            row.as_map()
                .unwrap()
                .get("id")
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// Dumps `profile` from an empty `DSH_HOME`: exit 0, empty stderr, loadable YAML holding
/// `ids`, and the text locked by the snapshot `name`.
fn assert_shipped_dump(profile: &str, ids: &[&str], name: &str) {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["--profile", profile, "--dump-config"]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    let found = row_ids(&run.stdout);
    for id in ids {
        assert!(
            found.iter().any(|known| known == id),
            "{id} missing from {found:?}"
        );
    }
    assert!(run.stdout.starts_with("# == dsh-base\n"));
    insta::assert_snapshot!(name, run.stdout);
}

const CORE_ROWS: [&str; 7] = [
    "session-persistence-jsonl",
    "llm-deepseek",
    "agent-loop",
    "tool-bash",
    "bash-sandbox",
    "tools",
    "approval",
];

#[test]
fn the_web_dump_is_loadable_yaml_with_dsh_row_ids_and_provenance() {
    let ids = [&CORE_ROWS[..], &["web-startup", "webserver", "web-runtime"]].concat();
    assert_shipped_dump("web", &ids, "web_dump");
}

#[test]
fn the_headless_dump_is_loadable_yaml_with_dsh_row_ids_and_provenance() {
    let ids = [&CORE_ROWS[..], &["headless-startup", "headless-runner"]].concat();
    assert_shipped_dump("headless", &ids, "headless_dump");
}

#[test]
fn web_alias_dumps_the_web_profile() {
    let sandbox = Sandbox::new();
    let alias = sandbox.run(&["web", "--dump-config"]);
    let long = sandbox.run(&["--profile", "web", "--dump-config"]);
    assert_eq!(alias.code, Some(0));
    assert_eq!(alias.stdout, long.stdout);
}

#[test]
fn a_patch_that_replaces_a_config_changes_only_that_key_of_that_row() {
    let sandbox = Sandbox::new();
    let plain = sandbox.run(&["--profile", "headless", "--dump-config"]);
    let patch = sandbox.write(
        "work/sessions.yml",
        "- id: session-persistence-jsonl\n  config:\n    root: /srv/dsh-sessions\n",
    );
    // A relative --patch path is taken from the working directory and printed absolute.
    let run = sandbox.run(&[
        "--profile",
        "headless",
        "--dump-config",
        "--patch",
        "sessions.yml",
    ]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    // Rows before the patched one keep their header; compare the parsed trees and the text.
    let before: Vec<_> = plain
        .stdout
        .lines()
        .filter(|line| !line.starts_with("# =="))
        .collect();
    let after: Vec<_> = run
        .stdout
        .lines()
        .filter(|line| !line.starts_with("# =="))
        .collect();
    let changed: Vec<_> = before.iter().zip(&after).filter(|(a, b)| a != b).collect();
    assert_eq!(
        changed,
        [(
            &"    root: !!js dshHomePath('sessions')",
            &"    root: /srv/dsh-sessions"
        )]
    );
    assert_eq!(before.len(), after.len());
    assert!(
        run.stdout.contains(&format!(
            "# == dsh-base, patched by {}\n- id: session-persistence-jsonl\n",
            display(&patch)
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn an_insert_appears_at_the_end_under_its_own_header() {
    let sandbox = Sandbox::new();
    let patch = sandbox.write(
        "extra.yml",
        "- insert:\n    - id: mcp-memory\n      name: dsh-mcp-client\n      config: {serverName: memory}\n",
    );
    let run = sandbox.run(&[
        "--profile",
        "headless",
        "--dump-config",
        "--patch",
        &display(&patch),
    ]);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.ends_with(&format!(
            "# == {}\n- id: mcp-memory\n  name: dsh-mcp-client\n  config:\n    serverName: memory\n",
            display(&patch)
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn an_unknown_id_warns_on_stderr_and_exits_0() {
    let sandbox = Sandbox::new();
    let patch = sandbox.write("ghost.yml", "- id: ghost\n  disabled: true\n");
    let plain = sandbox.run(&["--profile", "web", "--dump-config"]);
    let run = sandbox.run(&[
        "--profile",
        "web",
        "--dump-config",
        "--patch",
        &display(&patch),
    ]);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stderr,
        format!(
            "dsh: [{}] patch: entry \"ghost\" not found\n",
            display(&patch)
        )
    );
    assert_eq!(run.stdout, plain.stdout);
}

#[test]
fn bad_patch_files_exit_1_naming_the_file_and_the_reason() {
    let sandbox = Sandbox::new();
    let cases = [
        (
            "object.yml",
            "id: tools\n",
            "must be a top-level YAML array of loader patch entries",
        ),
        (
            "scalar-entry.yml",
            "- id: tools\n  disabled: true\n- tools\n",
            "overlay entry 2 in {file} must be a mapping (a loader patch entry)",
        ),
        (
            "broken.yml",
            "- id: [tools\n",
            "failed to parse overlay {file}: ",
        ),
        (
            "empty.yml",
            "",
            "(it is empty; write [] for a layer that changes nothing)",
        ),
    ];
    for (name, text, expected) in cases {
        let file = display(&sandbox.write(name, text));
        let run = sandbox.run(&["--profile", "web", "--dump-config", "--patch", &file]);
        assert_eq!(run.code, Some(1), "{name}");
        assert_eq!(run.stdout, "", "{name}");
        assert!(run.stderr.starts_with("dsh: "), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(&file), "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains(&expected.replace("{file}", &file)),
            "{name}: {}",
            run.stderr
        );
    }
    let missing = display(&sandbox.dir.path().join("missing.yml"));
    let run = sandbox.run(&["--profile", "web", "--dump-config", "--patch", &missing]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .starts_with(&format!("dsh: failed to read overlay {missing}: ")),
        "{}",
        run.stderr
    );
}

#[test]
fn user_layers_apply_in_order_and_dump_default_config_ignores_them() {
    let sandbox = Sandbox::new();
    let profile_patch = sandbox.write(
        "home/profiles/web/cordis.patch.yml",
        "- id: tools\n  config: {mode: code}\n",
    );
    let home_patch = sandbox.write("home/cordis.patch.yml", "- id: tools\n  disabled: true\n");
    let run = sandbox.run(&["--profile", "web", "--dump-config"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "# == dsh-base, patched by dsh-web, {}, {}\n- id: tools\n  name: dsh-tools\n  config:\n    mode: code\n  disabled: true\n",
            display(&profile_patch),
            display(&home_patch)
        )),
        "{}",
        run.stdout
    );

    // A broken user layer stops the normal dump; the default dump is the way back.
    std::fs::write(&home_patch, "- id: [broken\n").unwrap();
    let broken = sandbox.run(&["--profile", "web", "--dump-config"]);
    assert_eq!(broken.code, Some(1));
    assert!(
        broken
            .stderr
            .contains(&format!("failed to parse patches {}", display(&home_patch))),
        "{}",
        broken.stderr
    );
    let default = sandbox.run(&["--profile", "web", "--dump-default-config"]);
    assert_eq!((default.code, default.stderr.as_str()), (Some(0), ""));
    let bundles_only = Sandbox::new().run(&["--profile", "web", "--dump-config"]);
    assert_eq!(default.stdout, bundles_only.stdout);
}

#[test]
fn the_first_run_scaffolds_the_profile_directory() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["--profile", "headless", "--dump-config"]);
    assert_eq!(run.code, Some(0));
    let patch = sandbox.home().join("profiles/headless/cordis.patch.yml");
    let text = std::fs::read_to_string(&patch).unwrap();
    assert!(
        text.starts_with("# Your patch layer for this dsh profile"),
        "{text}"
    );
    assert!(text.ends_with("[]\n"), "{text}");

    let default = Sandbox::new();
    default.run(&["--profile", "headless", "--dump-default-config"]);
    assert!(
        !default.home().join("profiles").exists(),
        "the recovery dump writes nothing"
    );
}

#[test]
fn a_custom_profile_composes_the_bundles_its_profile_yml_lists() {
    let sandbox = Sandbox::new();
    sandbox.write("home/profiles/mine/profile.yml", "bundles: [dsh-base]\n");
    let run = sandbox.run(&["--profile", "mine", "--dump-config"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let ids = row_ids(&run.stdout);
    assert!(ids.contains(&"agent-loop".to_owned()));
    assert!(!ids.contains(&"headless-runner".to_owned()));

    let unknown = sandbox.run(&["--profile", "nope", "--dump-config"]);
    assert_eq!(unknown.code, Some(1));
    assert_eq!(
        unknown.stderr,
        format!(
            "dsh: profile \"nope\" does not exist; create {}/profiles/nope/profile.yml listing its bundles \
             (for example: bundles: [dsh-base, dsh-headless]); shipped profiles: headless, web\n",
            display(&sandbox.home())
        )
    );
}

#[test]
fn a_home_that_cannot_be_written_still_dumps_with_a_warning() {
    let sandbox = Sandbox::new();
    let not_a_directory = sandbox.write("home-is-a-file", "");
    let run = sandbox
        .command(&["--profile", "web", "--dump-config"])
        .env("DSH_HOME", &not_a_directory)
        .output()
        .unwrap();
    let run = super::support::Run::from(run);
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.starts_with("# == dsh-base\n"));
    assert!(
        run.stderr.starts_with("dsh: cannot create "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("(set DSH_HOME to a writable directory)"),
        "{}",
        run.stderr
    );
}

/// The shipped SQLite overlay (`profiles/examples/sqlite.patch.yml`), as an absolute path.
pub(super) fn sqlite_overlay() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../profiles/examples/sqlite.patch.yml"
    );
    display(&std::fs::canonicalize(path).unwrap())
}

#[test]
fn the_sqlite_overlay_swaps_the_jsonl_store_for_the_sqlite_one() {
    let sandbox = Sandbox::new();
    let overlay = sqlite_overlay();
    let run = sandbox.run(&[
        "--profile",
        "headless",
        "--dump-config",
        "--patch",
        &overlay,
    ]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert!(run.stdout.contains(&overlay), "{}", run.stdout);
    let ids = row_ids(&run.stdout);
    assert_eq!(ids.last().unwrap(), "session-persistence-sqlite");
    assert!(ids.contains(&"session-persistence-jsonl".to_owned()));
    assert!(
        run.stdout.contains(&format!(
            "# == dsh-base, patched by {overlay}\n- id: session-persistence-jsonl\n  \
             name: dsh-persistence-jsonl\n  config:\n    root: !!js dshHomePath('sessions')\n  \
             disabled: true\n"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with(&format!(
            "# == {overlay}\n- id: session-persistence-sqlite\n  name: dsh-persistence-sqlite\n  \
             config:\n    path: !!js dshHomePath('sessions.sqlite')\n"
        )),
        "{}",
        run.stdout
    );
    // The checkout's location is not part of the snapshot.
    insta::assert_snapshot!(
        "headless_sqlite_dump",
        run.stdout
            .replace(&overlay, "<profiles/examples/sqlite.patch.yml>")
    );
}
