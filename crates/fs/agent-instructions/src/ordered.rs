//! Insertion-ordered string-keyed collections, as JavaScript's `Map` and `Set` iterate: the
//! order in which scopes are met decides the order of the rendered changes.

use std::collections::HashMap;

/// A map that iterates in first-insertion order; setting an existing key keeps its place.
#[derive(Debug, Clone)]
pub(crate) struct OrderedMap<V> {
    entries: Vec<(String, V)>,
    index: HashMap<String, usize>,
}

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<V> OrderedMap<V> {
    /// Sets `key` to `value`.
    pub(crate) fn insert(&mut self, key: String, value: V) {
        match self
            .index
            .get(&key)
            .and_then(|at| self.entries.get_mut(*at))
        {
            Some(entry) => entry.1 = value,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        self.index
            .get(key)
            .and_then(|at| self.entries.get(*at))
            .map(|(_, value)| value)
    }

    /// Whether `key` is set.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// The keys, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(key, _)| key.as_str())
    }

    /// The values, in order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, value)| value)
    }

    /// The entries, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries
            .iter()
            .map(|(key, value)| (key.as_str(), value))
    }
}

/// A set that iterates in first-insertion order.
#[derive(Debug, Clone, Default)]
pub(crate) struct OrderedSet(OrderedMap<()>);

impl OrderedSet {
    /// Adds `key` (a no-op when present).
    pub(crate) fn insert(&mut self, key: String) {
        if !self.0.contains_key(&key) {
            self.0.insert(key, ());
        }
    }

    /// Whether `key` is in the set.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// The keys, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_a_key_again_keeps_its_place() {
        let mut map = OrderedMap::default();
        map.insert("b".to_owned(), 1);
        map.insert("a".to_owned(), 2);
        map.insert("b".to_owned(), 3);
        assert_eq!(map.iter().collect::<Vec<_>>(), [("b", &3), ("a", &2)]);
        let mut set = OrderedSet::default();
        for key in ["z", "y", "z"] {
            set.insert(key.to_owned());
        }
        assert_eq!(set.iter().collect::<Vec<_>>(), ["z", "y"]);
    }
}
