//! What every provider request says about the harness (dsh's `attribution.ts`), and the
//! check of a supplied API key (`api-key.ts`, `assertUsableApiKey`).

use crate::failure::{LlmFailure, codes};

/// The public identity sent to providers as `User-Agent`: no secrets, paths or per-user
/// facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppIdentity {
    /// The product token (`deepseek-harness`).
    pub product: &'static str,
    /// The version (this build's).
    pub version: &'static str,
    /// The project's home, the `User-Agent` comment.
    pub url: &'static str,
}

/// The harness's identity, the default of every adapter.
pub const APP_IDENTITY: AppIdentity = AppIdentity {
    product: "deepseek-harness",
    version: env!("CARGO_PKG_VERSION"),
    url: "https://github.com/deepseek-ai/deepseek-harness",
};

impl AppIdentity {
    /// `product/version (+url)`.
    pub fn user_agent(&self) -> String {
        format!("{}/{} (+{})", self.product, self.version, self.url)
    }
}

/// The `User-Agent` every provider request must send:
/// `deepseek-harness/<version> (+https://github.com/deepseek-ai/deepseek-harness)`.
pub fn user_agent() -> String {
    APP_IDENTITY.user_agent()
}

/// Why a supplied API key cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKeyRejection {
    /// Nothing but whitespace.
    Empty,
    /// A character outside printable ASCII (space excluded), which no header can carry.
    IllegalCharacters,
}

/// The trimmed key, or why it cannot be used (dsh's `normalizeApiKey`).
pub fn normalize_api_key(raw: &str) -> Result<&str, ApiKeyRejection> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(ApiKeyRejection::Empty);
    }
    if !value.bytes().all(|byte| (0x21..=0x7e).contains(&byte)) {
        return Err(ApiKeyRejection::IllegalCharacters);
    }
    Ok(value)
}

/// The usable key, or `INVALID_CREDENTIAL` naming `reference` (where it came from) and
/// never the key (dsh's `assertUsableApiKey`); `package` prefixes the message.
pub fn usable_api_key<'a>(
    raw: &'a str,
    package: &str,
    reference: &str,
) -> Result<&'a str, LlmFailure> {
    normalize_api_key(raw).map_err(|rejection| {
        let message = match rejection {
            ApiKeyRejection::Empty => format!(
                "{package}: the API key resolved from {reference} is blank; set {reference} to \
                 the raw key (the web Models page writes it) or export it in the launching \
                 environment"
            ),
            ApiKeyRejection::IllegalCharacters => format!(
                "{package}: the API key resolved from {reference} contains characters no HTTP \
                 header can carry; set {reference} to the raw key alone (the web Models page \
                 writes it)"
            ),
        };
        LlmFailure::new(codes::INVALID_CREDENTIAL, message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agent_names_the_harness() {
        assert_eq!(
            user_agent(),
            format!(
                "deepseek-harness/{} (+https://github.com/deepseek-ai/deepseek-harness)",
                env!("CARGO_PKG_VERSION")
            )
        );
    }

    #[test]
    fn keys_are_trimmed_and_checked() {
        assert_eq!(normalize_api_key("  sk-abc\n"), Ok("sk-abc"));
        assert_eq!(normalize_api_key(" \t"), Err(ApiKeyRejection::Empty));
        assert_eq!(
            normalize_api_key("sk-ä"),
            Err(ApiKeyRejection::IllegalCharacters)
        );
        assert_eq!(
            normalize_api_key("sk a"),
            Err(ApiKeyRejection::IllegalCharacters)
        );
        let failure = usable_api_key("", "dsh-llm-deepseek", "DEEPSEEK_API_KEY").unwrap_err();
        assert_eq!(failure.code, "INVALID_CREDENTIAL");
        assert!(
            failure.message.starts_with(
                "dsh-llm-deepseek: the API key resolved from DEEPSEEK_API_KEY is blank"
            )
        );
    }
}
