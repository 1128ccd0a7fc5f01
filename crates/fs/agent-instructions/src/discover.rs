//! Finding instruction files through the `fs` provider: the project root, the directories
//! from it down to the cwd, the candidates present in each, bounded reads, and the
//! same-directory duplicate collapse.

use std::collections::{HashMap, HashSet};

use dsh_fs::{FileSystem, FsError, FsErrorCode, FsKind, FsTarget, FsVersion};
use dsh_tools::CancellationToken;

use crate::config::ResolvedConfig;
use crate::digest::trimmed_sha1;
use crate::paths;
use crate::render::USER_GLOBAL_FILE;
use crate::source::{USER_GLOBAL_DIRECTORY, decode_scope_key};

/// An instruction file by its absolute path and the path the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Where it is (the directory joined with the candidate name, links not resolved).
    pub absolute_path: String,
    /// Relative to the project root (`AGENTS.md`, `nested/AGENTS.md`), or
    /// `~/.dsh/AGENTS.md` / `$DSH_HOME/AGENTS.md` for the user-global file.
    pub display_path: String,
}

/// An instruction file whose text was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedInstructionFile {
    /// Where it is.
    pub absolute_path: String,
    /// The path the model reads.
    pub display_path: String,
    /// Its whole text.
    pub content: String,
    /// The provider's version when it was probed.
    pub version: Option<FsVersion>,
}

impl LoadedInstructionFile {
    /// The file without its text.
    pub fn file(&self) -> InstructionFile {
        InstructionFile {
            absolute_path: self.absolute_path.clone(),
            display_path: self.display_path.clone(),
        }
    }
}

/// The turn was cancelled while files were being probed or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Aborted;

/// The provider and the cancellation every probe observes.
pub(crate) struct Probe<'a> {
    /// The `fs` provider.
    pub(crate) fs: &'a dyn FileSystem,
    /// The turn's cancellation.
    pub(crate) signal: &'a CancellationToken,
}

/// A candidate the provider reports as a regular file, before its text is read.
#[derive(Debug, Clone)]
pub(crate) struct ProbedFile {
    pub(crate) absolute_path: String,
    pub(crate) display_path: String,
    pub(crate) target: FsTarget,
    pub(crate) version: FsVersion,
    pub(crate) size: Option<u64>,
}

/// What probing one candidate found: a file, confirmed absence (nothing, a directory, a
/// broken link), or a provider failure.
#[derive(Debug, Clone)]
pub(crate) enum ScopeProbe {
    Present(ProbedFile),
    Absent,
    Unavailable,
}

impl Probe<'_> {
    pub(crate) fn check(&self) -> Result<(), Aborted> {
        if self.signal.is_cancelled() {
            Err(Aborted)
        } else {
            Ok(())
        }
    }

    /// Resolves and stats `path` (links followed, so a symlinked candidate loads its target
    /// and one that resolves to a directory is absent).
    fn stat_file(&self, path: &str) -> Result<Probed, Aborted> {
        self.check()?;
        let probed = match self.fs.resolve(path, None) {
            Err(_) => Probed::Unavailable,
            Ok(target) => match self.fs.stat(&target) {
                Err(_) => Probed::Unavailable,
                Ok(Some(info)) if info.kind == FsKind::File => Probed::File {
                    target,
                    version: info.version,
                    size: info.size,
                },
                Ok(_) => Probed::Absent,
            },
        };
        self.check()?;
        Ok(probed)
    }

    /// Whether a marker (file or directory) exists at `path`; a provider failure counts as
    /// absence, as in dsh.
    fn marker_exists(&self, path: &str) -> Result<bool, Aborted> {
        self.check()?;
        let exists = self
            .fs
            .resolve(path, None)
            .ok()
            .is_some_and(|target| matches!(self.fs.stat(&target), Ok(Some(_))));
        self.check()?;
        Ok(exists)
    }

    /// The whole text of `target`, or `None` when it is over `max_bytes`, unreadable, not
    /// text, or gone.
    fn read_bounded(
        &self,
        target: &FsTarget,
        size: Option<u64>,
        max_bytes: u64,
    ) -> Result<Option<String>, Aborted> {
        self.check()?;
        if size.is_some_and(|size| size > max_bytes) {
            return Ok(None);
        }
        let mut text = String::new();
        let mut bytes: u64 = 0;
        let streamed = self.fs.stream_text(target, &mut |chunk| {
            if self.signal.is_cancelled() {
                return Err(FsError::new(FsErrorCode::Aborted, "aborted"));
            }
            bytes = bytes.saturating_add(u64::try_from(chunk.len()).unwrap_or(u64::MAX));
            if bytes > max_bytes {
                return Err(FsError::new(FsErrorCode::TooLarge, "over maxSourceBytes"));
            }
            text.push_str(chunk);
            Ok(())
        });
        self.check()?;
        Ok(streamed.ok().map(|()| text))
    }
}

enum Probed {
    File {
        target: FsTarget,
        version: FsVersion,
        size: Option<u64>,
    },
    Absent,
    Unavailable,
}

/// The first directory from `cwd` upwards holding one of `markers`; `cwd` itself when none
/// does.
pub(crate) fn find_project_root(
    probe: &Probe<'_>,
    cwd: &str,
    markers: &[String],
) -> Result<String, Aborted> {
    let start = paths::absolute(cwd);
    let mut current = start.clone();
    loop {
        for marker in markers {
            if probe.marker_exists(&paths::join(&current, marker))? {
                return Ok(current);
            }
        }
        let parent = paths::dirname(&current);
        if parent == current {
            return Ok(start);
        }
        current = parent;
    }
}

