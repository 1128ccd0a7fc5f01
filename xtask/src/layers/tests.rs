//! The checks on small made-up workspaces.

use std::path::Path;

use serde_json::{Value, json};

use super::graph::{Crate, Edge, Kind, Role, Workspace, family_of_dir};
use super::{sources, table};

fn krate(name: &str, dir: &str, floor: u64, role: Role) -> Crate {
    Crate {
        name: name.to_owned(),
        dir: dir.to_owned(),
        family: family_of_dir(dir).unwrap_or("apps").to_owned(),
        floor,
        role,
    }
}

fn edge(from: &str, to: &str, kind: Kind) -> Edge {
    Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        kind,
    }
}

/// A small workspace that keeps every rule: a vocabulary, a seam, two providers of it, a
/// consumer and an app.
fn good() -> Workspace {
    Workspace {
        crates: vec![
            krate("proto", "crates/protocol", 0, Role::Definition),
            krate("seam", "crates/shell/shell", 1, Role::Definition),
            krate("local", "crates/shell/bash-local", 2, Role::Provider),
            krate("boxed", "crates/shell/bash-sandbox", 2, Role::Provider),
            krate("tool", "crates/shell/tool-bash", 2, Role::Consumer),
            krate("app", "apps/dsh", 3, Role::App),
            krate("support", "crates/test-support", 1, Role::Support),
        ],
        edges: vec![
            edge("seam", "proto", Kind::Normal),
            edge("local", "seam", Kind::Normal),
            edge("boxed", "seam", Kind::Normal),
            edge("boxed", "proto", Kind::Build),
            edge("tool", "seam", Kind::Normal),
            // Tests may use a provider and the test support, wherever they sit.
            edge("tool", "local", Kind::Dev),
            edge("seam", "local", Kind::Dev),
            edge("seam", "support", Kind::Dev),
            edge("app", "local", Kind::Normal),
            edge("app", "boxed", Kind::Normal),
            edge("app", "tool", Kind::Normal),
        ],
    }
}

#[test]
fn a_good_graph_passes() {
    assert_eq!(good().check(), Vec::<String>::new());
}

#[test]
fn a_dependency_on_the_same_or_a_higher_floor_fails_naming_both() {
    let mut workspace = good();
    workspace.edges.push(edge("seam", "tool", Kind::Normal));
    workspace.edges.push(edge("local", "tool", Kind::Build));
    let problems = workspace.check();
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("seam (floor 1) has a normal dependency on tool (floor 2)"));
    assert!(problems[1].starts_with("local (floor 2) has a build dependency on tool (floor 2)"));
}

#[test]
fn tests_reaching_up_to_anything_but_a_provider_or_the_support_fail() {
    let mut workspace = good();
    workspace.edges.push(edge("seam", "tool", Kind::Dev));
    workspace.edges.push(edge("local", "boxed", Kind::Dev));
    let problems = workspace.check();
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0].starts_with("seam (floor 1) has a dev dependency on tool (floor 2): tests may"),
        "{problems:#?}"
    );
    assert!(problems[1].contains("both are providers"), "{problems:#?}");
}

#[test]
fn a_provider_depending_on_another_provider_fails_whatever_the_kind() {
    let mut workspace = good();
    workspace.crates[3].floor = 3;
    workspace.crates[5].floor = 4;
    workspace.edges.push(edge("boxed", "local", Kind::Normal));
    workspace.edges.push(edge("local", "boxed", Kind::Dev));
    let problems = workspace.check();
    assert_eq!(
        problems,
        [
            "boxed has a normal dependency on local: both are providers, and no provider may \
             depend on another",
            "local has a dev dependency on boxed: both are providers, and no provider may depend \
             on another",
        ]
    );
}

#[test]
fn a_crate_declaring_another_family_than_its_folder_fails() {
    let mut workspace = good();
    workspace.crates[4].family = "core".to_owned();
    workspace.crates[5].family = "anything".to_owned();
    assert_eq!(
        workspace.check(),
        ["tool lives in crates/shell/tool-bash but declares family \"core\" (expected \"shell\")"]
    );
    assert_eq!(family_of_dir("crates/protocol"), Some("protocol"));
    assert_eq!(family_of_dir("crates/core/kernel"), Some("core"));
    assert_eq!(family_of_dir("xtask"), None);
}

fn package(name: &str, dir: &str, dsh: Value, dependencies: Value) -> Value {
    json!({
        "name": name,
        "manifest_path": format!("/ws/{dir}/Cargo.toml"),
        "metadata": if dsh.is_null() { Value::Null } else { json!({"dsh": dsh}) },
        "dependencies": dependencies,
    })
}

