//! [`SqliteBackend`]: the persistence hooks over one SQLite database.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_kernel::sync::lock;
use dsh_persistence::{
    BackendError, PersistenceBackend, SessionListing, SnapshotListing, StoredLog,
};
use dsh_session::{SessionEvent, SessionHeader};

use crate::path_checks::DatabasePath;
use crate::store::{SqliteOptions, Store};

/// dsh 0.1's SQLite backend: every session in one database of schema 17.
#[derive(Clone)]
pub struct SqliteBackend {
    store: Arc<Mutex<Store>>,
}

impl std::fmt::Debug for SqliteBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteBackend")
            .field("path", &lock(&self.store).options().path)
            .finish()
    }
}

impl SqliteBackend {
    /// A backend over `options`. An existing database file and its directory are checked now
    /// (owner, permissions, no symbolic link); the database itself opens on first use.
    pub fn new(options: SqliteOptions) -> Result<Self, BackendError> {
        Ok(Self {
            store: Arc::new(Mutex::new(Store::new(options)?)),
        })
    }

    /// The configured options.
    pub fn options(&self) -> SqliteOptions {
        lock(&self.store).options().clone()
    }

    /// Runs a read on the blocking pool.
    async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Store) -> Result<T, BackendError> + Send + 'static,
    ) -> Result<T, BackendError> {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || work(&mut lock(&store)))
            .await
            .map_err(|error| BackendError::Invalid(format!("a storage task failed: {error}")))?
    }

    /// Runs a short write (one transaction and its sync). On a multi-threaded runtime it runs
    /// on the calling worker, which saves the hand-off to the blocking pool on every append;
    /// on a single-threaded runtime it goes to the blocking pool.
    async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Store) -> Result<T, BackendError> + Send + 'static,
    ) -> Result<T, BackendError> {
        let flavor = tokio::runtime::Handle::try_current().map(|handle| handle.runtime_flavor());
        if matches!(flavor, Ok(tokio::runtime::RuntimeFlavor::MultiThread)) {
            return work(&mut lock(&self.store));
        }
        self.read(work).await
    }
}

#[async_trait]
impl PersistenceBackend for SqliteBackend {
    /// The seq of the first row to delete.
    type TornMarker = u64;

    fn storage_paths(&self) -> Vec<(std::path::PathBuf, String)> {
        // The directory, not only the file: SQLite would replay a `-wal` or `-journal`
        // file planted next to the database.
        match &lock(&self.store).options().path {
            DatabasePath::File(file) => file
                .parent()
                .map(|dir| {
                    let owner = format!("the directory of the session database {}", file.display());
                    vec![(dir.to_path_buf(), owner)]
                })
                .unwrap_or_default(),
            DatabasePath::Memory => Vec::new(),
        }
    }

    fn name(&self) -> &'static str {
        "sqlite"
    }

    async fn load_stored(&self, id: &str) -> Result<Option<StoredLog<u64>>, BackendError> {
        let id = id.to_owned();
        self.read(move |store| store.load(&id)).await
    }

    async fn load_stored_from(
        &self,
        id: &str,
        from_seq: u64,
    ) -> Result<Option<(SessionHeader, Vec<SessionEvent>)>, BackendError> {
        let id = id.to_owned();
        self.read(move |store| store.load_from(&id, from_seq)).await
    }

    async fn read_stored_revision(&self, id: &str) -> Result<Option<String>, BackendError> {
        let id = id.to_owned();
        self.read(move |store| store.revision(&id)).await
    }

    async fn append_batch(
        &self,
        header: &SessionHeader,
        events: &[Arc<SessionEvent>],
        materialized: bool,
    ) -> Result<(), BackendError> {
        let (header, events) = (header.clone(), events.to_vec());
        self.write(move |store| store.append(&header, &events, materialized))
            .await
    }

    async fn commit_repair(
        &self,
        header: &SessionHeader,
        torn: Option<u64>,
        closers: &[Arc<SessionEvent>],
    ) -> Result<(), BackendError> {
        let (header, closers) = (header.clone(), closers.to_vec());
        self.write(move |store| store.repair(&header, torn, &closers))
            .await
    }

    async fn list(&self) -> Result<SessionListing, BackendError> {
        let SnapshotListing {
            snapshots,
            unreadable,
        } = self.list_snapshots().await?;
        Ok(SessionListing {
            sessions: snapshots
                .into_iter()
                .map(|snapshot| snapshot.header)
                .collect(),
            unreadable,
        })
    }

    async fn list_snapshots(&self) -> Result<SnapshotListing, BackendError> {
        self.read(Store::list).await
    }

    async fn check_writable(&self) -> Result<(), BackendError> {
        self.read(|store| store.check_writable()).await
    }

    async fn close(&self) {
        lock(&self.store).close();
    }
}
