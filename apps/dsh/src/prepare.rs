//! The composition step shared by boot and the dumps: resolve `$DSH_HOME` and the profile,
//! read the layers, compose them, and report skipped patch entries on stderr.

use std::path::Path;
use std::path::PathBuf;

use anyhow::Context as _;
use dsh_compose::Composition;
use dsh_compose::compose;
use dsh_compose::profile::DshHome;
use dsh_compose::profile::Profile;
use dsh_compose::profile::load_profile;
use dsh_compose::profile::profile_layers;
use dsh_compose::profile::scaffold_profile;

use crate::catalog;
use crate::output;

/// A composed profile, ready to dump or boot.
pub struct Prepared {
    /// `$DSH_HOME`.
    pub home: DshHome,
    /// The resolved profile.
    pub profile: Profile,
    /// The composed rows.
    pub composition: Composition,
    /// The `--patch` files, absolute.
    pub patch_files: Vec<PathBuf>,
}

/// Composes `profile`: its bundles, then (with `user_layers`) its own and the home's
/// `cordis.patch.yml` and each of `patches` (relative paths are taken from the working
/// directory). With `user_layers`, the profile's directory and empty `cordis.patch.yml` are
/// created on first use (a failure to do so is a warning: the file only helps the user).
pub fn prepare(profile: &str, user_layers: bool, patches: &[String]) -> anyhow::Result<Prepared> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let home = dsh_home(&cwd)?;
    let catalog = catalog::shipped()?;
    let profile = load_profile(&home, &catalog, profile)?;
    if user_layers && let Err(error) = scaffold_profile(&profile) {
        output::diagnostic(&error.to_string());
    }
    let patch_files: Vec<PathBuf> = patches.iter().map(|path| absolute(&cwd, path)).collect();
    let layers = profile_layers(&catalog, &home, &profile, user_layers, &patch_files)?;
    let composition = compose(&layers)?;
    for warning in composition.warnings() {
        output::diagnostic(&format!("[{}] {}", warning.layer, warning.message));
    }
    Ok(Prepared {
        home,
        profile,
        composition,
        patch_files,
    })
}

/// `$DSH_HOME`, default `~/.dsh`.
fn dsh_home(cwd: &Path) -> anyhow::Result<DshHome> {
    let value = std::env::var("DSH_HOME").ok();
    let user_home = std::env::var_os("HOME").map(PathBuf::from);
    Ok(DshHome::resolve(
        value.as_deref(),
        user_home.as_deref(),
        cwd,
    )?)
}

fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    std::path::absolute(&joined).unwrap_or(joined)
}
