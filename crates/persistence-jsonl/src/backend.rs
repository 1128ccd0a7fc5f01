//! [`JsonlBackend`]: dsh 0.1's JSONL store, plain or in checksummed zstd frames.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use dsh_persistence::{
    BackendError, PersistenceBackend, PersistenceSnapshot, SessionLocation, SessionRawArtifact,
    StoredLog,
};
use dsh_session::chunk_rows::pack_chunk_runs;
use dsh_session::json::write_js;
use dsh_session::{SessionEvent, SessionHeader};

use crate::decode::{ReadLog, decode_log, read_header_only};
use crate::files::{
    append_durable, exists, io_error, make_dir_durable, publish_new, read_stable, revision,
    truncate_durable,
};
use crate::header_line::header_line;
use crate::layout::{Compression, encode_segment, log_path, project_dir, session_dir};
use crate::zstd_frames::compress_frame;

/// Where and how the backend stores logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonlOptions {
    /// The sessions root (absolute).
    pub root: PathBuf,
    /// `zstd` (default) or plain JSONL.
    pub compression: Compression,
    /// Pack runs of streamed chunks into rows (write side only).
    pub pack_chunks: bool,
}

/// What a load needs to cut a torn tail: the byte offset to keep, and the complete events
/// recovered from a torn final zstd frame (re-appended after the cut).
#[derive(Debug)]
pub struct JsonlTornMarker {
    /// Bytes to keep.
    pub truncate_to: u64,
    /// Events read from the torn frame.
    pub recovered: Vec<SessionEvent>,
}

/// The JSONL backend.
#[derive(Debug, Clone)]
pub struct JsonlBackend {
    inner: Arc<JsonlOptions>,
}

impl JsonlBackend {
    /// A backend over `options.root`. An existing root must be a readable directory; a
    /// missing one is created on the first write.
    pub fn new(options: JsonlOptions) -> Result<Self, BackendError> {
        if !options.root.is_absolute() {
            return Err(BackendError::Invalid(format!(
                "the JSONL session root {} must be an absolute path",
                options.root.display()
            )));
        }
        match fs::read_dir(&options.root) {
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(io_error("reading the session root", &options.root, error)),
        }
        Ok(Self {
            inner: Arc::new(options),
        })
    }

    /// The configured options.
    pub fn options(&self) -> &JsonlOptions {
        &self.inner
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&JsonlOptions) -> Result<T, BackendError> + Send + 'static,
    ) -> Result<T, BackendError> {
        let options = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || work(&options))
            .await
            .map_err(|error| BackendError::Invalid(format!("a storage task failed: {error}")))?
    }
}

impl JsonlBackend {
    /// Runs a short write (one append and its fsync). On a multi-threaded runtime it runs on
    /// the calling worker while the other workers keep the runtime moving: handing each write
    /// to the blocking pool measured about 100 µs per write on a 2-core machine, as much as
    /// the write itself. On a single-threaded runtime it goes to the blocking pool.
    async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&JsonlOptions) -> Result<T, BackendError> + Send + 'static,
    ) -> Result<T, BackendError> {
        let flavor = tokio::runtime::Handle::try_current().map(|handle| handle.runtime_flavor());
        if matches!(flavor, Ok(tokio::runtime::RuntimeFlavor::MultiThread)) {
            return work(&self.inner);
        }
        self.blocking(work).await
    }
}

fn layout_error(error: crate::layout::LayoutError) -> BackendError {
    BackendError::Invalid(error.to_string())
}

fn encoding_mismatch(options: &JsonlOptions, path: &Path) -> BackendError {
    BackendError::Invalid(format!(
        "session artifact \"{}\" uses {}, but this backend is configured for compression \"{}\"; \
         use a separate root or select the matching compression mode",
        path.display(),
        options.compression.opposite().suffix(),
        options.compression.name()
    ))
}

fn legacy_layout(path: &Path) -> BackendError {
    BackendError::Invalid(format!(
        "session artifact \"{}\" uses the unsupported flat-file layout; use a separate root or \
         move it into a project/session directory before loading",
        path.display()
    ))
}

