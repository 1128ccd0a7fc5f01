//! The row config (dsh's keys and defaults), its resolution, and the baseline identity that
//! tells a resumed session whether its logged baseline still fits the configuration.

use dsh_kernel::BoxError;
use serde::Deserialize;
use serde_json::{Number, json};

use crate::paths;

const DEFAULT_PROJECT_ROOT_MARKERS: [&str; 1] = [".git"];
const DEFAULT_INSTRUCTION_FILE_CANDIDATES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
const DEFAULT_LOCAL_INSTRUCTION_FILE_CANDIDATES: [&str; 2] = ["AGENTS.local.md", "CLAUDE.local.md"];
/// The per-file read cap when `maxSourceBytes` is absent (1 MiB).
pub const DEFAULT_MAX_SOURCE_BYTES: u64 = 1_048_576;
/// How dsh labels its default home in display paths.
pub(crate) const DEFAULT_DSH_HOME_DISPLAY: &str = "~/.dsh";
/// How dsh labels any other home in display paths.
pub(crate) const CONFIGURED_DSH_HOME_DISPLAY: &str = "$DSH_HOME";

/// Row config of `dsh-agent-instructions` (dsh's `Config`, camelCase keys).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentInstructionsConfig {
    /// The UTF-8 byte budget of one rendered baseline or update, its frame included
    /// (required; the base bundle sets 65536). Zero or less disables the plugin.
    pub max_bytes: Number,
    /// The per-file read cap (default 1048576); a larger file is left out.
    pub max_source_bytes: Option<Number>,
    /// The harness home holding the user-global `AGENTS.md` (default `$DSH_HOME`, else
    /// `~/.dsh`; `~`, `~/` and `~\` expand to the user's home).
    pub dsh_home: Option<String>,
    /// Entries (files or directories) marking the project root (default `[".git"]`).
    pub project_root_markers: Option<Vec<String>>,
    /// Instruction file names loaded from every directory, in order (default
    /// `["AGENTS.md", "CLAUDE.md"]`). Empty names, `.`, `..` and names with `/` or `\` are
    /// dropped.
    pub instruction_file_candidates: Option<Vec<String>>,
    /// Local overlays loaded after them (default `["AGENTS.local.md", "CLAUDE.local.md"]`;
    /// `[]` disables overlays). Filtered the same way.
    pub local_instruction_file_candidates: Option<Vec<String>>,
}

/// The byte budget as configured: the number as written (for the texts and the identity,
/// printed as JavaScript prints it) and the whole-byte limit it allows.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxBytes(Number);

impl MaxBytes {
    /// A budget of `number`.
    pub fn new(number: Number) -> Self {
        Self(number)
    }

    /// The most bytes a rendering may take; `None` when the budget disables the plugin
    /// (zero or less).
    pub fn limit(&self) -> Option<usize> {
        if let Some(limit) = self.0.as_u64() {
            return usize::try_from(limit).ok().filter(|limit| *limit > 0);
        }
        let value = self.0.as_f64()?;
        if !value.is_finite() || value <= 0.0 {
            return None;
        }
        // A text fits a fractional budget when it fits its whole part.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a positive finite value, floored and saturated by the cast on purpose"
        )]
        let whole = value.floor() as usize;
        Some(whole)
    }

    /// The number as dsh prints it (`String(maxBytes)`).
    pub fn label(&self) -> String {
        dsh_protocol::json::to_js_string(&self.0)
    }

    /// The number itself.
    pub fn number(&self) -> &Number {
        &self.0
    }
}

/// The configuration with defaults applied and the home resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedConfig {
    /// The byte budget.
    pub max_bytes: MaxBytes,
    /// The per-file read cap.
    pub max_source_bytes: u64,
    /// The absolute harness home.
    pub dsh_home: String,
    /// How the home appears in display paths: `~/.dsh` for the default one, else `$DSH_HOME`.
    pub dsh_home_display: String,
    /// The project root markers.
    pub project_root_markers: Vec<String>,
    /// The base candidates, filtered.
    pub instruction_file_candidates: Vec<String>,
    /// The local overlay candidates, filtered.
    pub local_instruction_file_candidates: Vec<String>,
}

impl AgentInstructionsConfig {
    /// A config with only the budget set (every other key at its default).
    pub fn with_max_bytes(max_bytes: u64) -> Self {
        Self {
            max_bytes: Number::from(max_bytes),
            max_source_bytes: None,
            dsh_home: None,
            project_root_markers: None,
            instruction_file_candidates: None,
            local_instruction_file_candidates: None,
        }
    }

    /// Applies the defaults, reading `$DSH_HOME` and the user's home from the environment.
    pub fn resolve(&self) -> Result<ResolvedConfig, BoxError> {
        let env = std::env::var("DSH_HOME").ok();
        let home = std::env::home_dir()
            .and_then(|home| home.to_str().map(str::to_owned))
            .unwrap_or_else(|| "/".to_owned());
        self.resolve_with(env.as_deref(), &home)
    }

