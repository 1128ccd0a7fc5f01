//! On-disk layout of the JSONL backend, as dsh 0.1 writes it (`format.ts`).
//!
//! ```text
//! <root>/<project_key(cwd)>/<encode_segment(id)>/session.jsonl.zstd   (Compression::Zstd)
//! <root>/<project_key(cwd)>/<encode_segment(id)>/session.jsonl        (Compression::None)
//! <root>/_no-cwd/<encode_segment(id)>/session.jsonl[.zstd]            (header has no cwd)
//! ```
//!
//! Both encoders work on UTF-16 code units, exactly like the TypeScript original, so the
//! same session lands in the same directory whichever implementation wrote it.

use std::path::{Path, PathBuf};

/// Project directory name used for sessions whose header has no `cwd`.
pub const NO_CWD_DIR: &str = "_no-cwd";

/// Longest project slug kept by [`project_key`] (the key adds four dashes, giving 255).
const MAX_SLUG_LEN: usize = 251;

/// A path component could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// [`encode_segment`] was given an empty string (e.g. an empty session id).
    #[error("cannot encode an empty path segment")]
    EmptySegment,
    /// [`project_key`] was given an empty project path.
    #[error("cannot encode an empty project path")]
    EmptyProjectPath,
}

/// Physical encoding of a session artifact; one root holds one encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// Concatenated checksummed zstd frames, `session.jsonl.zstd` (dsh's default).
    #[default]
    Zstd,
    /// Plain JSONL, `session.jsonl`.
    None,
}

impl Compression {
    /// The fixed transcript file name inside a session directory for this encoding.
    #[must_use]
    pub fn transcript_name(self) -> &'static str {
        match self {
            Self::Zstd => "session.jsonl.zstd",
            Self::None => "session.jsonl",
        }
    }

    /// The artifact suffix (`.jsonl.zstd` or `.jsonl`), as quoted in dsh's error messages.
    #[must_use]
    pub fn suffix(self) -> &'static str {
        match self {
            Self::Zstd => ".jsonl.zstd",
            Self::None => ".jsonl",
        }
    }

    /// The configuration name of this encoding (`zstd` or `none`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Zstd => "zstd",
            Self::None => "none",
        }
    }

    /// The other encoding, whose artifacts a root of this encoding must refuse.
    #[must_use]
    pub fn opposite(self) -> Self {
        match self {
            Self::Zstd => Self::None,
            Self::None => Self::Zstd,
        }
    }
}

