//! Profiles: which bundles a profile composes, where its user layers live, and the layer
//! stack that boot and the dump share.
//!
//! Layer order, later winning per row: each bundle in the profile's order, then
//! `$DSH_HOME/profiles/<name>/cordis.patch.yml`, then `$DSH_HOME/cordis.patch.yml`, then each
//! `--patch` file in command-line order.

use std::borrow::Cow;
use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;

use crate::compose::Layer;
use crate::node::Node;
use crate::patch::PatchFileError;
use crate::patch::PatchFileKind;
use crate::yaml::parse_document;

/// The file name of a user patch layer.
pub const PATCH_FILE: &str = "cordis.patch.yml";
/// The file that lists a custom profile's bundles.
pub const PROFILE_FILE: &str = "profile.yml";

const PATCH_TEMPLATE: &str = "\
# Your patch layer for this dsh profile, applied after every bundle layer:
# a top-level YAML array of loader patch entries (id-targeted config
# overrides, disables, and insert lists; `!!js` expressions allowed).
# `dsh --profile <name> --dump-config` prints the rows you can target.
[]
";

/// A bundle: a named patch list shipped with the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// The bundle's name, as profiles list it and the dump labels its rows.
    pub name: String,
    /// Its patch list text.
    pub text: Cow<'static, str>,
}

/// A profile the binary knows without a `profile.yml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileTemplate {
    /// The profile name.
    pub name: String,
    /// Its bundles, in order.
    pub bundles: Vec<String>,
}

/// The bundles and profile templates a binary ships.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    bundles: Vec<Bundle>,
    templates: Vec<ProfileTemplate>,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a bundle.
    pub fn with_bundle(mut self, name: &str, text: impl Into<Cow<'static, str>>) -> Self {
        self.bundles.push(Bundle {
            name: name.to_owned(),
            text: text.into(),
        });
        self
    }

    /// Adds a profile template from the text of its `profile.yml`.
    pub fn with_template(mut self, name: &str, manifest: &str) -> Result<Self, ProfileError> {
        let bundles = parse_manifest(manifest, &format!("profile template {name}"))?;
        self.templates.push(ProfileTemplate {
            name: name.to_owned(),
            bundles,
        });
        Ok(self)
    }

    /// The bundle called `name`.
    pub fn bundle(&self, name: &str) -> Option<&Bundle> {
        self.bundles.iter().find(|bundle| bundle.name == name)
    }

    /// The template called `name`.
    pub fn template(&self, name: &str) -> Option<&ProfileTemplate> {
        self.templates.iter().find(|template| template.name == name)
    }

    /// Every bundle, in the order added.
    pub fn bundles(&self) -> &[Bundle] {
        &self.bundles
    }

    /// Every template, in the order added.
    pub fn templates(&self) -> &[ProfileTemplate] {
        &self.templates
    }
}

/// A profile could not be resolved or its layers could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// `$DSH_HOME` cannot be determined.
    #[error("cannot find the dsh home: {0}")]
    Home(String),
    /// The profile name cannot name a directory.
    #[error(
        "invalid profile name {0:?}: it may not be empty, contain / or \\, or be ., .. or node_modules"
    )]
    InvalidName(String),
    /// Neither a template nor a `profile.yml` defines the profile.
    #[error(
        "profile \"{name}\" does not exist; create {} listing its bundles \
         (for example: bundles: [dsh-base, dsh-headless]); shipped profiles: {known}",
        .dir.join(PROFILE_FILE).display()
    )]
    Missing {
        /// The name asked for.
        name: String,
        /// Where its directory would be.
        dir: PathBuf,
        /// The shipped profile names.
        known: String,
    },
    /// A `profile.yml` cannot be read or has the wrong shape.
    #[error("{file}: {reason}")]
    Manifest {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A profile lists a bundle the binary does not ship.
    #[error(
        "profile \"{profile}\" lists bundle \"{bundle}\", which this dsh does not ship; known bundles: {known}"
    )]
    UnknownBundle {
        /// The profile.
        profile: String,
        /// The unknown bundle.
        bundle: String,
        /// The shipped bundle names.
        known: String,
    },
    /// The profile directory could not be created.
    #[error("cannot create {path}: {reason} (set DSH_HOME to a writable directory)")]
    Scaffold {
        /// What could not be written.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// A patch layer cannot be used.
    #[error(transparent)]
    Patch(#[from] PatchFileError),
}

/// The dsh home directory (`$DSH_HOME`, default `~/.dsh`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DshHome {
    root: PathBuf,
}

