//! Secrets from the OS's generator (through `ring`): the per-launch token and the one-time
//! login codes, hex-encoded so they fit a header, a URL fragment and JSON unchanged.

use ring::rand::SecureRandom as _;

/// How many random bytes a secret holds (256 bits; 64 hex digits).
pub(crate) const SECRET_BYTES: usize = 32;

/// A fresh secret of [`SECRET_BYTES`] random bytes, as lowercase hex; the error says what
/// failed, in words that name the caller (`what`).
pub(crate) fn random_hex(what: &str) -> Result<String, String> {
    let mut bytes = [0_u8; SECRET_BYTES];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| format!("{what}: the OS random generator failed"))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Whether `a` and `b` are equal, in time that does not depend on where they differ.
/// (Only the lengths, which are public, may end it early.)
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_fresh_64_hex_digits() {
        let (a, b) = (
            random_hex("test").unwrap_or_default(),
            random_hex("test").unwrap_or_default(),
        );
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|byte| byte.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn comparison_needs_equal_length_and_bytes() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"a"));
    }
}
