//! Write-behind for one live session: a fixed window, one write at a time, flush barriers.
//!
//! The first event queued into an empty queue arms one timer of `max_delay`; later events do
//! not reset it (bounded coalescing, not debounce). When it fires, everything pending is
//! written as one batch. A failed batch goes back to the front of the queue, automatic writes
//! pause until the next event, and [`WriteBehind::flush`] retries at once and reports the error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use dsh_kernel::sync::lock;
use dsh_session::SessionEvent;
use futures_util::future::BoxFuture;

use crate::error::PersistenceError;

/// The default window (`DEFAULT_WRITE_BATCH_MAX_DELAY_MS`).
pub const DEFAULT_WRITE_BATCH_MAX_DELAY_MS: u64 = 200;
/// The longest allowed window (`MAX_WRITE_BATCH_DELAY_MS`).
pub const MAX_WRITE_BATCH_DELAY_MS: u64 = 2_147_483_647;

/// Writes one batch durably.
pub type BatchWriter = Arc<
    dyn Fn(Vec<Arc<SessionEvent>>) -> BoxFuture<'static, Result<(), PersistenceError>>
        + Send
        + Sync,
>;

#[derive(Default)]
struct Queue {
    pending: Vec<Arc<SessionEvent>>,
    armed: bool,
    paused: bool,
}

/// The write-behind queue of one session.
pub struct WriteBehind {
    label: String,
    queue: Mutex<Queue>,
    /// Held for the whole of each write: at most one write is in flight.
    writing: tokio::sync::Mutex<()>,
    writer: BatchWriter,
    max_delay: Duration,
    /// Bumped to cancel an armed timer.
    timer_generation: AtomicU64,
}

impl WriteBehind {
    /// A queue for the session `label` that writes through `writer`.
    pub fn new(label: impl Into<String>, max_delay: Duration, writer: BatchWriter) -> Arc<Self> {
        Arc::new(Self {
            label: label.into(),
            queue: Mutex::new(Queue::default()),
            writing: tokio::sync::Mutex::new(()),
            writer,
            max_delay,
            timer_generation: AtomicU64::new(0),
        })
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        lock(&self.queue)
    }

    /// Events waiting to be written.
    pub fn pending_len(&self) -> usize {
        self.queue().pending.len()
    }

    /// Queues `event`; arms the window if the queue was empty or paused after a failure.
    pub fn enqueue(self: &Arc<Self>, event: Arc<SessionEvent>) {
        let arm = {
            let mut queue = self.queue();
            let arm = (queue.pending.is_empty() || queue.paused) && !queue.armed;
            queue.pending.push(event);
            if arm {
                queue.armed = true;
                queue.paused = false;
            }
            arm
        };
        if arm {
            self.arm();
        }
    }

