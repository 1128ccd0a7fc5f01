//! The row config of `dsh-tool-fs-search` (dsh's keys and defaults) and its load-time checks.

use serde::Deserialize;

/// The largest `graceMs` dsh accepts (the largest timer delay JavaScript can schedule).
pub const MAX_GRACE_MS: f64 = 2_147_483_647.0;

/// Row config of `dsh-tool-fs-search`, in dsh's camelCase keys.
///
/// Numbers are read as JavaScript reads them (any JSON number) so that [`Self::caps`] can
/// reject a non-integer, zero or negative value with dsh's text rather than a decoding error.
/// In dsh, `stderrMaxBytes` bounds ripgrep's retained stderr and `graceMs` the wait for a
/// stopped ripgrep; in process `stderrMaxBytes` bounds the ripgrep error text a failure quotes
/// ([`crate::stderr`]), and `graceMs` bounds the wait for a stopped search (one blocked in a
/// read that never returns is left behind after it).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolFsSearchConfig {
    /// Whether an over-cap `glob` page is sampled across the top-level entries it reached
    /// instead of showing the oldest paths. Required: a deployment must choose.
    pub sample_over_cap_glob_results: bool,
    /// Paths one `glob` call shows (default 100).
    #[serde(default = "defaults::glob_max_results")]
    pub glob_max_results: f64,
    /// Matches one `grep` call shows (default 250).
    #[serde(default = "defaults::grep_max_matches")]
    pub grep_max_matches: f64,
    /// Bytes of one matched line shown, cut at a UTF-8 boundary (default 2000).
    #[serde(default = "defaults::grep_max_line_bytes")]
    pub grep_max_line_bytes: f64,
    /// Bytes of one result's serialized presentation metadata (default 65536).
    #[serde(default = "defaults::search_meta_max_bytes")]
    pub search_meta_max_bytes: f64,
    /// Bytes of results one search may collect before it fails (default 20000000).
    #[serde(default = "defaults::raw_output_max_bytes")]
    pub raw_output_max_bytes: f64,
    /// dsh's grace before a stopped ripgrep is killed (default 3000, at most 2147483647).
    #[serde(default = "defaults::grace_ms")]
    pub grace_ms: f64,
    /// dsh's cap on ripgrep's retained stderr (default 65536).
    #[serde(default = "defaults::stderr_max_bytes")]
    pub stderr_max_bytes: f64,
    /// The time one call may take before it fails with `TOOL_TIMEOUT` (default 30000).
    #[serde(default = "defaults::timeout_ms")]
    pub timeout_ms: f64,
}

mod defaults {
    pub(super) fn glob_max_results() -> f64 {
        100.0
    }
    pub(super) fn grep_max_matches() -> f64 {
        250.0
    }
    pub(super) fn grep_max_line_bytes() -> f64 {
        2000.0
    }
    pub(super) fn search_meta_max_bytes() -> f64 {
        65536.0
    }
    pub(super) fn raw_output_max_bytes() -> f64 {
        20_000_000.0
    }
    pub(super) fn grace_ms() -> f64 {
        3000.0
    }
    pub(super) fn stderr_max_bytes() -> f64 {
        65536.0
    }
    pub(super) fn timeout_ms() -> f64 {
        30000.0
    }
}

impl ToolFsSearchConfig {
    /// The defaults, with the sampling choice given.
    pub fn new(sample_over_cap_glob_results: bool) -> Self {
        Self {
            sample_over_cap_glob_results,
            glob_max_results: defaults::glob_max_results(),
            grep_max_matches: defaults::grep_max_matches(),
            grep_max_line_bytes: defaults::grep_max_line_bytes(),
            search_meta_max_bytes: defaults::search_meta_max_bytes(),
            raw_output_max_bytes: defaults::raw_output_max_bytes(),
            grace_ms: defaults::grace_ms(),
            stderr_max_bytes: defaults::stderr_max_bytes(),
            timeout_ms: defaults::timeout_ms(),
        }
    }

