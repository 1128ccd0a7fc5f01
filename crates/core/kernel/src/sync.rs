//! Locking a mutex whatever became of the thread that held it before.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex` and returns its guard, also when the mutex is poisoned.
///
/// A mutex is poisoned when a thread panicked while holding its guard. dsh keeps every critical
/// section short and leaves the data under the lock consistent between statements, so what a
/// panicking holder left behind is still usable; the panic itself is reported where it happened
/// (a listener's panic becomes a failure of that listener, a task's panic a join error). Treating
/// the poison as a second failure would instead turn one reported panic into a panic in every
/// later caller, so the poison is ignored and the guard taken as it is.
///
/// ```
/// use std::sync::Mutex;
///
/// let counter = Mutex::new(1);
/// *dsh_kernel::sync::lock(&counter) += 1;
/// assert_eq!(*dsh_kernel::sync::lock(&counter), 2);
/// ```
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