/// Whether a UTF-16 code unit stays literal: `[A-Za-z0-9._-]`.
fn is_safe_unit(unit: u16) -> bool {
    u8::try_from(unit)
        .is_ok_and(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

/// One uppercase hex digit for the low nibble of `n`.
fn hex_digit(n: u16) -> char {
    // The mask keeps the value below 16, so the cast is lossless.
    let n = (n & 0xF) as u8;
    char::from(if n < 10 { b'0' + n } else { b'A' + (n - 10) })
}

/// Append `~XXXX` (four uppercase hex digits) for one code unit.
fn push_escape(out: &mut String, unit: u16) {
    out.push('~');
    out.push(hex_digit(unit >> 12));
    out.push(hex_digit(unit >> 8));
    out.push(hex_digit(unit >> 4));
    out.push(hex_digit(unit));
}

/// Append a safe code unit literally (callers check [`is_safe_unit`] first).
fn push_literal(out: &mut String, unit: u16) {
    if let Ok(b) = u8::try_from(unit) {
        out.push(char::from(b));
    }
}

/// Encode an arbitrary string as one safe path segment, injectively.
///
/// Each UTF-16 code unit in `[A-Za-z0-9._-]` stays literal; every other unit, `~` included,
/// becomes `~XXXX` (uppercase hex). The whole strings `.` and `..` become `~002E` and
/// `~002E~002E`, so the result is never a traversal component. The output only contains
/// `[A-Za-z0-9._~-]`, and distinct inputs always give distinct outputs.
///
/// # Errors
/// [`LayoutError::EmptySegment`] for the empty string.
pub fn encode_segment(raw: &str) -> Result<String, LayoutError> {
    match raw {
        "" => return Err(LayoutError::EmptySegment),
        "." => return Ok("~002E".to_owned()),
        ".." => return Ok("~002E~002E".to_owned()),
        _ => {}
    }
    let mut out = String::with_capacity(raw.len());
    for unit in raw.encode_utf16() {
        if is_safe_unit(unit) {
            push_literal(&mut out, unit);
        } else {
            push_escape(&mut out, unit);
        }
    }
    Ok(out)
}

/// The string whose [`encode_segment`] is `encoded`, such as the session id a session
/// directory is named after; `None` when no string encodes to `encoded` (a name dsh did not
/// write).
pub fn decode_segment(encoded: &str) -> Option<String> {
    match encoded {
        "~002E" => return Some(".".to_owned()),
        "~002E~002E" => return Some("..".to_owned()),
        _ => {}
    }
    let mut units = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'~' {
            let hex = tail.get(..4)?;
            if !hex
                .iter()
                .all(|digit| digit.is_ascii_digit() || (b'A'..=b'F').contains(digit))
            {
                return None;
            }
            units.push(u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            rest = tail.get(4..)?;
        } else {
            units.push(u16::from(first));
            rest = tail;
        }
    }
    let decoded = String::from_utf16(&units).ok()?;
    // Only the one spelling encode_segment writes decodes (no literal `~`, no `~0041`).
    (encode_segment(&decoded).ok()? == encoded).then_some(decoded)
}

/// Build the readable, lossy project directory name for a session's `cwd`.
///
/// A run of `/`, `\` or `:` becomes one `-`; `[A-Za-z0-9._-]` stays literal; every other
/// UTF-16 code unit becomes `~XXXX`. Leading dashes (from separators or literal) are then
/// stripped, an empty slug becomes `root`, the slug is cut to 251 characters (the cut may
/// fall inside a `~XXXX` escape, as in dsh 0.1) and the result is `--<slug>--`, at most
/// 255 characters. Different paths may share a key (`/a/b-c` and `/a-b/c`).
///
/// # Errors
/// [`LayoutError::EmptyProjectPath`] for the empty string.
pub fn project_key(cwd: &str) -> Result<String, LayoutError> {
    if cwd.is_empty() {
        return Err(LayoutError::EmptyProjectPath);
    }
    let mut readable = String::with_capacity(cwd.len() + 4);
    let mut separator_run = false;
    for unit in cwd.encode_utf16() {
        if unit == u16::from(b'/') || unit == u16::from(b'\\') || unit == u16::from(b':') {
            if !separator_run {
                readable.push('-');
            }
            separator_run = true;
        } else {
            if is_safe_unit(unit) {
                push_literal(&mut readable, unit);
            } else {
                push_escape(&mut readable, unit);
            }
            separator_run = false;
        }
    }
    let slug = readable.trim_start_matches('-');
    let slug = if slug.is_empty() { "root" } else { slug };
    // The slug is pure ASCII, so byte and UTF-16 lengths agree and any cut is a char boundary.
    let slug = slug.get(..MAX_SLUG_LEN).unwrap_or(slug);
    Ok(format!("--{slug}--"))
}

/// The project directory under `root`: `<root>/<project_key(cwd)>`, or `<root>/_no-cwd`
/// when the session has no `cwd`.
///
/// # Errors
/// [`LayoutError::EmptyProjectPath`] for `Some("")`.
pub fn project_dir(root: &Path, cwd: Option<&str>) -> Result<PathBuf, LayoutError> {
    match cwd {
        None => Ok(root.join(NO_CWD_DIR)),
        Some(cwd) => Ok(root.join(project_key(cwd)?)),
    }
}

/// The directory owned by one session: `<project_dir(root, cwd)>/<encode_segment(id)>`.
///
/// # Errors
/// [`LayoutError::EmptyProjectPath`] for `Some("")` as `cwd`, [`LayoutError::EmptySegment`]
/// for an empty `id`.
pub fn session_dir(root: &Path, cwd: Option<&str>, id: &str) -> Result<PathBuf, LayoutError> {
    let dir = project_dir(root, cwd)?;
    Ok(dir.join(encode_segment(id)?))
}

/// The session's transcript path: `<session_dir(root, cwd, id)>/session.jsonl[.zstd]`.
///
/// # Errors
/// As [`session_dir`].
pub fn log_path(
    root: &Path,
    cwd: Option<&str>,
    id: &str,
    compression: Compression,
) -> Result<PathBuf, LayoutError> {
    Ok(session_dir(root, cwd, id)?.join(compression.transcript_name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encode_segment_neutralizes_traversal_separators_and_absolute_paths() {
        let cases = [
            ("..", "~002E~002E"),
            (".", "~002E"),
            ("a/b", "a~002Fb"),
            ("/etc/passwd", "~002Fetc~002Fpasswd"),
            ("a\u{0000}b", "a~0000b"),
            ("plain-ID_1.2", "plain-ID_1.2"),
            ("a~b", "a~007Eb"),
            ("...", "..."),
            ("a.", "a."),
            ("é", "~00E9"),
            ("开", "~5F00"),
            // Astral characters escape per UTF-16 unit, as JavaScript sees them.
            ("😀", "~D83D~DE00"),
            ("a b", "a~0020b"),
            ("C:\\x", "C~003A~005Cx"),
        ];
        for (raw, want) in cases {
            assert_eq!(encode_segment(raw).unwrap(), want, "input {raw:?}");
        }
    }

    #[test]
    fn encode_segment_keeps_escape_lookalikes_distinct() {
        assert_ne!(
            encode_segment("~002F").unwrap(),
            encode_segment("/").unwrap()
        );
        assert_eq!(encode_segment("~002F").unwrap(), "~007E002F");
        assert_ne!(
            encode_segment("~002E").unwrap(),
            encode_segment(".").unwrap()
        );
    }

    #[test]
    fn decode_segment_reads_only_what_encode_segment_writes() {
        assert_eq!(decode_segment("a~002Fb").as_deref(), Some("a/b"));
        assert_eq!(decode_segment("~002E~002E").as_deref(), Some(".."));
        assert_eq!(decode_segment("~D83D~DE00").as_deref(), Some("😀"));
        // A safe character spelled as an escape, a lowercase escape, a cut escape, a bare
        // `~`, or a lone surrogate: no id encodes to these.
        for name in ["~0041", "a~002fb", "a~00", "~", "..", "~D83D", "a b"] {
            assert_eq!(decode_segment(name), None, "{name:?}");
        }
    }

    #[test]
    fn encode_segment_rejects_an_empty_id() {
        let err = encode_segment("").unwrap_err();
        assert_eq!(err, LayoutError::EmptySegment);
        assert!(err.to_string().contains("empty"));
    }

    #[test]
    fn project_key_normalizes_project_paths_into_bounded_readable_names() {
        assert_eq!(
            project_key("/Users/qyj/work/deepseek-harness").unwrap(),
            "--Users-qyj-work-deepseek-harness--"
        );
        assert_eq!(
            project_key("/a/b-c").unwrap(),
            project_key("/a-b/c").unwrap()
        );
        assert_eq!(project_key("C:\\work\\agent").unwrap(), "--C-work-agent--");
        assert_eq!(
            project_key("/开发/~agent").unwrap(),
            "--~5F00~53D1-~007Eagent--"
        );
        assert_eq!(project_key("/").unwrap(), "--root--");
        let long = format!("/{}", "x".repeat(1_000));
        assert_eq!(project_key(&long).unwrap().len(), 255);
        let err = project_key("").unwrap_err();
        assert_eq!(err, LayoutError::EmptyProjectPath);
        assert!(err.to_string().contains("empty project path"));
    }

    #[test]
    fn project_key_edge_rules_match_dsh_0_1() {
        let cases = [
            // A run of mixed separators collapses to one dash.
            ("a//b", "--a-b--"),
            ("a/\\:b", "--a-b--"),
            ("/srv/dsh-demo", "--srv-dsh-demo--"),
            // Trailing separators leave a trailing dash.
            ("/srv/", "--srv---"),
            // Leading dashes are stripped whether they came from separators or literals.
            ("-a", "--a--"),
            ("/-/a", "--a--"),
            ("///", "--root--"),
            ("-", "--root--"),
            ("C:", "--C---"),
            // A separator next to a literal dash is not merged with it.
            ("a/-b", "--a--b--"),
            ("a-/b", "--a--b--"),
            // Leading escapes are kept.
            ("~/x", "--~007E-x--"),
            (" ", "--~0020--"),
            ("😀", "--~D83D~DE00--"),
            ("root", "--root--"),
        ];
        for (cwd, want) in cases {
            assert_eq!(project_key(cwd).unwrap(), want, "cwd {cwd:?}");
        }
    }

    #[test]
    fn project_key_truncation_can_cut_an_escape() {
        // 249 literals then `é` (~00E9): the 251-char cut keeps only `~0`.
        let cwd = format!("/{}é", "x".repeat(249));
        let key = project_key(&cwd).unwrap();
        assert_eq!(key, format!("--{}~0--", "x".repeat(249)));
        assert_eq!(key.len(), 255);
        // Exactly 251 slug characters are kept untouched.
        let exact = "y".repeat(251);
        assert_eq!(project_key(&exact).unwrap(), format!("--{exact}--"));
        // Leading dashes are stripped before the cut, not after.
        let dashed = format!("---{}", "z".repeat(300));
        assert_eq!(
            project_key(&dashed).unwrap(),
            format!("--{}--", "z".repeat(251))
        );
    }

    #[test]
    fn compression_names_and_opposites() {
        assert_eq!(Compression::Zstd.transcript_name(), "session.jsonl.zstd");
        assert_eq!(Compression::None.transcript_name(), "session.jsonl");
        assert_eq!(Compression::Zstd.suffix(), ".jsonl.zstd");
        assert_eq!(Compression::None.suffix(), ".jsonl");
        assert_eq!(Compression::Zstd.name(), "zstd");
        assert_eq!(Compression::None.name(), "none");
        assert_eq!(Compression::Zstd.opposite(), Compression::None);
        assert_eq!(Compression::None.opposite(), Compression::Zstd);
        assert_eq!(Compression::default(), Compression::Zstd);
    }

    #[test]
    fn paths_follow_the_dsh_0_1_layout() {
        let root = Path::new("/home/u/.dsh/sessions");
        let id = "session-04d35f8c-088e-43c0-8e5d-9e3b111b62fa";
        assert_eq!(
            log_path(root, Some("/srv/dsh-demo"), id, Compression::Zstd).unwrap(),
            PathBuf::from(format!(
                "/home/u/.dsh/sessions/--srv-dsh-demo--/{id}/session.jsonl.zstd"
            ))
        );
        assert_eq!(
            log_path(root, None, "a/b", Compression::None).unwrap(),
            PathBuf::from("/home/u/.dsh/sessions/_no-cwd/a~002Fb/session.jsonl")
        );
        assert_eq!(
            session_dir(root, None, "..").unwrap(),
            PathBuf::from("/home/u/.dsh/sessions/_no-cwd/~002E~002E")
        );
        assert_eq!(
            project_dir(root, Some("/")).unwrap(),
            PathBuf::from("/home/u/.dsh/sessions/--root--")
        );
        assert_eq!(session_dir(root, None, ""), Err(LayoutError::EmptySegment));
        assert_eq!(
            session_dir(root, Some(""), "x"),
            Err(LayoutError::EmptyProjectPath)
        );
        assert_eq!(
            log_path(root, Some(""), "x", Compression::Zstd),
            Err(LayoutError::EmptyProjectPath)
        );
    }

    #[test]
    fn real_fixture_directory_names() {
        // dsh 0.1.1 wrote this session under `--srv-dsh-demo--/session-04d3...`.
        assert_eq!(project_key("/srv/dsh-demo").unwrap(), "--srv-dsh-demo--");
        let id = "session-04d35f8c-088e-43c0-8e5d-9e3b111b62fa";
        assert_eq!(encode_segment(id).unwrap(), id);
    }

    proptest! {
        #[test]
        fn encode_segment_output_is_path_safe(raw in any::<String>()) {
            prop_assume!(!raw.is_empty());
            let encoded = encode_segment(&raw).unwrap();
            prop_assert!(encoded
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-')));
            prop_assert!(encoded != "." && encoded != "..");
            prop_assert!(!encoded.is_empty());
        }

        #[test]
        fn encode_segment_is_injective(a in any::<String>(), b in any::<String>()) {
            prop_assume!(!a.is_empty() && !b.is_empty() && a != b);
            prop_assert_ne!(encode_segment(&a).unwrap(), encode_segment(&b).unwrap());
        }

        #[test]
        fn encode_segment_is_injective_on_near_collisions(
            a in "[a.~0-9A-F/-]{1,8}",
            b in "[a.~0-9A-F/-]{1,8}",
        ) {
            prop_assume!(a != b);
            prop_assert_ne!(encode_segment(&a).unwrap(), encode_segment(&b).unwrap());
        }

        #[test]
        fn encode_segment_round_trips(raw in any::<String>()) {
            prop_assume!(!raw.is_empty());
            prop_assert_eq!(decode_segment(&encode_segment(&raw).unwrap()), Some(raw));
        }

        #[test]
        fn project_key_is_bounded_and_safe(cwd in any::<String>()) {
            prop_assume!(!cwd.is_empty());
            let key = project_key(&cwd).unwrap();
            prop_assert!(key.len() <= 255 && key.len() >= 5);
            prop_assert!(key.starts_with("--") && key.ends_with("--"));
            let slug = &key[2..key.len() - 2];
            prop_assert!(!slug.starts_with('-'));
            prop_assert!(slug
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-')));
        }
    }
}
