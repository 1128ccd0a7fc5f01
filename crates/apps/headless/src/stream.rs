//! `--output stream-json`'s writer: session events are queued as lines by the `session/event`
//! listener (which never touches stdout, so a slow reader cannot stall the turn) and written
//! by one task through a buffer that is flushed whenever the queue runs dry.

use std::future::Future;

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{mpsc, oneshot};

/// What the writer task is asked to do.
enum Out {
    /// Write this line (without its newline).
    Line(String),
    /// Flush everything queued before, answer, and stop.
    Close(oneshot::Sender<()>),
}

/// The queueing half: cheap to clone, never blocks.
#[derive(Clone)]
pub(crate) struct Lines {
    queue: mpsc::UnboundedSender<Out>,
}

impl Lines {
    /// Queues `line`. Once the writer is closed the line is dropped.
    pub(crate) fn send(&self, line: String) {
        let _ = self.queue.send(Out::Line(line));
    }

    /// Waits until every line queued before is written and flushed (or the sink failed),
    /// then stops the writer: lines queued later are dropped.
    pub(crate) async fn close(&self) {
        let (done, written) = oneshot::channel();
        if self.queue.send(Out::Close(done)).is_ok() {
            // An error: the writer task is gone (the app is shutting down).
            let _ = written.await;
        }
    }
}

/// A queue of lines and the task that writes them to `sink`, in order, one per line.
///
/// A sink that fails (a reader that went away) stops the writing, not the queue: lines are
/// then dropped, and [`Lines::close`] still returns.
pub(crate) fn line_writer<W>(sink: W) -> (Lines, impl Future<Output = ()> + Send + 'static)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (queue, items) = mpsc::unbounded_channel();
    (Lines { queue }, write_lines(sink, items))
}

async fn write_lines<W: AsyncWrite + Unpin>(sink: W, mut items: mpsc::UnboundedReceiver<Out>) {
    let mut out = BufWriter::new(sink);
    let mut broken = false;
    while let Some(first) = items.recv().await {
        let mut next = Some(first);
        while let Some(item) = next {
            match item {
                Out::Line(mut line) => {
                    if !broken {
                        line.push('\n');
                        broken = out.write_all(line.as_bytes()).await.is_err();
                    }
                }
                Out::Close(done) => {
                    if !broken {
                        let _ = out.flush().await;
                    }
                    let _ = done.send(());
                    return;
                }
            }
            next = items.try_recv().ok();
        }
        // The queue is momentarily empty: what is buffered goes out now.
        if !broken {
            broken = out.flush().await.is_err();
        }
    }
    if !broken {
        let _ = out.flush().await;
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll};
    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn every_line_is_written_in_order_before_close_returns() {
        let (mut reader, sink) = tokio::io::duplex(16);
        let (lines, writer) = line_writer(sink);
        let task = tokio::spawn(writer);
        let expected: Vec<String> = (0..200).map(|n| format!("{{\"seq\":{n}}}")).collect();
        // The reader is not reading yet: queueing must not wait for it.
        for line in &expected {
            lines.send(line.clone());
        }
        let reading = tokio::spawn(async move {
            let mut text = String::new();
            let _ = reader.read_to_string(&mut text).await;
            text
        });
        lines.close().await;
        lines.send("after close".to_owned());
        task.await.unwrap();
        let text = reading.await.unwrap();
        assert_eq!(text, format!("{}\n", expected.join("\n")));
    }

    /// A sink that records what reached it through `flush`.
    #[derive(Clone, Default)]
    struct Recording {
        pending: Arc<Mutex<Vec<u8>>>,
        flushed: Arc<Mutex<Vec<u8>>>,
    }

    impl AsyncWrite for Recording {
        fn poll_write(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.pending.lock().unwrap().extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            let mut pending = self.pending.lock().unwrap();
            self.flushed.lock().unwrap().append(&mut pending);
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.poll_flush(cx)
        }
    }

    #[tokio::test]
    async fn a_line_is_flushed_once_the_queue_runs_dry() {
        let sink = Recording::default();
        let (lines, writer) = line_writer(sink.clone());
        let task = tokio::spawn(writer);
        lines.send("one".to_owned());
        lines.send("two".to_owned());
        tokio::time::timeout(Duration::from_secs(10), async {
            while sink.flushed.lock().unwrap().as_slice() != b"one\ntwo\n" {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        lines.close().await;
        task.await.unwrap();
    }

    /// A sink whose reader went away.
    struct Closed;

    impl AsyncWrite for Closed {
        fn poll_write(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            _buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_reader_that_went_away_stops_nothing() {
        let (lines, writer) = line_writer(Closed);
        let task = tokio::spawn(writer);
        for n in 0..10_000 {
            lines.send(format!("line {n}"));
        }
        tokio::time::timeout(Duration::from_secs(10), lines.close())
            .await
            .unwrap();
        task.await.unwrap();
    }
}