/// The directories from `root` down to `cwd`, both included, broadest first.
pub(crate) fn ancestor_chain(root: &str, cwd: &str) -> Vec<String> {
    let root = paths::absolute(root);
    let mut current = paths::absolute(cwd);
    let mut chain = Vec::new();
    while current != root {
        chain.push(current.clone());
        let parent = paths::dirname(&current);
        if parent == current {
            break;
        }
        current = parent;
    }
    chain.push(root);
    chain.reverse();
    chain
}

/// The directories strictly below `cwd` down to the parent of `touched` (relative to `cwd`
/// unless absolute), shallowest first; none for a file directly in `cwd` or outside it.
pub(crate) fn descendant_dirs_between(cwd: &str, touched: &str) -> Vec<String> {
    let root = paths::absolute(cwd);
    let target = paths::resolve(&root, touched);
    let target_dir = paths::dirname(&target);
    let rel = paths::relative(&root, &target_dir);
    if rel.is_empty() || rel.starts_with("..") || paths::is_absolute(&rel) {
        return Vec::new();
    }
    ancestor_chain(&root, &target_dir)
        .into_iter()
        .skip(1)
        .collect()
}

/// A candidate found by baseline discovery.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    pub(crate) file: InstructionFile,
    pub(crate) target: FsTarget,
    pub(crate) version: FsVersion,
    pub(crate) size: Option<u64>,
}

/// Every present candidate in model order: the user-global file, then for each directory from
/// `project_root` to `cwd` the base candidates and then the local ones, each absolute path
/// once.
pub(crate) fn discover(
    probe: &Probe<'_>,
    config: &ResolvedConfig,
    cwd: &str,
    project_root: &str,
) -> Result<Vec<Discovered>, Aborted> {
    let mut found: Vec<Discovered> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut add = |found: &mut Vec<Discovered>, path: String, display_path: String, probed| {
        if let Probed::File {
            target,
            version,
            size,
        } = probed
            && seen.insert(path.clone())
        {
            found.push(Discovered {
                file: InstructionFile {
                    absolute_path: path,
                    display_path,
                },
                target,
                version,
                size,
            });
        }
    };
    let user_global = paths::join(&config.dsh_home, USER_GLOBAL_FILE);
    let probed = probe.stat_file(&user_global)?;
    add(
        &mut found,
        user_global,
        config.user_global_display_path(),
        probed,
    );
    for dir in ancestor_chain(project_root, cwd) {
        let candidates = config
            .instruction_file_candidates
            .iter()
            .chain(&config.local_instruction_file_candidates);
        for candidate in candidates {
            let path = paths::join(&dir, candidate);
            let probed = probe.stat_file(&path)?;
            let display = paths::relative(project_root, &path);
            add(&mut found, path, display, probed);
        }
    }
    Ok(found)
}

/// Reads every discovered file under `max_bytes`, leaving out the ones that cannot be read.
pub(crate) fn load(
    probe: &Probe<'_>,
    discovered: Vec<Discovered>,
    max_bytes: u64,
) -> Result<Vec<LoadedInstructionFile>, Aborted> {
    let mut loaded = Vec::with_capacity(discovered.len());
    for found in discovered {
        if let Some(content) = probe.read_bounded(&found.target, found.size, max_bytes)? {
            loaded.push(LoadedInstructionFile {
                absolute_path: found.file.absolute_path,
                display_path: found.file.display_path,
                content,
                version: Some(found.version),
            });
        }
    }
    Ok(loaded)
}

/// Drops each file whose trimmed text repeats an earlier file of the same directory; files of
/// different directories never collapse.
pub(crate) fn dedup_by_directory(files: Vec<LoadedInstructionFile>) -> Vec<LoadedInstructionFile> {
    let mut kept_by_dir: HashMap<String, HashSet<String>> = HashMap::new();
    files
        .into_iter()
        .filter(|file| {
            kept_by_dir
                .entry(paths::dirname(&file.display_path))
                .or_default()
                .insert(trimmed_sha1(&file.content))
        })
        .collect()
}

/// Probes the candidate a scope key names (`<dir>\0<name>`, `dir` being `user-global`, `.`
/// or root-relative).
pub(crate) fn probe_scope(
    probe: &Probe<'_>,
    scope: &str,
    project_root: &str,
    config: &ResolvedConfig,
) -> Result<ScopeProbe, Aborted> {
    let (directory, name) = decode_scope_key(scope);
    let user_global = directory == USER_GLOBAL_DIRECTORY;
    let dir = if user_global {
        config.dsh_home.clone()
    } else if directory == "." {
        project_root.to_owned()
    } else {
        paths::join(project_root, directory)
    };
    let absolute_path = paths::join(&dir, name);
    Ok(match probe.stat_file(&absolute_path)? {
        Probed::Unavailable => ScopeProbe::Unavailable,
        Probed::Absent => ScopeProbe::Absent,
        Probed::File {
            target,
            version,
            size,
        } => ScopeProbe::Present(ProbedFile {
            display_path: if user_global {
                config.user_global_display_path()
            } else {
                paths::relative(project_root, &absolute_path)
            },
            absolute_path,
            target,
            version,
            size,
        }),
    })
}

/// Reads a probed scope candidate under `max_bytes`.
pub(crate) fn read_scope(
    probe: &Probe<'_>,
    file: &ProbedFile,
    max_bytes: u64,
) -> Result<Option<LoadedInstructionFile>, Aborted> {
    Ok(probe
        .read_bounded(&file.target, file.size, max_bytes)?
        .map(|content| LoadedInstructionFile {
            absolute_path: file.absolute_path.clone(),
            display_path: file.display_path.clone(),
            content,
            version: Some(file.version.clone()),
        }))
}

#[cfg(test)]
mod tests;
