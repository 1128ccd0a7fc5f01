//! [`JsonlBackend`]: dsh 0.1's JSONL store, plain or in checksummed zstd frames.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use dsh_persistence::chunk_rows::pack_chunk_runs;
use dsh_persistence::log_file::decode::{ReadLog, TornTail, header_error};
use dsh_persistence::log_file::header_line::{HeaderProblem, header_line, parse_header_line};
use dsh_persistence::log_file::zstd_frames::compress_frame;
use dsh_persistence::{
    BackendError, LocationKind, PersistenceBackend, PersistenceSnapshot, SessionListing,
    SessionLocation, SessionRawArtifact, SnapshotListing, StoredLog,
};
use dsh_protocol::json::write_js;
use dsh_session::{SessionEvent, SessionHeader};

use crate::decode::decode_log;
use crate::files::{
    append_durable, exists, io_error, kind_at, make_dir_durable, not_a_regular_file,
    open_for_append, publish_new, read_stable, revision, truncate_durable,
};
use crate::layout::{Compression, log_path, project_dir, session_dir};
use crate::listing::scan;
use crate::lookup::{FoundLog, assert_identity, find_log, layout_error};

/// How the sessions root is named when the sandbox protects it.
pub const STORE_OWNER: &str = "the JSONL session store";

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

fn encode(compression: Compression, plain: &[u8], path: &Path) -> Result<Vec<u8>, BackendError> {
    match compression {
        Compression::None => Ok(plain.to_vec()),
        Compression::Zstd => {
            compress_frame(plain).map_err(|error| io_error("compressing a frame for", path, error))
        }
    }
}

/// Where the log of `header` is in the configured encoding, then in the other one.
fn candidate_logs(
    options: &JsonlOptions,
    header: &SessionHeader,
) -> Result<[(Compression, PathBuf); 2], BackendError> {
    let at = |compression| {
        log_path(
            &options.root,
            header.cwd.as_deref(),
            &header.id,
            compression,
        )
        .map(|path| (compression, path))
        .map_err(layout_error)
    };
    Ok([
        at(options.compression)?,
        at(options.compression.opposite())?,
    ])
}

/// The stored log of `header`: in the configured encoding, or else in the other one (a
/// session written before `compression` was changed keeps its encoding).
fn existing_log(options: &JsonlOptions, header: &SessionHeader) -> Result<FoundLog, BackendError> {
    let mut configured = None;
    for (compression, path) in candidate_logs(options, header)? {
        match kind_at(&path)? {
            Some(kind) if kind.is_file() => return Ok(FoundLog { path, compression }),
            Some(kind) => return Err(not_a_regular_file(&path, kind)),
            None => configured = configured.or(Some(path)),
        }
    }
    let path = configured.unwrap_or_default();
    Err(io_error(
        "opening",
        &path,
        io::Error::new(io::ErrorKind::NotFound, "the session log is gone"),
    ))
}

/// Appends to the stored log, in its own encoding. Opening it is the lookup, so an append
/// costs no more system calls than before a store could hold both encodings.
fn append_stored(
    options: &JsonlOptions,
    header: &SessionHeader,
    plain: &[u8],
) -> Result<(), BackendError> {
    for (compression, path) in candidate_logs(options, header)? {
        if let Some(target) = open_for_append(&path)? {
            let batch = encode(compression, plain, &path)?;
            return append_durable(target, &path, &batch);
        }
    }
    // Neither log is there: report it as the configured one.
    existing_log(options, header).map(drop)
}