    /// Applies the defaults with `env_home` as `$DSH_HOME` and `user_home` as the user's home.
    pub fn resolve_with(
        &self,
        env_home: Option<&str>,
        user_home: &str,
    ) -> Result<ResolvedConfig, BoxError> {
        let max_source_bytes = match &self.max_source_bytes {
            None => DEFAULT_MAX_SOURCE_BYTES,
            Some(number) => positive_integer(number).ok_or_else(|| {
                format!(
                    "agent-instructions: maxSourceBytes must be a positive integer, got {}",
                    dsh_protocol::json::to_js_string(number)
                )
            })?,
        };
        let (dsh_home, dsh_home_display) =
            resolve_dsh_home(self.dsh_home.as_deref(), env_home, user_home);
        Ok(ResolvedConfig {
            max_bytes: MaxBytes::new(self.max_bytes.clone()),
            max_source_bytes,
            dsh_home,
            dsh_home_display,
            project_root_markers: self
                .project_root_markers
                .clone()
                .unwrap_or_else(|| DEFAULT_PROJECT_ROOT_MARKERS.map(str::to_owned).to_vec()),
            instruction_file_candidates: candidates(
                self.instruction_file_candidates.as_deref(),
                &DEFAULT_INSTRUCTION_FILE_CANDIDATES,
            ),
            local_instruction_file_candidates: candidates(
                self.local_instruction_file_candidates.as_deref(),
                &DEFAULT_LOCAL_INSTRUCTION_FILE_CANDIDATES,
            ),
        })
    }
}

impl ResolvedConfig {
    /// The identity of a baseline composed for `cwd` with `project_root`: dsh's
    /// `JSON.stringify({projectRoot, projectRootMarkers, maxBytes, maxSourceBytes,
    /// instructionFileCandidates, localInstructionFileCandidates})`, `projectRoot` relative to
    /// `cwd`. A logged baseline with another identity is replaced.
    pub fn baseline_identity(&self, cwd: &str, project_root: &str) -> String {
        dsh_protocol::json::to_js_string(&json!({
            "projectRoot": paths::relative(cwd, project_root),
            "projectRootMarkers": self.project_root_markers,
            "maxBytes": self.max_bytes.number(),
            "maxSourceBytes": self.max_source_bytes,
            "instructionFileCandidates": self.instruction_file_candidates,
            "localInstructionFileCandidates": self.local_instruction_file_candidates,
        }))
    }

    /// The display path of the user-global file (`~/.dsh/AGENTS.md` or `$DSH_HOME/AGENTS.md`).
    pub fn user_global_display_path(&self) -> String {
        format!(
            "{}/{}",
            self.dsh_home_display,
            crate::render::USER_GLOBAL_FILE
        )
    }
}

fn positive_integer(number: &Number) -> Option<u64> {
    if let Some(value) = number.as_u64() {
        return (value >= 1).then_some(value);
    }
    let value = number.as_f64()?;
    let integral = value.is_finite() && value >= 1.0 && value.fract() == 0.0;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "an integral value of at least one; larger than u64 saturates"
    )]
    let whole = value as u64;
    integral.then_some(whole)
}

/// The candidates of `configured` (else `defaults`) that are plain same-directory file names.
fn candidates(configured: Option<&[String]>, defaults: &[&str]) -> Vec<String> {
    let all: Vec<String> = configured.map_or_else(
        || defaults.iter().map(|name| (*name).to_owned()).collect(),
        <[String]>::to_vec,
    );
    all.into_iter()
        .filter(|name| !matches!(name.as_str(), "" | "." | "..") && !name.contains(['/', '\\']))
        .collect()
}