    /// The checked caps, or dsh's load error (`tool-fs-search: <key> must be a positive
    /// integer`, `tool-fs-search: graceMs must be no greater than 2147483647`), checked in
    /// dsh's order.
    pub fn caps(&self) -> Result<SearchCaps, String> {
        let glob_max_results = positive("globMaxResults", self.glob_max_results)?;
        let grep_max_matches = positive("grepMaxMatches", self.grep_max_matches)?;
        let grep_max_line_bytes = positive("grepMaxLineBytes", self.grep_max_line_bytes)?;
        let meta_max_bytes = positive("searchMetaMaxBytes", self.search_meta_max_bytes)?;
        let raw_output_max_bytes = positive("rawOutputMaxBytes", self.raw_output_max_bytes)?;
        let grace_ms = positive("graceMs", self.grace_ms)?;
        if self.grace_ms > MAX_GRACE_MS {
            return Err(format!(
                "tool-fs-search: graceMs must be no greater than {MAX_GRACE_MS}"
            ));
        }
        let stderr_max_bytes = positive("stderrMaxBytes", self.stderr_max_bytes)?;
        let timeout_ms = positive("timeoutMs", self.timeout_ms)?;
        Ok(SearchCaps {
            sample_over_cap_glob_results: self.sample_over_cap_glob_results,
            glob_max_results: to_usize(glob_max_results),
            grep_max_matches: to_usize(grep_max_matches),
            grep_max_line_bytes: to_usize(grep_max_line_bytes),
            meta_max_bytes: to_usize(meta_max_bytes),
            raw_output_max_bytes: to_usize(raw_output_max_bytes),
            stderr_max_bytes: to_usize(stderr_max_bytes),
            timeout_ms,
            grace_ms,
        })
    }
}

/// `value` as a whole number of at least 1, or dsh's text naming `key`.
fn positive(key: &str, value: f64) -> Result<u64, String> {
    if value.is_finite() && value.fract() == 0.0 && value >= 1.0 {
        // A float-to-int `as` saturates, so a huge integer becomes `u64::MAX`.
        Ok(value as u64)
    } else {
        Err(format!("tool-fs-search: {key} must be a positive integer"))
    }
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// The checked caps both tools run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchCaps {
    /// Sample an over-cap glob page across top-level entries.
    pub sample_over_cap_glob_results: bool,
    /// Paths one `glob` call shows.
    pub glob_max_results: usize,
    /// Matches one `grep` call shows.
    pub grep_max_matches: usize,
    /// Bytes of one matched line shown.
    pub grep_max_line_bytes: usize,
    /// Bytes of one result's serialized metadata.
    pub meta_max_bytes: usize,
    /// Bytes of results one search may collect.
    pub raw_output_max_bytes: usize,
    /// Bytes of ripgrep's error text a failure keeps (the last ones).
    pub stderr_max_bytes: usize,
    /// Milliseconds one call may take.
    pub timeout_ms: u64,
    /// Milliseconds a stopped search is waited for.
    pub grace_ms: u64,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: serde_json::Value) -> Result<ToolFsSearchConfig, String> {
        serde_json::from_value(value).map_err(|error| error.to_string())
    }

    #[test]
    fn defaults_are_dshs() {
        let config = parse(json!({"sampleOverCapGlobResults": false})).unwrap();
        assert_eq!(config, ToolFsSearchConfig::new(false));
        assert_eq!(
            config.caps().unwrap(),
            SearchCaps {
                sample_over_cap_glob_results: false,
                glob_max_results: 100,
                grep_max_matches: 250,
                grep_max_line_bytes: 2000,
                meta_max_bytes: 65536,
                raw_output_max_bytes: 20_000_000,
                stderr_max_bytes: 65536,
                timeout_ms: 30000,
                grace_ms: 3000,
            }
        );
    }

    #[test]
    fn the_sampling_choice_is_required_and_keys_are_closed() {
        let missing = parse(json!({})).unwrap_err();
        assert!(missing.contains("sampleOverCapGlobResults"), "{missing}");
        let unknown = parse(json!({"sampleOverCapGlobResults": true, "globMax": 3})).unwrap_err();
        assert!(unknown.contains("unknown field `globMax`"), "{unknown}");
    }

    #[test]
    fn every_cap_must_be_a_positive_integer() {
        for key in [
            "globMaxResults",
            "grepMaxMatches",
            "grepMaxLineBytes",
            "searchMetaMaxBytes",
            "rawOutputMaxBytes",
            "graceMs",
            "stderrMaxBytes",
            "timeoutMs",
        ] {
            for bad in [json!(0), json!(-1), json!(1.5)] {
                let config = parse(json!({"sampleOverCapGlobResults": true, key: bad})).unwrap();
                assert_eq!(
                    config.caps().unwrap_err(),
                    format!("tool-fs-search: {key} must be a positive integer")
                );
            }
        }
        let config =
            parse(json!({"sampleOverCapGlobResults": true, "graceMs": 2_147_483_648_u64})).unwrap();
        assert_eq!(
            config.caps().unwrap_err(),
            "tool-fs-search: graceMs must be no greater than 2147483647"
        );
        let config =
            parse(json!({"sampleOverCapGlobResults": true, "graceMs": 2_147_483_647_u64})).unwrap();
        assert!(config.caps().is_ok());
    }
}
