//! Confinements held on launch threads: one thread per distinct [`Confinement`], built on
//! first use and kept (up to [`CAPACITY`], least recently used first out). Building costs a
//! Landlock ruleset (and, with a port fence, 65,535 port rules: tens of milliseconds);
//! forking from the thread afterwards costs nothing extra, since the child inherits the
//! domain as it is instead of adding a layer to it. One with carve-outs is built again once
//! the mount table changed, so its namespace never misses a newer view of a writable root.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use dsh_kernel::sync::lock;
use dsh_shell::LaunchThread;

use crate::carve::NamespaceMode;
use crate::confine::{Confinement, Enforced};
use crate::filters::HarnessGuard;
use crate::mount_watch::mount_generation;
use crate::powers::keep_memory_private;

/// How many confinements stay held at once. A thread that leaves the set ends once no
/// spawn uses it; what it forked lives on (children are adopted by another thread of this
/// process).
pub const CAPACITY: usize = 16;

/// How many of them may fence ports: each such domain holds 65,535 port rules, about 4 MiB
/// of kernel memory.
pub const FENCED_CAPACITY: usize = 4;

/// A built confinement.
#[derive(Debug, Clone)]
pub struct Held {
    /// The thread to fork on.
    pub thread: Arc<LaunchThread>,
    /// How completely its file accesses are enforced.
    pub enforced: Enforced,
}

type Slot = Arc<OnceLock<Result<Held, String>>>;

/// One held confinement: its key, its thread (once built), and the mount generation it was
/// made at (a carve-out's namespace holds the mount table of that moment).
type Entry = (Confinement, Slot, u64);

/// The held confinements of one executor.
#[derive(Debug, Default)]
pub struct HeldConfinements {
    slots: Mutex<VecDeque<Entry>>,
}

impl HeldConfinements {
    /// The thread holding `confinement`, built now (blocking) if it is not held yet. Two
    /// callers asking for the same new confinement build it once; a failed build is not
    /// kept, so the next call tries again.
    pub fn get(&self, confinement: &Confinement) -> Result<Held, String> {
        let slot = self.slot(confinement);
        let built = slot
            .get_or_init(|| {
                keep_memory_private()?;
                let owned = confinement.clone();
                let guard = owned.guard_harness.then(HarnessGuard::of_harness);
                LaunchThread::start("dsh-confined", move || {
                    let guard = guard.map(HarnessGuard::and_this_thread);
                    owned.apply(NamespaceMode::MountOnly, guard.as_ref())
                })
                .map(|(thread, enforced)| Held { thread, enforced })
            })
            .clone();
        if built.is_err() {
            lock(&self.slots).retain(|(_, kept, _)| !Arc::ptr_eq(kept, &slot));
        }
        built
    }

    /// Whether `confinement` is held and built, and (with carve-outs) built for the current
    /// mount table.
    pub fn is_held(&self, confinement: &Confinement) -> bool {
        let generation = mount_generation();
        lock(&self.slots).iter().any(|(key, slot, made_at)| {
            key == confinement
                && (key.carve_outs.is_empty() || *made_at == generation)
                && matches!(slot.get(), Some(Ok(_)))
        })
    }

    /// The slot of `confinement`, moved to the front (most recently used), made if absent
    /// or if it has carve-outs and the mount table changed since it was made.
    fn slot(&self, confinement: &Confinement) -> Slot {
        let generation = mount_generation();
        let mut slots = lock(&self.slots);
        slots.retain(|(key, _, made_at)| key.carve_outs.is_empty() || *made_at == generation);
        let found = slots.iter().position(|(key, _, _)| key == confinement);
        let entry = match found.and_then(|index| slots.remove(index)) {
            Some(entry) => entry,
            None => (confinement.clone(), Arc::new(OnceLock::new()), generation),
        };
        let slot = Arc::clone(&entry.1);
        slots.push_front(entry);
        slots.truncate(CAPACITY);
        let mut fenced = 0;
        slots.retain(|(key, _, _)| {
            if key.fenced_ports.is_empty() {
                return true;
            }
            fenced += 1;
            fenced <= FENCED_CAPACITY
        });
        slot
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn confinement(root: &str) -> Confinement {
        Confinement {
            read_only: vec![PathBuf::from("/")],
            read_write: vec![PathBuf::from(root)],
            confine_files: true,
            ..Confinement::default()
        }
    }

    #[test]
    fn equal_confinements_share_one_thread_and_failures_are_not_kept() {
        let held = HeldConfinements::default();
        let tmp = confinement("/tmp");
        let first = held.get(&tmp).unwrap();
        let second = held.get(&tmp).unwrap();
        assert!(Arc::ptr_eq(&first.thread, &second.thread));
        assert!(held.is_held(&tmp));
        let missing = confinement("/nonexistent-dsh-held-test");
        let error = held.get(&missing).unwrap_err();
        assert!(error.contains("cannot open rule path"), "{error}");
        assert!(!held.is_held(&missing));
    }

    #[test]
    fn only_a_few_fenced_confinements_stay_held() {
        let held = HeldConfinements::default();
        let fenced = |port: u16| Confinement {
            fenced_ports: vec![port],
            ..confinement("/tmp")
        };
        let plain = confinement("/tmp");
        held.get(&plain).unwrap();
        for port in 0..=u16::try_from(FENCED_CAPACITY).unwrap() {
            held.get(&fenced(40_000 + port)).unwrap();
        }
        assert!(!held.is_held(&fenced(40_000)), "the oldest fenced one left");
        assert!(held.is_held(&fenced(40_001)));
        assert!(held.is_held(&plain), "unfenced ones are not counted");
    }

    #[test]
    fn the_least_recently_used_confinement_leaves_first() {
        let held = HeldConfinements::default();
        let first = confinement("/tmp");
        held.get(&first).unwrap();
        for index in 0..CAPACITY {
            let dir = std::env::temp_dir().join(format!("dsh-held-{}-{index}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            held.get(&confinement(dir.to_str().unwrap())).unwrap();
            std::fs::remove_dir(&dir).unwrap();
        }
        assert!(!held.is_held(&first));
    }
}
