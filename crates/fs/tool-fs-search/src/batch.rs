//! Results gathered per walk thread without contention: each thread fills its own batch and
//! hands it to the shared list once, when its visitor ends.

use std::sync::Mutex;

/// The batches every walk thread handed over.
pub(crate) type Batches<T> = Mutex<Vec<Vec<T>>>;

/// One walk thread's results, added to `into` when dropped.
pub(crate) struct Batch<'a, T> {
    items: Vec<T>,
    into: &'a Batches<T>,
}

impl<'a, T> Batch<'a, T> {
    /// An empty batch for `into`.
    pub(crate) fn new(into: &'a Batches<T>) -> Self {
        Self {
            items: Vec::new(),
            into,
        }
    }

    /// Adds one result.
    pub(crate) fn push(&mut self, item: T) {
        self.items.push(item);
    }
}

impl<T> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        if !self.items.is_empty() {
            dsh_kernel::sync::lock(self.into).push(std::mem::take(&mut self.items));
        }
    }
}

/// Every result handed over, batch by batch.
pub(crate) fn into_batches<T>(batches: Batches<T>) -> Vec<Vec<T>> {
    batches
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
