//! The HTTP client, built on a thread of its own as soon as the adapter exists: loading the
//! TLS roots takes milliseconds, which a run should spend while it boots, not before its
//! first request.

use std::sync::{Arc, OnceLock};

use dsh_llm::{LlmFailure, codes, user_agent};

type Built = Result<reqwest::Client, String>;

/// A `reqwest::Client` being built in the background.
#[derive(Debug, Clone)]
pub(crate) struct LazyClient {
    cell: Arc<OnceLock<Built>>,
}

impl LazyClient {
    /// Starts building the client on a new thread (or, when no thread can be started, on
    /// first use).
    pub(crate) fn prewarmed() -> Self {
        let cell = Arc::new(OnceLock::new());
        let building = Arc::clone(&cell);
        let started = std::thread::Builder::new()
            .name("dsh-http-client".into())
            .spawn(move || {
                building.get_or_init(build);
            });
        if let Err(error) = started {
            tracing::debug!("building the HTTP client on first use: {error}");
        }
        Self { cell }
    }

    /// The client, waiting (off the async workers) for it if it is still being built.
    pub(crate) async fn get(&self) -> Result<reqwest::Client, LlmFailure> {
        let built = match self.cell.get() {
            Some(built) => built.clone(),
            None => {
                let cell = Arc::clone(&self.cell);
                tokio::task::spawn_blocking(move || cell.get_or_init(build).clone())
                    .await
                    .map_err(|error| error.to_string())
                    .and_then(|built| built)
            }
        };
        built.map_err(|error| {
            LlmFailure::new(
                codes::TRANSPORT,
                format!("cannot build the DeepSeek HTTP client: {error}"),
            )
        })
    }
}

fn build() -> Built {
    // reqwest's rustls backend is built without a provider: ring is ours. Installing fails
    // harmlessly when the process already has a default provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(user_agent())
        .build()
        .map_err(|error| error.to_string())
}
