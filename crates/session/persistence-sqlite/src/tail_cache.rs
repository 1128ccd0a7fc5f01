//! What a connection remembers of its own last writes, to skip re-reading them.

/// Where each session this connection appended to ends, valid while `PRAGMA data_version`
/// (which changes only when *another* connection commits) still reads `data_version`.
///
/// With it, an append needs neither the tail read nor the schema re-check when nothing else
/// wrote in between: the stale-writer check and the ownership check then hold by induction
/// from the last write, which ran them.
#[derive(Debug, Default)]
pub(crate) struct TailCache {
    data_version: Option<i64>,
    next_seq: std::collections::HashMap<String, u64>,
}

impl TailCache {
    /// The next seq of `id`, if nothing changed since this connection's last write.
    pub fn next_seq(&self, id: &str, data_version: i64) -> Option<u64> {
        (self.data_version == Some(data_version))
            .then(|| self.next_seq.get(id).copied())
            .flatten()
    }

    /// Records a committed write of `id` ending before `next_seq`.
    pub fn remember(&mut self, id: &str, data_version: i64, next_seq: u64) {
        if self.data_version != Some(data_version) {
            self.next_seq.clear();
            self.data_version = Some(data_version);
        }
        self.next_seq.insert(id.to_owned(), next_seq);
    }

    /// Forgets everything (after a failed write, or a repair).
    pub fn clear(&mut self) {
        self.data_version = None;
        self.next_seq.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_answers_only_while_no_other_connection_wrote() {
        let mut cache = TailCache::default();
        assert_eq!(cache.next_seq("a", 1), None);
        cache.remember("a", 1, 10);
        cache.remember("b", 1, 3);
        assert_eq!(cache.next_seq("a", 1), Some(10));
        assert_eq!(cache.next_seq("a", 2), None, "another connection wrote");
        cache.remember("b", 2, 5);
        assert_eq!(
            (cache.next_seq("a", 2), cache.next_seq("b", 2)),
            (None, Some(5))
        );
        cache.clear();
        assert_eq!(cache.next_seq("b", 2), None);
    }
}
