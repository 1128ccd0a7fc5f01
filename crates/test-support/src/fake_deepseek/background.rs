//! A fake that runs on its own thread, for programs without a tokio runtime.

use super::{FakeDeepSeek, RecordedRequest, Reply};

/// Starts a [`FakeDeepSeek`] on a thread of its own, with a single-threaded tokio runtime of its
/// own, that answers every chat-completions request with `responder(request)`; returns its base
/// URL (`http://127.0.0.1:<port>`). It serves until the process exits.
///
/// ```
/// use dsh_test_support::fake_deepseek::{Reply, serve_in_background};
/// use dsh_test_support::sse;
///
/// let base_url = serve_in_background(|_| Reply::sse(sse::text_events("OK.", 8, None)))?;
/// assert!(base_url.starts_with("http://127.0.0.1:"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn serve_in_background(
    responder: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
) -> std::io::Result<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let server = runtime.block_on(FakeDeepSeek::start())?;
    server.respond_with(responder);
    let base_url = server.base_url();
    std::thread::Builder::new()
        .name("fake-deepseek".to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                // The server's tasks run while this thread waits on it, forever.
                let _server = server;
                std::future::pending::<()>().await;
            });
        })?;
    Ok(base_url)
}
