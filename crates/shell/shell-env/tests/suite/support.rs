//! A persistence service that only locates sessions.

use std::path::PathBuf;

use async_trait::async_trait;
use dsh_persistence::{
    LocationKind, PersistenceError, PersistenceSnapshot, SessionInspection, SessionLocation,
    SessionPersistence, SessionPreparation, SessionRawArtifact,
};
use dsh_session::{SessionEvent, SessionHeader};

/// Locates every session as `kind` at `/sessions/<id>.<kind>`.
pub struct Locator(pub Option<LocationKind>);

fn absent(id: &str) -> PersistenceError {
    PersistenceError::NotFound(id.to_owned())
}

#[async_trait]
impl SessionPersistence for Locator {
    fn locate(&self, header: &SessionHeader) -> Option<SessionLocation> {
        self.0.map(|kind| {
            let extension = match kind {
                LocationKind::Jsonl => "jsonl",
                LocationKind::Other(name) => name,
            };
            SessionLocation {
                kind,
                path: PathBuf::from(format!("/sessions/{}.{extension}", header.id)),
            }
        })
    }
    fn supports_raw_artifacts(&self) -> bool {
        false
    }
    async fn read_raw(&self, _: &str) -> Result<Option<SessionRawArtifact>, PersistenceError> {
        Ok(None)
    }
    async fn create(&self, _: SessionHeader) -> Result<(), PersistenceError> {
        Ok(())
    }
    async fn append(&self, id: &str, _: Vec<SessionEvent>) -> Result<(), PersistenceError> {
        Err(absent(id))
    }
    async fn prepare(&self, id: &str) -> Result<SessionPreparation, PersistenceError> {
        Err(absent(id))
    }
    async fn load(&self, id: &str) -> Result<SessionInspection, PersistenceError> {
        Err(absent(id))
    }
    async fn inspect(&self, id: &str) -> Result<SessionInspection, PersistenceError> {
        Err(absent(id))
    }
    async fn read_from(&self, id: &str, _: u64) -> Result<Vec<SessionEvent>, PersistenceError> {
        Err(absent(id))
    }
    async fn list(&self) -> Result<Vec<SessionHeader>, PersistenceError> {
        Ok(Vec::new())
    }
    async fn list_snapshots(&self) -> Result<Vec<PersistenceSnapshot>, PersistenceError> {
        Ok(Vec::new())
    }
}