impl DshHome {
    /// The home at `root`.
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// Resolves the home from the value of `DSH_HOME` (blank means unset; a leading `~` is
    /// the user's home; relative paths are taken from `cwd`), else `<home>/.dsh`.
    pub fn resolve(
        dsh_home: Option<&str>,
        user_home: Option<&Path>,
        cwd: &Path,
    ) -> Result<Self, ProfileError> {
        let expand = |rest: &str| -> Result<PathBuf, ProfileError> {
            let home = user_home.ok_or_else(|| {
                ProfileError::Home("HOME is not set; set DSH_HOME or HOME".to_owned())
            })?;
            Ok(home.join(rest.trim_start_matches('/')))
        };
        let root = match dsh_home.map(str::trim).filter(|value| !value.is_empty()) {
            Some("~") => expand("")?,
            Some(value) if value.starts_with("~/") => expand(&value[2..])?,
            Some(value) => cwd.join(value),
            None => expand(".dsh")?,
        };
        Ok(Self {
            root: join_normalized(&root, &[]),
        })
    }

    /// The home directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `$DSH_HOME/cordis.patch.yml`, the layer shared by every profile.
    pub fn home_patch_path(&self) -> PathBuf {
        self.root.join(PATCH_FILE)
    }

    /// `$DSH_HOME/profiles/<name>`, after checking the name.
    pub fn profile_dir(&self, name: &str) -> Result<PathBuf, ProfileError> {
        if name.is_empty()
            || name.contains(['/', '\\'])
            || name == "."
            || name == ".."
            || name == "node_modules"
        {
            return Err(ProfileError::InvalidName(name.to_owned()));
        }
        Ok(self.root.join("profiles").join(name))
    }
}

/// `base` joined with `segments` and normalized like Node's `path.join`: `.` and empty parts
/// vanish, `..` steps up (never above the root), and a leading `/` in a segment does not
/// restart the path.
pub fn join_normalized(base: &Path, segments: &[&str]) -> PathBuf {
    use std::path::Component;
    let mut path = PathBuf::new();
    let parts = base.components().chain(
        segments
            .iter()
            .flat_map(|segment| Path::new(segment).components()),
    );
    for component in parts {
        match component {
            Component::ParentDir => {
                path.pop();
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) if path.has_root() => {}
            other => path.push(other),
        }
    }
    path
}

/// A resolved profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The profile name.
    pub name: String,
    /// `$DSH_HOME/profiles/<name>`.
    pub dir: PathBuf,
    /// Its bundles, in order.
    pub bundles: Vec<String>,
}

impl Profile {
    /// The profile's own user layer.
    pub fn patch_path(&self) -> PathBuf {
        self.dir.join(PATCH_FILE)
    }
}

/// Resolves profile `name`: its `profile.yml` when there is one, else the shipped template.
pub fn load_profile(
    home: &DshHome,
    catalog: &Catalog,
    name: &str,
) -> Result<Profile, ProfileError> {
    let dir = home.profile_dir(name)?;
    let manifest = dir.join(PROFILE_FILE);
    let bundles = match fs::read_to_string(&manifest) {
        Ok(text) => parse_manifest(&text, &manifest.display().to_string())?,
        Err(error) if is_absent(&error) => {
            let Some(template) = catalog.template(name) else {
                return Err(ProfileError::Missing {
                    name: name.to_owned(),
                    dir,
                    known: names(catalog.templates().iter().map(|t| t.name.as_str())),
                });
            };
            template.bundles.clone()
        }
        Err(error) => {
            return Err(ProfileError::Manifest {
                file: manifest.display().to_string(),
                reason: error.to_string(),
            });
        }
    };
    for bundle in &bundles {
        if catalog.bundle(bundle).is_none() {
            return Err(ProfileError::UnknownBundle {
                profile: name.to_owned(),
                bundle: bundle.clone(),
                known: names(catalog.bundles().iter().map(|b| b.name.as_str())),
            });
        }
    }
    Ok(Profile {
        name: name.to_owned(),
        dir,
        bundles,
    })
}

fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let list: Vec<&str> = names.collect();
    if list.is_empty() {
        "none".to_owned()
    } else {
        list.join(", ")
    }
}

/// Creates the profile's directory (and any missing parent, the home among them) private to
/// the user (`0700`), and an empty (`[]`) `cordis.patch.yml` with a comment on
/// how to use it, unless the file exists; an existing file is never touched.
pub fn scaffold_profile(profile: &Profile) -> Result<(), ProfileError> {
    let failed = |path: &Path, error: io::Error| ProfileError::Scaffold {
        path: path.display().to_string(),
        reason: error.to_string(),
    };
    let patch = profile.patch_path();
    if patch.exists() {
        return Ok(());
    }
    // The home holds every session: directories created here are private to the user.
    std::os::unix::fs::DirBuilderExt::mode(fs::DirBuilder::new().recursive(true), 0o700)
        .create(&profile.dir)
        .map_err(|error| failed(&profile.dir, error))?;
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&patch)
    {
        Ok(mut file) => {
            io::Write::write_all(&mut file, PATCH_TEMPLATE.as_bytes())
                .map_err(|error| failed(&patch, error))?;
            tracing::info!(
                "initialized profile {} at {}",
                profile.name,
                profile.dir.display()
            );
            Ok(())
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(failed(&patch, error)),
    }
}

/// The bundle list of a `profile.yml`: a mapping with a `bundles` list of names.
fn parse_manifest(text: &str, file: &str) -> Result<Vec<String>, ProfileError> {
    let fail = |reason: String| ProfileError::Manifest {
        file: file.to_owned(),
        reason,
    };
    let document = parse_document(text).map_err(|error| fail(error.to_string()))?;
    let Some(Node::Map(map)) = document else {
        return Err(fail("must be a mapping with a `bundles` list".to_owned()));
    };
    if let Some((key, _)) = map.iter().find(|(key, _)| *key != "bundles") {
        return Err(fail(format!(
            "unknown key `{key}` (a profile has only `bundles`)"
        )));
    }
    let Some(Node::Seq(items)) = map.get("bundles") else {
        return Err(fail("`bundles` must be a list of bundle names".to_owned()));
    };
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| fail("`bundles` must be a list of bundle names".to_owned()))
        })
        .collect()
}

/// The layer stack of `profile`: its bundles, then (with `user_layers`) the profile's and the
/// home's `cordis.patch.yml` when they exist, then each of `patch_files` (absolute paths,
/// which must exist). The user layers and patch files are read with [`Layer::file`], so their
/// relative config paths are taken from their own directories.
pub fn profile_layers(
    catalog: &Catalog,
    home: &DshHome,
    profile: &Profile,
    user_layers: bool,
    patch_files: &[PathBuf],
) -> Result<Vec<Layer>, ProfileError> {
    let mut layers = Vec::new();
    for name in &profile.bundles {
        let bundle = catalog
            .bundle(name)
            .ok_or_else(|| ProfileError::UnknownBundle {
                profile: profile.name.clone(),
                bundle: name.clone(),
                known: names(catalog.bundles().iter().map(|b| b.name.as_str())),
            })?;
        layers.push(Layer::bundle(bundle.name.clone(), &bundle.text)?);
    }
    if !user_layers {
        return Ok(layers);
    }
    for path in [profile.patch_path(), home.home_patch_path()] {
        if let Some(layer) = optional_layer(&path)? {
            layers.push(layer);
        }
    }
    for path in patch_files {
        let text = fs::read_to_string(path).map_err(|error| PatchFileError::Read {
            kind: PatchFileKind::Overlay,
            file: path.display().to_string(),
            reason: error.to_string(),
        })?;
        layers.push(Layer::file(path, &text, PatchFileKind::Overlay)?);
    }
    Ok(layers)
}

fn optional_layer(path: &Path) -> Result<Option<Layer>, ProfileError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(Layer::file(path, &text, PatchFileKind::Patches)?)),
        Err(error) if is_absent(&error) => Ok(None),
        Err(error) => Err(PatchFileError::Read {
            kind: PatchFileKind::Patches,
            file: path.display().to_string(),
            reason: error.to_string(),
        }
        .into()),
    }
}

/// Whether a read failed because the file is not there (or a parent is not a directory).
fn is_absent(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}
