//! Profiles, `$DSH_HOME`, scaffolding and the layer order.

use std::fs;
use std::path::Path;
use std::path::PathBuf;

use dsh_compose::compose;
use dsh_compose::patch::PatchFileKind;
use dsh_compose::patch::PatchList;
use dsh_compose::profile::Catalog;
use dsh_compose::profile::DshHome;
use dsh_compose::profile::ProfileError;
use dsh_compose::profile::load_profile;
use dsh_compose::profile::profile_layers;
use dsh_compose::profile::scaffold_profile;
use pretty_assertions::assert_eq;

fn catalog() -> Catalog {
    Catalog::new()
        .with_bundle(
            "dsh-base",
            "- insert:\n    - {id: tools, name: dsh-tools}\n",
        )
        .with_bundle("dsh-headless", "- id: tools\n  config: {mode: native}\n")
        .with_template("headless", "bundles: [dsh-base, dsh-headless]\n")
        .unwrap()
}

#[test]
fn dsh_home_defaults_to_dot_dsh_and_expands_tilde() {
    let home = Path::new("/home/me");
    let cwd = Path::new("/work");
    let resolve = |value: Option<&str>| {
        DshHome::resolve(value, Some(home), cwd)
            .unwrap()
            .root()
            .to_path_buf()
    };
    assert_eq!(resolve(None), PathBuf::from("/home/me/.dsh"));
    assert_eq!(
        resolve(Some("  ")),
        PathBuf::from("/home/me/.dsh"),
        "blank is unset"
    );
    assert_eq!(resolve(Some("~")), PathBuf::from("/home/me"));
    assert_eq!(resolve(Some("~/alt")), PathBuf::from("/home/me/alt"));
    assert_eq!(resolve(Some("rel")), PathBuf::from("/work/rel"));
    assert_eq!(resolve(Some("/abs")), PathBuf::from("/abs"));
    assert!(DshHome::resolve(None, None, cwd).is_err());
}

#[test]
fn profile_names_that_cannot_be_a_directory_are_rejected() {
    let home = DshHome::new(PathBuf::from("/h"));
    for name in ["", "a/b", "a\\b", ".", "..", "node_modules"] {
        assert!(
            matches!(home.profile_dir(name), Err(ProfileError::InvalidName(_))),
            "{name:?}"
        );
    }
}

#[test]
fn a_template_profile_is_scaffolded_once_and_user_edits_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let home = DshHome::new(dir.path().join("home"));
    let profile = load_profile(&home, &catalog(), "headless").unwrap();
    assert_eq!(profile.bundles, ["dsh-base", "dsh-headless"]);
    assert!(!profile.dir.exists(), "resolving writes nothing");
    scaffold_profile(&profile).unwrap();
    for created in [dir.path().join("home"), profile.dir.clone()] {
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&created).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o700, "{} is private", created.display());
    }
    let patch = profile.patch_path();
    let template = fs::read_to_string(&patch).unwrap();
    assert!(template.ends_with("[]\n"), "{template}");
    PatchList::parse(&template, "t", PatchFileKind::Patches).unwrap();

    fs::write(&patch, "- id: tools\n  disabled: true\n").unwrap();
    scaffold_profile(&profile).unwrap();
    assert_eq!(
        fs::read_to_string(&patch).unwrap(),
        "- id: tools\n  disabled: true\n"
    );
}

#[test]
fn a_custom_profile_lists_its_bundles_in_profile_yml() {
    let dir = tempfile::tempdir().unwrap();
    let home = DshHome::new(dir.path().to_path_buf());
    let profile_dir = home.profile_dir("mine").unwrap();
    let missing = load_profile(&home, &catalog(), "mine")
        .unwrap_err()
        .to_string();
    assert_eq!(
        missing,
        format!(
            "profile \"mine\" does not exist; create {} listing its bundles (for example: \
             bundles: [dsh-base, dsh-headless]); shipped profiles: headless",
            profile_dir.join("profile.yml").display()
        )
    );
    fs::create_dir_all(&profile_dir).unwrap();
    fs::write(profile_dir.join("profile.yml"), "bundles: [dsh-base]\n").unwrap();
    assert_eq!(
        load_profile(&home, &catalog(), "mine").unwrap().bundles,
        ["dsh-base"]
    );

    fs::write(
        profile_dir.join("profile.yml"),
        "bundles: [dsh-base, dsh-tui]\n",
    )
    .unwrap();
    assert_eq!(
        load_profile(&home, &catalog(), "mine")
            .unwrap_err()
            .to_string(),
        "profile \"mine\" lists bundle \"dsh-tui\", which this dsh does not ship; known bundles: dsh-base, dsh-headless"
    );
    fs::write(profile_dir.join("profile.yml"), "bundle: [dsh-base]\n").unwrap();
    let error = load_profile(&home, &catalog(), "mine")
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with("profile.yml: unknown key `bundle` (a profile has only `bundles`)"),
        "{error}"
    );
}

#[test]
fn layers_stack_bundles_then_profile_then_home_then_each_patch_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = DshHome::new(dir.path().to_path_buf());
    let profile = load_profile(&home, &catalog(), "headless").unwrap();
    scaffold_profile(&profile).unwrap();
    fs::write(
        profile.patch_path(),
        "- id: tools\n  config: {mode: profile}\n",
    )
    .unwrap();
    fs::write(
        home.home_patch_path(),
        "- id: tools\n  config: {mode: home}\n",
    )
    .unwrap();
    let first = dir.path().join("first.yml");
    let second = dir.path().join("second.yml");
    fs::write(&first, "- id: tools\n  config: {mode: first}\n").unwrap();
    fs::write(&second, "- id: tools\n  disabled: true\n").unwrap();

    let layers = profile_layers(
        &catalog(),
        &home,
        &profile,
        true,
        &[first.clone(), second.clone()],
    )
    .unwrap();
    let labels: Vec<&str> = layers.iter().map(|layer| layer.label.as_str()).collect();
    let profile_patch = profile.patch_path().display().to_string();
    let home_patch = home.home_patch_path().display().to_string();
    let first_label = first.display().to_string();
    let second_label = second.display().to_string();
    assert_eq!(
        labels,
        [
            "dsh-base",
            "dsh-headless",
            &profile_patch,
            &home_patch,
            &first_label,
            &second_label
        ]
    );
    let composition = compose(&layers).unwrap();
    assert_eq!(
        composition.rows(),
        &[super::support::yaml(
            "{id: tools, name: dsh-tools, config: {mode: first}, disabled: true}"
        )]
    );

    let defaults = profile_layers(&catalog(), &home, &profile, false, &[]).unwrap();
    assert_eq!(defaults.len(), 2, "bundles only");
}

#[test]
fn a_missing_patch_file_is_an_error_but_missing_user_layers_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let home = DshHome::new(dir.path().to_path_buf());
    let profile = load_profile(&home, &catalog(), "headless").unwrap();
    assert_eq!(
        profile_layers(&catalog(), &home, &profile, true, &[])
            .unwrap()
            .len(),
        2
    );
    let missing = dir.path().join("nope.yml");
    let error = profile_layers(
        &catalog(),
        &home,
        &profile,
        true,
        std::slice::from_ref(&missing),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("failed to read overlay {}: ", missing.display())),
        "{error}"
    );
}
