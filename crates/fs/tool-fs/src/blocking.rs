//! Running the blocking filesystem calls off the async workers.

use std::sync::Arc;

use dsh_fs::{FileSystem, FsError};
use dsh_tools::ToolError;

/// Runs `work` with the filesystem on a blocking thread.
pub async fn on_disk<T: Send + 'static>(
    fs: &Arc<dyn FileSystem>,
    work: impl FnOnce(&dyn FileSystem) -> Result<T, FsError> + Send + 'static,
) -> Result<T, FsError> {
    let fs = Arc::clone(fs);
    tokio::task::spawn_blocking(move || work(fs.as_ref()))
        .await
        .unwrap_or_else(|error| {
            Err(FsError::new(
                dsh_fs::FsErrorCode::IoError,
                format!("the filesystem call did not finish: {error}"),
            ))
        })
}

/// A required non-blank string argument, with dsh's plain error.
pub fn required_path(args: &serde_json::Value, key: &str) -> Result<String, ToolError> {
    match args.get(key).and_then(serde_json::Value::as_str) {
        Some(path) if !path.trim().is_empty() => Ok(path.to_owned()),
        _ => Err(ToolError::new(format!("{key} must be a non-empty string"))),
    }
}