fn list_dirs(dir: &Path) -> Result<Vec<PathBuf>, BackendError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io_error("listing", dir, error)),
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("listing", dir, e))?;
        if entry
            .file_type()
            .map_err(|e| io_error("listing", dir, e))?
            .is_dir()
        {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Session directories of a project directory, refusing the obsolete flat layout.
fn session_dirs(project: &Path) -> Result<Vec<PathBuf>, BackendError> {
    let entries = fs::read_dir(project).map_err(|e| io_error("listing", project, e))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("listing", project, e))?;
        let kind = entry
            .file_type()
            .map_err(|e| io_error("listing", project, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if kind.is_file() && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zstd")) {
            return Err(legacy_layout(&entry.path()));
        }
        if kind.is_dir() {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// The unique log of `id` under the root, if any.
fn find_log(options: &JsonlOptions, id: &str) -> Result<Option<PathBuf>, BackendError> {
    let encoded = encode_segment(id).map_err(layout_error)?;
    let mut matches = Vec::new();
    for project in list_dirs(&options.root)? {
        for compression in [Compression::Zstd, Compression::None] {
            let flat = project.join(format!("{encoded}{}", compression.suffix()));
            if exists(&flat)? {
                return Err(legacy_layout(&flat));
            }
        }
        let dir = project.join(&encoded);
        let opposite = dir.join(options.compression.opposite().transcript_name());
        if exists(&opposite)? {
            return Err(encoding_mismatch(options, &opposite));
        }
        let path = dir.join(options.compression.transcript_name());
        if exists(&path)? {
            matches.push(path);
        }
    }
    if matches.len() > 1 {
        return Err(BackendError::Corrupt(format!(
            "duplicate JSONL session id \"{id}\" appears in multiple project directories"
        )));
    }
    Ok(matches.pop())
}

/// The header must name the file it was found in.
fn assert_identity(
    options: &JsonlOptions,
    path: &Path,
    header: &SessionHeader,
    expected_id: Option<&str>,
) -> Result<(), BackendError> {
    if let Some(expected) = expected_id
        && header.id != expected
    {
        return Err(BackendError::Corrupt(format!(
            "corrupt session log \"{}\": requested id \"{expected}\" does not match header id \"{}\"",
            path.display(),
            header.id
        )));
    }
    let expected_path = log_path(
        &options.root,
        header.cwd.as_deref(),
        &header.id,
        options.compression,
    )
    .map_err(|_| {
        BackendError::Corrupt(format!(
            "corrupt session log \"{}\": header id cannot name a storage path",
            path.display()
        ))
    })?;
    let same = path == expected_path
        || matches!(
            (fs::canonicalize(path), fs::canonicalize(&expected_path)),
            (Ok(a), Ok(b)) if a == b
        );
    if !same {
        return Err(BackendError::Corrupt(format!(
            "corrupt session log \"{}\": header id \"{}\" and cwd identify \"{}\"",
            path.display(),
            header.id,
            expected_path.display()
        )));
    }
    Ok(())
}

/// The plaintext of a batch: one storage record per line, each ending in `\n`.
fn batch_text(events: &[Arc<SessionEvent>], pack: bool) -> Result<Vec<u8>, BackendError> {
    let mut text = Vec::with_capacity(events.len() * 128);
    let fail =
        |error: serde_json::Error| BackendError::Invalid(format!("encoding a batch: {error}"));
    if pack {
        for record in pack_chunk_runs(events) {
            write_js(&mut text, &record).map_err(fail)?;
            text.push(b'\n');
        }
    } else {
        for event in events {
            write_js(&mut text, &**event).map_err(fail)?;
            text.push(b'\n');
        }
    }
    Ok(text)
}

fn encode(options: &JsonlOptions, plain: &[u8], path: &Path) -> Result<Vec<u8>, BackendError> {
    match options.compression {
        Compression::None => Ok(plain.to_vec()),
        Compression::Zstd => {
            compress_frame(plain).map_err(|error| io_error("compressing a frame for", path, error))
        }
    }
}

fn append_events(
    options: &JsonlOptions,
    header: &SessionHeader,
    events: &[Arc<SessionEvent>],
    materialized: bool,
) -> Result<(), BackendError> {
    let path = log_path(
        &options.root,
        header.cwd.as_deref(),
        &header.id,
        options.compression,
    )
    .map_err(layout_error)?;
    let batch = encode(options, &batch_text(events, options.pack_chunks)?, &path)?;
    if materialized {
        return append_durable(&path, &batch);
    }
    let opposite = log_path(
        &options.root,
        header.cwd.as_deref(),
        &header.id,
        options.compression.opposite(),
    )
    .map_err(layout_error)?;
    if exists(&opposite)? {
        return Err(encoding_mismatch(options, &opposite));
    }
    let project = project_dir(&options.root, header.cwd.as_deref()).map_err(layout_error)?;
    let dir =
        session_dir(&options.root, header.cwd.as_deref(), &header.id).map_err(layout_error)?;
    make_dir_durable(&options.root)?;
    make_dir_durable(&project)?;
    make_dir_durable(&dir)?;
    if exists(&path)? {
        return Err(BackendError::Invalid(format!(
            "refusing to materialize \"{}\": a log already exists on disk (load/resume it instead)",
            header.id
        )));
    }
    let mut header_text = header_line(header).into_bytes();
    header_text.push(b'\n');
    let mut content = encode(options, &header_text, &path)?;
    content.extend_from_slice(&batch);
    publish_new(&path, &content)
}

fn load(
    options: &JsonlOptions,
    id: &str,
) -> Result<Option<StoredLog<JsonlTornMarker>>, BackendError> {
    let Some(path) = find_log(options, id)? else {
        return Ok(None);
    };
    let (bytes, revision) = read_stable(&path)?;
    let ReadLog {
        header,
        events,
        torn,
        ..
    } = decode_log(&bytes, options.compression, &path)?;
    assert_identity(options, &path, &header, Some(id))?;
    Ok(Some(StoredLog {
        header,
        events,
        revision,
        torn,
    }))
}

fn list(options: &JsonlOptions) -> Result<Vec<(SessionHeader, PathBuf)>, BackendError> {
    let mut found: Vec<(SessionHeader, PathBuf)> = Vec::new();
    for project in list_dirs(&options.root)? {
        for dir in session_dirs(&project)? {
            let opposite = dir.join(options.compression.opposite().transcript_name());
            if exists(&opposite)? {
                return Err(encoding_mismatch(options, &opposite));
            }
            let path = dir.join(options.compression.transcript_name());
            if !exists(&path)? {
                continue;
            }
            let Some(header) = read_header_only(&path, options.compression)? else {
                continue;
            };
            assert_identity(options, &path, &header, None)?;
            if found.iter().any(|(seen, _)| seen.id == header.id) {
                return Err(BackendError::Corrupt(format!(
                    "duplicate JSONL session id \"{}\" appears in multiple project directories",
                    header.id
                )));
            }
            found.push((header, path));
        }
    }
    Ok(found)
}

#[async_trait]
impl PersistenceBackend for JsonlBackend {
    type TornMarker = JsonlTornMarker;

    fn name(&self) -> &'static str {
        "jsonl"
    }

    async fn load_stored(
        &self,
        id: &str,
    ) -> Result<Option<StoredLog<JsonlTornMarker>>, BackendError> {
        let id = id.to_owned();
        self.blocking(move |options| load(options, &id)).await
    }

    async fn read_stored_revision(&self, id: &str) -> Result<Option<String>, BackendError> {
        let id = id.to_owned();
        self.blocking(move |options| match find_log(options, &id)? {
            Some(path) => revision(&path),
            None => Ok(None),
        })
        .await
    }

    async fn append_batch(
        &self,
        header: &SessionHeader,
        events: &[Arc<SessionEvent>],
        materialized: bool,
    ) -> Result<(), BackendError> {
        let header = header.clone();
        let events = events.to_vec();
        self.write(move |options| append_events(options, &header, &events, materialized))
            .await
    }

    async fn commit_repair(
        &self,
        header: &SessionHeader,
        torn: Option<JsonlTornMarker>,
        closers: &[Arc<SessionEvent>],
    ) -> Result<(), BackendError> {
        let header = header.clone();
        let closers = closers.to_vec();
        self.write(move |options| {
            let mut events = Vec::new();
            if let Some(marker) = torn {
                let path = log_path(
                    &options.root,
                    header.cwd.as_deref(),
                    &header.id,
                    options.compression,
                )
                .map_err(layout_error)?;
                truncate_durable(&path, marker.truncate_to)?;
                events.extend(marker.recovered.into_iter().map(Arc::new));
            }
            events.extend(closers);
            if events.is_empty() {
                return Ok(());
            }
            append_events(options, &header, &events, true)
        })
        .await
    }

    async fn list(&self) -> Result<Vec<SessionHeader>, BackendError> {
        self.blocking(|options| {
            Ok(list(options)?
                .into_iter()
                .map(|(header, _)| header)
                .collect())
        })
        .await
    }

    async fn list_snapshots(&self) -> Result<Vec<PersistenceSnapshot>, BackendError> {
        self.blocking(|options| {
            let mut snapshots = Vec::new();
            for (header, path) in list(options)? {
                if let Some(revision) = revision(&path)? {
                    snapshots.push(PersistenceSnapshot { header, revision });
                }
            }
            Ok(snapshots)
        })
        .await
    }

    fn locate(&self, header: &SessionHeader) -> Option<SessionLocation> {
        let options = &self.inner;
        log_path(
            &options.root,
            header.cwd.as_deref(),
            &header.id,
            options.compression,
        )
        .ok()
        .map(|path| SessionLocation {
            kind: "jsonl",
            path,
        })
    }

    fn supports_raw_artifacts(&self) -> bool {
        true
    }

    async fn read_raw(&self, id: &str) -> Result<Option<SessionRawArtifact>, BackendError> {
        let id = id.to_owned();
        self.blocking(move |options| {
            let Some(path) = find_log(options, &id)? else {
                return Ok(None);
            };
            let (bytes, _) = read_stable(&path)?;
            let text = crate::decode::decode_text(&bytes, options.compression, &path)?;
            let first = text.split('\n').next().unwrap_or_default();
            let header = match crate::header_line::parse_header_line(first.as_bytes()) {
                Ok(header) if header.id == id => header,
                Err(problem @ crate::header_line::HeaderProblem::ForeignVersion(_)) => {
                    return Err(crate::decode::header_error(&problem, &path));
                }
                _ => {
                    return Err(BackendError::Corrupt(format!(
                        "corrupt session log: invalid header line in \"{}\"",
                        path.display()
                    )));
                }
            };
            Ok(Some(SessionRawArtifact {
                header,
                filename: "session.jsonl",
                content: text,
            }))
        })
        .await
    }
}