fn append_events(
    options: &JsonlOptions,
    header: &SessionHeader,
    events: &[Arc<SessionEvent>],
    materialized: bool,
) -> Result<(), BackendError> {
    let plain = batch_text(events, options.pack_chunks)?;
    if materialized {
        return append_stored(options, header, &plain);
    }
    let path = log_path(
        &options.root,
        header.cwd.as_deref(),
        &header.id,
        options.compression,
    )
    .map_err(layout_error)?;
    let batch = encode(options.compression, &plain, &path)?;
    let opposite = log_path(
        &options.root,
        header.cwd.as_deref(),
        &header.id,
        options.compression.opposite(),
    )
    .map_err(layout_error)?;
    let project = project_dir(&options.root, header.cwd.as_deref()).map_err(layout_error)?;
    let dir =
        session_dir(&options.root, header.cwd.as_deref(), &header.id).map_err(layout_error)?;
    make_dir_durable(&options.root)?;
    make_dir_durable(&project)?;
    make_dir_durable(&dir)?;
    for existing in [&path, &opposite] {
        if exists(existing)? {
            return Err(BackendError::Invalid(format!(
                "refusing to materialize \"{}\": a log already exists at \"{}\" (load/resume \
                 it instead)",
                header.id,
                existing.display()
            )));
        }
    }
    let mut header_text = header_line(header).into_bytes();
    header_text.push(b'\n');
    let mut content = encode(options.compression, &header_text, &path)?;
    content.extend_from_slice(&batch);
    publish_new(&path, &content)
}

fn load(options: &JsonlOptions, id: &str) -> Result<Option<StoredLog<TornTail>>, BackendError> {
    let Some(found) = find_log(&options.root, id)? else {
        return Ok(None);
    };
    let (bytes, revision) = read_stable(&found.path)?;
    let ReadLog {
        header,
        events,
        torn,
        ..
    } = decode_log(&bytes, found.compression, &found.path)?;
    assert_identity(&options.root, &found, &header, Some(id))?;
    Ok(Some(StoredLog {
        header,
        events,
        revision,
        torn,
    }))
}

#[async_trait]
impl PersistenceBackend for JsonlBackend {
    type TornMarker = TornTail;

    fn name(&self) -> &'static str {
        "jsonl"
    }

    async fn load_stored(&self, id: &str) -> Result<Option<StoredLog<TornTail>>, BackendError> {
        let id = id.to_owned();
        self.blocking(move |options| load(options, &id)).await
    }

    async fn read_stored_revision(&self, id: &str) -> Result<Option<String>, BackendError> {
        let id = id.to_owned();
        self.blocking(move |options| match find_log(&options.root, &id)? {
            Some(found) => revision(&found.path),
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
        torn: Option<TornTail>,
        closers: &[Arc<SessionEvent>],
    ) -> Result<(), BackendError> {
        let header = header.clone();
        let closers = closers.to_vec();
        self.write(move |options| {
            let mut events = Vec::new();
            if let Some(marker) = torn {
                let found = existing_log(options, &header)?;
                truncate_durable(&found.path, marker.truncate_to)?;
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

    async fn list(&self) -> Result<SessionListing, BackendError> {
        self.blocking(|options| {
            let scan = scan(&options.root)?;
            Ok(SessionListing {
                sessions: scan
                    .listed
                    .into_iter()
                    .map(|listed| listed.header)
                    .collect(),
                unreadable: scan.unreadable,
            })
        })
        .await
    }

    async fn list_snapshots(&self) -> Result<SnapshotListing, BackendError> {
        self.blocking(|options| {
            let scan = scan(&options.root)?;
            let mut snapshots = Vec::with_capacity(scan.listed.len());
            for listed in scan.listed {
                if let Some(revision) = revision(&listed.path)? {
                    snapshots.push(PersistenceSnapshot {
                        header: listed.header,
                        revision,
                    });
                }
            }
            Ok(SnapshotListing {
                snapshots,
                unreadable: scan.unreadable,
            })
        })
        .await
    }

    fn storage_paths(&self) -> Vec<(PathBuf, String)> {
        vec![(self.inner.root.clone(), STORE_OWNER.to_owned())]
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
            kind: LocationKind::Jsonl,
            path,
        })
    }

    fn supports_raw_artifacts(&self) -> bool {
        true
    }

    async fn read_raw(&self, id: &str) -> Result<Option<SessionRawArtifact>, BackendError> {
        let id = id.to_owned();
        self.blocking(move |options| {
            let Some(FoundLog { path, compression }) = find_log(&options.root, &id)? else {
                return Ok(None);
            };
            let (bytes, _) = read_stable(&path)?;
            let text = crate::decode::decode_text(&bytes, compression, &path)?;
            let first = text.split('\n').next().unwrap_or_default();
            let header = match parse_header_line(first.as_bytes()) {
                Ok(header) if header.id == id => header,
                Err(problem @ HeaderProblem::ForeignVersion(_)) => {
                    return Err(header_error(&problem, &path));
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
