//! Shared helpers: stores over a temporary root, and the dsh 0.1.1 fixtures.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_persistence::{Coordinator, CoordinatorOptions, SessionPersistence};
use dsh_persistence_jsonl::{Compression, JsonlBackend, JsonlOptions};

/// A store over `root`: a fresh coordinator each call, as a new process would have.
pub fn store(
    root: &Path,
    compression: Compression,
    pack_chunks: bool,
) -> Arc<Coordinator<JsonlBackend>> {
    let backend = JsonlBackend::new(JsonlOptions {
        root: root.to_path_buf(),
        compression,
        pack_chunks,
    })
    .unwrap();
    Coordinator::new(backend, CoordinatorOptions::default())
}

/// The same store as a trait object.
pub fn dyn_store(
    root: &Path,
    compression: Compression,
    pack_chunks: bool,
) -> Arc<dyn SessionPersistence> {
    store(root, compression, pack_chunks)
}

/// A dsh 0.1.1 fixture log.
pub struct Fixture {
    /// Session id.
    pub id: &'static str,
    /// The file in `tests/fixtures`.
    pub file: &'static str,
    /// Its encoding.
    pub compression: Compression,
}

/// The zstd log (9 frames, packed rows) and the raw JSONL log dsh 0.1.1 wrote.
pub const FIXTURES: [Fixture; 2] = [
    Fixture {
        id: "session-04d35f8c-088e-43c0-8e5d-9e3b111b62fa",
        file: "01-zstd-default-one-bash/session.jsonl.zstd",
        compression: Compression::Zstd,
    },
    Fixture {
        id: "session-02adef58-77ad-4dd6-a853-cf5d434762f2",
        file: "02-raw-jsonl-two-bash/session.jsonl",
        compression: Compression::None,
    },
];

/// Where the fixtures live.
pub fn fixture_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dsh-0.1.1")
        .join(relative)
}

impl Fixture {
    /// Copies the log into `root` where dsh put it (cwd `/srv/dsh-demo`); returns its path.
    pub fn install(&self, root: &Path) -> PathBuf {
        let dir = root.join("--srv-dsh-demo--").join(self.id);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(self.compression.transcript_name());
        std::fs::copy(fixture_path(self.file), &path).unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        #[expect(
            clippy::permissions_set_readonly_false,
            reason = "the copy lives in the test's own temporary directory, so making it writable for all is harmless there"
        )]
        permissions.set_readonly(false);
        std::fs::set_permissions(&path, permissions).unwrap();
        path
    }
}

/// Each event as compact JSON, for byte-for-byte comparisons.
pub fn texts<E: std::borrow::Borrow<dsh_session::SessionEvent>>(events: &[E]) -> Vec<String> {
    events
        .iter()
        .map(|event| dsh_protocol::json::to_js_string(event.borrow()))
        .collect()
}

/// Splits concatenated zstd frames with libzstd's own frame-size function.
pub fn split_frames(bytes: &[u8]) -> Vec<&[u8]> {
    let mut frames = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        let size = zstd::zstd_safe::find_frame_compressed_size(&bytes[offset..]).unwrap();
        frames.push(&bytes[offset..offset + size]);
        offset += size;
    }
    frames
}
