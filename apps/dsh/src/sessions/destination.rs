//! The store `dsh sessions convert` writes to, built from the backend crates directly (not
//! from the profile, whose rows choose the source).

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use dsh_persistence::{Coordinator, CoordinatorOptions, PersistenceError, SessionPersistence};
use dsh_persistence_jsonl::{Compression, JsonlBackend, JsonlOptions};
use dsh_persistence_sqlite::{
    DEFAULT_BUSY_TIMEOUT_MS, DatabasePath, JournalMode, SqliteBackend, SqliteOptions,
};

use crate::args::sessions::StoreFormat;

/// A destination store, open for writing.
pub enum Destination {
    /// One SQLite database.
    Sqlite {
        /// The store.
        store: Arc<Coordinator<SqliteBackend>>,
        /// The database file.
        path: PathBuf,
    },
    /// JSONL logs in zstd frames under a root.
    Jsonl {
        /// The store.
        store: Arc<Coordinator<JsonlBackend>>,
        /// The sessions root.
        root: PathBuf,
    },
}

impl Destination {
    /// Opens a store of `format` at `location` (relative to `cwd`), by default
    /// `$DSH_HOME/sessions.sqlite` or `$DSH_HOME/sessions`. Nothing is created until the
    /// first write.
    pub fn open(
        format: StoreFormat,
        location: Option<&Path>,
        home: &Path,
        cwd: &Path,
    ) -> anyhow::Result<Self> {
        let default = match format {
            StoreFormat::Sqlite => "sessions.sqlite",
            StoreFormat::Jsonl => "sessions",
        };
        let place = match location {
            Some(given) => absolute(cwd, given),
            None => absolute(cwd, &home.join(default)),
        };
        match format {
            StoreFormat::Sqlite => {
                let backend = SqliteBackend::new(SqliteOptions {
                    path: DatabasePath::File(place.clone()),
                    journal_mode: JournalMode::Wal,
                    busy_timeout: Duration::from_millis(DEFAULT_BUSY_TIMEOUT_MS),
                })
                .with_context(|| format!("cannot open {}", place.display()))?;
                Ok(Self::Sqlite {
                    store: Coordinator::new(backend, CoordinatorOptions::default()),
                    path: place,
                })
            }
            StoreFormat::Jsonl => {
                let backend = JsonlBackend::new(JsonlOptions {
                    root: place.clone(),
                    compression: Compression::Zstd,
                    pack_chunks: true,
                })
                .with_context(|| format!("cannot open {}", place.display()))?;
                Ok(Self::Jsonl {
                    store: Coordinator::new(backend, CoordinatorOptions::default()),
                    root: place,
                })
            }
        }
    }

    /// The store, through the persistence seam.
    pub fn store(&self) -> &dyn SessionPersistence {
        match self {
            Self::Sqlite { store, .. } => store.as_ref(),
            Self::Jsonl { store, .. } => store.as_ref(),
        }
    }

    /// What the destination is, for messages: `SQLite database <path>` or
    /// `JSONL root <dir>`.
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite { path, .. } => format!("SQLite database {}", path.display()),
            Self::Jsonl { root, .. } => format!("JSONL root {}", root.display()),
        }
    }

    /// Flushes and closes the store.
    pub async fn close(&self) -> Result<(), PersistenceError> {
        match self {
            Self::Sqlite { store, .. } => store.close().await,
            Self::Jsonl { store, .. } => store.close().await,
        }
    }
}

/// `location` made absolute, a relative one taken from `cwd`.
fn absolute(cwd: &Path, location: &Path) -> PathBuf {
    let joined = if location.is_absolute() {
        location.to_path_buf()
    } else {
        cwd.join(location)
    };
    std::path::absolute(&joined).unwrap_or(joined)
}
