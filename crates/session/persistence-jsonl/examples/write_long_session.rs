//! Writes a long realistic session through the JSONL store, one batch per turn, as a live
//! session would be flushed. Used by `cargo xtask bench` to measure loading it.
//!
//! ```text
//! cargo run --release -p dsh-persistence-jsonl --example write_long_session -- \
//!     <sessions root> <zstd|none> [turns=1000] [id=long-session]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use dsh_persistence::{Coordinator, CoordinatorOptions, SessionPersistence};
use dsh_persistence_jsonl::{Compression, JsonlBackend, JsonlOptions};
use dsh_session::SessionHeader;
use dsh_test_support::turns::long_session_batches;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match write(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "write_long_session: {message}");
            ExitCode::FAILURE
        }
    }
}

fn write(args: &[String]) -> Result<(), String> {
    let [root, compression, rest @ ..] = args else {
        return Err("usage: write_long_session <root> <zstd|none> [turns] [id]".into());
    };
    let compression = match compression.as_str() {
        "zstd" => Compression::Zstd,
        "none" => Compression::None,
        other => return Err(format!("unknown compression {other}")),
    };
    let turns: u64 = rest
        .first()
        .map_or(Ok(1000), |n| n.parse())
        .map_err(|_| "bad turn count")?;
    let id = rest.get(1).map_or("long-session", String::as_str);
    let root = std::path::absolute(PathBuf::from(root)).map_err(|e| e.to_string())?;
    let backend = JsonlBackend::new(JsonlOptions {
        root,
        compression,
        pack_chunks: true,
    })
    .map_err(|e| e.to_string())?;
    let store = Coordinator::new(backend, CoordinatorOptions::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let mut header = SessionHeader::new(id, 1_795_976_398_536).with_cwd("/srv/dsh-demo");
        header.delegation_depth = Some(0);
        store.create(header).await.map_err(|e| e.to_string())?;
        let (preamble, batches) = long_session_batches(turns);
        store
            .append(id, preamble)
            .await
            .map_err(|e| e.to_string())?;
        for batch in batches {
            store.append(id, batch).await.map_err(|e| e.to_string())?;
        }
        Ok(())
    })
}