    fn arm(self: &Arc<Self>) {
        let generation = self.timer_generation.load(Ordering::SeqCst);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(session = %self.label, "no async runtime: events wait for an explicit flush");
            self.queue().armed = false;
            return;
        };
        let weak: Weak<Self> = Arc::downgrade(self);
        let delay = self.max_delay;
        runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            if let Some(this) = weak.upgrade()
                && this.timer_generation.load(Ordering::SeqCst) == generation
            {
                this.queue().armed = false;
                this.write_in_background().await;
            }
        });
    }

    async fn write_in_background(&self) {
        let _writing = self.writing.lock().await;
        let batch = std::mem::take(&mut self.queue().pending);
        if batch.is_empty() {
            return;
        }
        if let Err(error) = self.write(batch).await {
            let mut queue = self.queue();
            if !queue.paused {
                queue.paused = true;
                drop(queue);
                tracing::error!(
                    session = %self.label,
                    "background write for session {} failed (buffered events retained): {error}",
                    self.label
                );
            }
        }
    }

    /// Writes `batch`; on failure puts it back in front of the pending events.
    async fn write(&self, batch: Vec<Arc<SessionEvent>>) -> Result<(), PersistenceError> {
        match (self.writer)(batch.clone()).await {
            Ok(()) => Ok(()),
            Err(error) => {
                let mut queue = self.queue();
                let later = std::mem::take(&mut queue.pending);
                queue.pending = batch;
                queue.pending.extend(later);
                Err(error)
            }
        }
    }

    /// Writes everything queued so far, including events queued while flushing, and returns
    /// once it is durable. Cancels the armed window.
    pub async fn flush(&self) -> Result<(), PersistenceError> {
        self.timer_generation.fetch_add(1, Ordering::SeqCst);
        self.queue().armed = false;
        loop {
            let _writing = self.writing.lock().await;
            let batch = std::mem::take(&mut self.queue().pending);
            if batch.is_empty() {
                return Ok(());
            }
            if let Err(error) = self.write(batch).await {
                self.queue().paused = true;
                return Err(error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use serde_json::json;

    use super::*;

    fn event(seq: u64) -> Arc<SessionEvent> {
        Arc::new(SessionEvent::new("plugin/x", seq, 0, json!({})))
    }

    type Log = Arc<Mutex<Vec<Vec<u64>>>>;

    fn recorder(fail: Arc<AtomicBool>) -> (BatchWriter, Log) {
        let log: Log = Arc::default();
        let sink = Arc::clone(&log);
        let writer: BatchWriter = Arc::new(move |batch| {
            let sink = Arc::clone(&sink);
            let fail = Arc::clone(&fail);
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                if fail.load(Ordering::SeqCst) {
                    return Err(PersistenceError::Invalid("disk full".into()));
                }
                sink.lock()
                    .unwrap()
                    .push(batch.iter().map(|e| e.seq).collect());
                Ok(())
            })
        });
        (writer, log)
    }

    #[tokio::test(start_paused = true)]
    async fn twenty_events_ten_ms_apart_make_one_batch() {
        let (writer, log) = recorder(Arc::default());
        let queue = WriteBehind::new("s", Duration::from_millis(200), writer);
        for seq in 0..20 {
            queue.enqueue(event(seq));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(*log.lock().unwrap(), vec![(0..20).collect::<Vec<_>>()]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_window_is_fixed_not_reset_by_later_events() {
        let (writer, log) = recorder(Arc::default());
        let queue = WriteBehind::new("s", Duration::from_millis(200), writer);
        for seq in 0..30 {
            queue.enqueue(event(seq));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let batches = log.lock().unwrap().clone();
        assert_eq!(batches.len(), 2, "{batches:?}");
        assert_eq!(batches[0].first(), Some(&0));
        assert_eq!(batches.concat(), (0..30).collect::<Vec<_>>());
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_is_written_before_the_window_closes() {
        let (writer, log) = recorder(Arc::default());
        let queue = WriteBehind::new("s", Duration::from_millis(200), writer);
        queue.enqueue(event(0));
        tokio::time::sleep(Duration::from_millis(199)).await;
        assert!(log.lock().unwrap().is_empty());
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(*log.lock().unwrap(), vec![vec![0]]);
    }

    #[tokio::test(start_paused = true)]
    async fn flush_writes_at_once_and_cancels_the_window() {
        let (writer, log) = recorder(Arc::default());
        let queue = WriteBehind::new("s", Duration::from_millis(200), writer);
        queue.enqueue(event(0));
        queue.enqueue(event(1));
        queue.flush().await.unwrap();
        assert_eq!(*log.lock().unwrap(), vec![vec![0, 1]]);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(log.lock().unwrap().len(), 1);
        queue.flush().await.unwrap();
        assert_eq!(
            log.lock().unwrap().len(),
            1,
            "an empty flush writes nothing"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn failed_batches_are_kept_in_order_and_retried() {
        let fail = Arc::new(AtomicBool::new(true));
        let (writer, log) = recorder(Arc::clone(&fail));
        let queue = WriteBehind::new("s", Duration::from_millis(200), writer);
        queue.enqueue(event(0));
        queue.enqueue(event(1));
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(queue.pending_len(), 2, "the failed batch is retained");
        queue.enqueue(event(2));
        assert!(
            queue.flush().await.is_err(),
            "an explicit flush reports the failure"
        );
        fail.store(false, Ordering::SeqCst);
        queue.enqueue(event(3));
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(*log.lock().unwrap(), vec![vec![0, 1, 2, 3]]);
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_flushes_share_the_work() {
        let (writer, log) = recorder(Arc::default());
        let queue = WriteBehind::new("s", Duration::from_millis(200), writer);
        for seq in 0..5 {
            queue.enqueue(event(seq));
        }
        let (a, b) = tokio::join!(queue.flush(), queue.flush());
        a.unwrap();
        b.unwrap();
        assert_eq!(log.lock().unwrap().concat(), (0..5).collect::<Vec<_>>());
        assert_eq!(log.lock().unwrap().len(), 1);
    }
}
