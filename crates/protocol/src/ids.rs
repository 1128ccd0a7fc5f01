//! Ids: random version 4 UUIDs from the operating system's generator.

/// A random (version 4) UUID in its lowercase text form, as dsh's `randomUUID()` gives.
pub fn random_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_lowercase_version_4_uuids_and_differ() {
        let id = random_uuid();
        let parsed = uuid::Uuid::parse_str(&id).expect("a UUID");
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(id, id.to_lowercase());
        assert_eq!(id.len(), 36);
        assert_ne!(id, random_uuid());
    }
}
