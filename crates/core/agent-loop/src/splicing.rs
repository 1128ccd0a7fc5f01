//! Which inboxes this thread is changing: a `session/event` listener of an inbox change's
//! append must not touch the same inbox (it would wait on itself).

use std::cell::RefCell;

thread_local! {
    /// The owners (by address) of the inboxes this thread is splicing.
    static SPLICING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Marks this thread as splicing one owner's inbox until dropped.
pub(crate) struct SplicingMark(usize);

impl SplicingMark {
    /// Marks `owner`'s inbox.
    pub(crate) fn enter<T>(owner: &T) -> Self {
        let key = key(owner);
        SPLICING.with(|stack| stack.borrow_mut().push(key));
        Self(key)
    }

    /// Whether this thread is splicing `owner`'s inbox.
    pub(crate) fn active<T>(owner: &T) -> bool {
        let key = key(owner);
        SPLICING.with(|stack| stack.borrow().contains(&key))
    }
}

fn key<T>(owner: &T) -> usize {
    std::ptr::from_ref(owner) as usize
}

impl Drop for SplicingMark {
    fn drop(&mut self) {
        SPLICING.with(|stack| {
            let mut stack = stack.borrow_mut();
            if let Some(at) = stack.iter().rposition(|key| *key == self.0) {
                stack.remove(at);
            }
        });
    }
}