/// dsh's `resolveDshHome` and `dshHomeDisplay`: `configured`, else a non-blank `env_home`,
/// else `<user_home>/.dsh`; `~`-prefixes expanded, made absolute. Returns the home and its
/// display label.
fn resolve_dsh_home(
    configured: Option<&str>,
    env_home: Option<&str>,
    user_home: &str,
) -> (String, String) {
    let default_home = paths::join(user_home, ".dsh");
    let selected = configured
        .map(str::to_owned)
        .or_else(|| {
            env_home
                .filter(|value| !crate::digest::js_trim(value).is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| default_home.clone());
    let expanded = if selected == "~" {
        user_home.to_owned()
    } else if let Some(rest) = selected
        .strip_prefix("~/")
        .or_else(|| selected.strip_prefix("~\\"))
    {
        paths::join(user_home, rest)
    } else {
        selected
    };
    let home = paths::absolute(&expanded);
    let display = if home == paths::absolute(&default_home) {
        DEFAULT_DSH_HOME_DISPLAY
    } else {
        CONFIGURED_DSH_HOME_DISPLAY
    };
    (home, display.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config(value: serde_json::Value) -> AgentInstructionsConfig {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn defaults_are_dshs() {
        let resolved = config(json!({"maxBytes": 65536}))
            .resolve_with(None, "/home/me")
            .unwrap();
        assert_eq!(resolved.max_bytes.limit(), Some(65536));
        assert_eq!(resolved.max_source_bytes, 1_048_576);
        assert_eq!(resolved.dsh_home, "/home/me/.dsh");
        assert_eq!(resolved.user_global_display_path(), "~/.dsh/AGENTS.md");
        assert_eq!(resolved.project_root_markers, [".git"]);
        assert_eq!(
            resolved.instruction_file_candidates,
            ["AGENTS.md", "CLAUDE.md"]
        );
        assert_eq!(
            resolved.local_instruction_file_candidates,
            ["AGENTS.local.md", "CLAUDE.local.md"]
        );
    }

    #[test]
    fn max_bytes_is_required_and_unknown_keys_are_refused() {
        assert!(serde_json::from_value::<AgentInstructionsConfig>(json!({})).is_err());
        assert!(
            serde_json::from_value::<AgentInstructionsConfig>(json!({"maxBytes": 1, "x": 1}))
                .is_err()
        );
    }

    #[test]
    fn a_budget_of_zero_or_less_disables() {
        for value in [json!(0), json!(-5), json!(-0.5)] {
            let resolved = config(json!({"maxBytes": value}))
                .resolve_with(None, "/h")
                .unwrap();
            assert_eq!(resolved.max_bytes.limit(), None, "{value}");
        }
        // Positive but under a byte: enabled, and nothing fits.
        let tiny = config(json!({"maxBytes": 0.5}))
            .resolve_with(None, "/h")
            .unwrap();
        assert_eq!(tiny.max_bytes.limit(), Some(0));
        let fractional = config(json!({"maxBytes": 100.7}))
            .resolve_with(None, "/h")
            .unwrap();
        assert_eq!(fractional.max_bytes.limit(), Some(100));
        assert_eq!(fractional.max_bytes.label(), "100.7");
    }

    #[test]
    fn max_source_bytes_must_be_a_positive_integer() {
        for value in [json!(0), json!(-1), json!(1.5)] {
            let error = config(json!({"maxBytes": 1, "maxSourceBytes": value}))
                .resolve_with(None, "/h")
                .unwrap_err();
            assert!(error.to_string().contains("maxSourceBytes"), "{error}");
        }
        let resolved = config(json!({"maxBytes": 1, "maxSourceBytes": 2.0}))
            .resolve_with(None, "/h")
            .unwrap();
        assert_eq!(resolved.max_source_bytes, 2);
    }

    #[test]
    fn the_home_is_configured_then_env_then_default() {
        let home = |configured: Option<&str>, env: Option<&str>| {
            let mut config = config(json!({"maxBytes": 1}));
            config.dsh_home = configured.map(str::to_owned);
            let resolved = config.resolve_with(env, "/home/me").unwrap();
            (resolved.dsh_home, resolved.dsh_home_display)
        };
        assert_eq!(
            home(Some("/srv/dsh/"), Some("/env")),
            ("/srv/dsh".into(), "$DSH_HOME".into())
        );
        assert_eq!(
            home(None, Some("/env")),
            ("/env".into(), "$DSH_HOME".into())
        );
        assert_eq!(
            home(None, Some("  ")),
            ("/home/me/.dsh".into(), "~/.dsh".into())
        );
        assert_eq!(
            home(Some("~/.dsh"), None),
            ("/home/me/.dsh".into(), "~/.dsh".into())
        );
        assert_eq!(
            home(Some("~"), None),
            ("/home/me".into(), "$DSH_HOME".into())
        );
        assert_eq!(
            home(Some("~\\x"), None),
            ("/home/me/x".into(), "$DSH_HOME".into())
        );
    }

    #[test]
    fn candidates_that_are_not_file_names_are_dropped() {
        let resolved = config(json!({
            "maxBytes": 1,
            "instructionFileCandidates": ["", ".", "..", "a/b", "a\\b", "RULES.md"],
            "localInstructionFileCandidates": [],
        }))
        .resolve_with(None, "/h")
        .unwrap();
        assert_eq!(resolved.instruction_file_candidates, ["RULES.md"]);
        assert!(resolved.local_instruction_file_candidates.is_empty());
    }

    #[test]
    fn the_identity_is_dshs_json() {
        let resolved = config(json!({"maxBytes": 65536, "projectRootMarkers": [".dsh-project"]}))
            .resolve_with(None, "/h")
            .unwrap();
        assert_eq!(
            resolved.baseline_identity("/ws", "/ws"),
            r#"{"projectRoot":"","projectRootMarkers":[".dsh-project"],"maxBytes":65536,"maxSourceBytes":1048576,"instructionFileCandidates":["AGENTS.md","CLAUDE.md"],"localInstructionFileCandidates":["AGENTS.local.md","CLAUDE.local.md"]}"#
        );
        assert!(
            resolved
                .baseline_identity("/ws/a/b", "/ws")
                .contains(r#""projectRoot":"../..""#)
        );
    }
}
