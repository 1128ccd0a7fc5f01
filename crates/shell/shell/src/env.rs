//! The child's environment: the scrubbed parent environment, the terminal overrides, the
//! caller's entries, then the harness's `DSH_*` entries.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// Model-friendly terminal settings every command gets (colours, pagers and interactive
/// terminal features off). A caller's `env` entry overrides them.
pub const ENV_OVERRIDES: [(&str, &str); 4] = [
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
];

/// Parts of names that look like credentials; such parent variables are not passed on
/// (dsh's four, and two more spellings).
const SENSITIVE_PARTS: [&str; 6] = ["KEY", "PASSWORD", "SECRET", "TOKEN", "PASSWD", "CREDENTIAL"];

/// Last words (after the final `_`) of names that look like credentials: `GH_PAT`,
/// `NPM_AUTH`, `DB_PASS`, `MYSQL_PWD`. Only as the last word: `SSH_AUTH_SOCK` names a socket
/// commands need for `git` over SSH.
const SENSITIVE_LAST_WORDS: [&str; 6] = ["AUTH", "PASS", "PAT", "PWD", "COOKIE", "JWT"];

/// Password managers' session variables: `BW_SESSION`, `OP_SESSION_<account>`; and Docker's
/// registry credentials.
const SENSITIVE_NAMES: [&str; 3] = ["BW_SESSION", "OP_SESSION_", "DOCKER_AUTH_CONFIG"];

/// Whether a parent variable is withheld from children: its name looks like a credential
/// ([`is_credential_name`]) or starts with `DSH_` (case-insensitive).
pub fn is_scrubbed_name(name: &OsStr) -> bool {
    let dsh = name
        .as_encoded_bytes()
        .get(..4)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case(b"DSH_"));
    dsh || is_credential_name(name)
}

/// Whether a variable's name looks like a credential (case-insensitive): it contains `KEY`,
/// `PASSWORD`, `SECRET` or `TOKEN` (dsh's pattern), `PASSWD` or `CREDENTIAL`; its last
/// `_`-separated word is `AUTH`, `PASS`, `PAT`, `PWD`, `COOKIE` or `JWT`; or it is a
/// password manager's session (`BW_SESSION`, `OP_SESSION_*`) or `DOCKER_AUTH_CONFIG`.
pub fn is_credential_name(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_uppercase();
    let last_word = upper.rsplit('_').next().unwrap_or_default();
    SENSITIVE_PARTS.iter().any(|part| upper.contains(part))
        || (upper.contains('_') && SENSITIVE_LAST_WORDS.contains(&last_word))
        || SENSITIVE_NAMES.iter().any(|known| upper.starts_with(known))
}

/// The environment of a child: `parent` minus the scrubbed names, then [`ENV_OVERRIDES`],
/// then `env`, then `dsh_env` (which always wins). Explicit entries survive the scrub.
pub fn child_env<I>(
    parent: I,
    env: &BTreeMap<String, String>,
    dsh_env: &BTreeMap<String, String>,
) -> BTreeMap<OsString, OsString>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut merged: BTreeMap<OsString, OsString> = parent
        .into_iter()
        .filter(|(name, _)| !is_scrubbed_name(name))
        .collect();
    let explicit = ENV_OVERRIDES
        .iter()
        .map(|&(name, value)| (name, value))
        .chain(
            env.iter()
                .map(|(name, value)| (name.as_str(), value.as_str())),
        )
        .chain(
            dsh_env
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str())),
        );
    for (name, value) in explicit {
        merged.insert(OsString::from(name), OsString::from(value));
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(name, value)| (OsString::from(name), OsString::from(value)))
            .collect()
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn scrub_matches_dshs_pattern_case_insensitively() {
        for name in [
            "MY_API_KEY",
            "GITHUB_TOKEN",
            "db_password",
            "Client_Secret",
            "keychain",
            "DSH_FOO",
            "dsh_home",
            "DB_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GH_PAT",
            "npm_auth",
            "SMTP_PASS",
            "SESSION_COOKIE",
            "MYSQL_PWD",
            "API_JWT",
            "BW_SESSION",
            "OP_SESSION_my_team",
            "DOCKER_AUTH_CONFIG",
        ] {
            assert!(is_scrubbed_name(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "DSHX",
            "MY_DSH_THING",
            "HTTPS_PROXY",
            "SSH_AUTH_SOCK",
            "NODE_PATH",
            "XAUTHORITY",
            "PAT",
            "PASSTHROUGH_MODE",
            "PWD",
            "OLDPWD",
            "XDG_SESSION_ID",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(!is_scrubbed_name(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn merges_in_order_with_dsh_env_last() {
        let parent = os(&[
            ("PATH", "/bin"),
            ("TERM", "xterm"),
            ("DSH_SESSION_ID", "stale"),
            ("GITHUB_TOKEN", "t"),
            ("PAGER", "less"),
        ]);
        let env = map(&[
            ("TERM", "vt100"),
            ("DSH_X", "from-env"),
            ("MY_TOKEN", "kept"),
        ]);
        let dsh_env = map(&[("DSH_X", "from-dsh"), ("DSH_SESSION_ID", "s1")]);
        let merged = child_env(parent, &env, &dsh_env);
        let merged: BTreeMap<String, String> = merged
            .into_iter()
            .map(|(k, v)| (k.into_string().unwrap(), v.into_string().unwrap()))
            .collect();
        assert_eq!(
            merged,
            map(&[
                ("DSH_SESSION_ID", "s1"),
                ("DSH_X", "from-dsh"),
                ("GIT_PAGER", "cat"),
                ("MY_TOKEN", "kept"),
                ("NO_COLOR", "1"),
                ("PAGER", "cat"),
                ("PATH", "/bin"),
                ("TERM", "vt100"),
            ])
        );
    }
}