#[test]
fn metadata_gives_the_crates_and_the_edges_between_them() {
    let metadata = json!({"packages": [
        package("low", "crates/core/low", json!({"family": "core", "floor": 0, "role": "definition"}), json!([])),
        package("high", "crates/core/high", json!({"family": "core", "floor": 1, "role": "consumer"}), json!([
            {"name": "low", "kind": null, "path": "/ws/crates/core/low"},
            {"name": "low", "kind": null, "path": "/ws/crates/core/low", "target": "cfg(unix)"},
            {"name": "low", "kind": "dev", "path": "/ws/crates/core/low"},
            {"name": "serde", "kind": null},
        ])),
        package("bare", "crates/core/bare", Value::Null, json!([])),
        package("odd", "crates/core/odd", json!({"family": "core", "floor": 2, "role": "plugin"}), json!([])),
    ]});
    let mut problems = Vec::new();
    let workspace = Workspace::from_metadata(&metadata, Path::new("/ws"), &mut problems);
    let names: Vec<&str> = workspace
        .crates
        .iter()
        .map(|krate| krate.name.as_str())
        .collect();
    assert_eq!(names, ["high", "low"]);
    assert_eq!(workspace.crates[0].dir, "crates/core/high");
    assert_eq!(workspace.crates[0].role, Role::Consumer);
    assert_eq!(
        workspace.edges,
        [
            edge("high", "low", Kind::Normal),
            edge("high", "low", Kind::Dev)
        ]
    );
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0].starts_with("bare (crates/core/bare/Cargo.toml): no [package.metadata.dsh]")
    );
    assert!(problems[1].contains("role \"plugin\""), "{}", problems[1]);
}

const PAGE: &str = "\
# Architecture

| crate | family | floor | job |
|---|---|---|---|
| `proto` (`crates/protocol`) | protocol | 0 | the vocabulary, with a `|` in it |
| `seam` (`crates/shell/shell`) | shell | 1 | the seam |
| `later` (`crates/shell/later`) | shell | 2 | (coming) a crate still to write |

Text after the table.
";

#[test]
fn the_crate_table_reads_and_is_checked_against_the_crates() {
    let rows = table::parse(PAGE).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].name, "proto");
    assert_eq!(rows[0].dir, "crates/protocol");
    assert!(rows[2].coming);
    let crates = good().crates;
    assert_eq!(
        table::check(&crates[..2], &rows),
        Vec::<String>::new(),
        "a table that agrees, with a planned crate"
    );
    let mut wrong = crates[..3].to_vec();
    wrong[1].floor = 4;
    wrong[0].family = "core".to_owned();
    let problems = table::check(&wrong, &rows[..2]);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(
        problems[0].contains("gives proto the family \"protocol\"; its Cargo.toml says \"core\"")
    );
    assert!(problems[1].contains("gives seam the floor \"1\"; its Cargo.toml says \"4\""));
    assert!(problems[2].contains("has no row for local"));
    let stray = table::check(&crates[..1], &rows[..2]);
    assert_eq!(stray.len(), 1);
    assert!(stray[0].contains("lists seam, which is not a workspace crate"));
    assert!(table::parse("# no table").is_err());
    assert!(
        table::parse(&format!(
            "{}\n|---|\n| seam | shell | 1 | x |",
            table::HEADER
        ))
        .is_err()
    );
}

#[test]
fn long_files_outside_the_tests_and_too_many_allows_are_reported() {
    let long = "line\n".repeat(sources::MAX_LINES + 1);
    let files: Vec<sources::Source> = [
        ("crates/a/src/lib.rs", long.as_str()),
        ("crates/a/src/short.rs", "fn main() {}\n"),
        ("crates/a/src/parse/tests.rs", long.as_str()),
        ("crates/a/tests/suite/big.rs", long.as_str()),
        ("crates/a/benches/big.rs", long.as_str()),
        ("apps/b/src/main.rs", long.as_str()),
        ("crates/c/ui/style.css", long.as_str()),
    ]
    .into_iter()
    .map(|(path, text)| (path.to_owned(), text.to_owned()))
    .collect();
    let problems = sources::long_files(&files);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].starts_with("crates/a/src/lib.rs has 601 lines"));
    assert!(problems[1].starts_with("apps/b/src/main.rs has 601 lines"));
    assert!(problems[2].starts_with("crates/c/ui/style.css has 601 lines"));

    let allows = |count: usize| -> Vec<sources::Source> {
        let text = "#[allow(dead_code, reason = \"y\")]\nfn f() {}\n// #[allow(x)] in a comment\n\
                    #[expect(dead_code, reason = \"x\")]\n";
        (0..count)
            .map(|n| (format!("crates/a/src/f{n}.rs"), text.to_owned()))
            .collect()
    };
    assert_eq!(sources::too_many_allows(&allows(sources::MAX_ALLOWS)), None);
    let problem = sources::too_many_allows(&allows(sources::MAX_ALLOWS + 1)).unwrap();
    assert!(
        problem.starts_with("21 #[allow(...)] attributes"),
        "{problem}"
    );
    assert!(problem.contains("crates/a/src/f20.rs:1"), "{problem}");
}

#[test]
fn lint_attributes_without_a_reason_are_reported_and_mentions_are_not() {
    let text = "#[expect(dead_code)]\nfn f() {}\n#![allow(\n    unused,\n    reason = \"kept\"\n)]\n\
                let s = \"#[allow(x)]\";\n    #[expect(\n        clippy::panic,\n    )]\n";
    let files = vec![("crates/a/src/lib.rs".to_owned(), text.to_owned())];
    assert_eq!(
        sources::unexplained_lint_attributes(&files),
        [
            "crates/a/src/lib.rs:1: a lint attribute without a reason: say why, as \
             #[expect(lint, reason = \"...\")]",
            "crates/a/src/lib.rs:8: a lint attribute without a reason: say why, as \
             #[expect(lint, reason = \"...\")]",
        ]
    );
    assert_eq!(sources::too_many_allows(&files), None);
}
