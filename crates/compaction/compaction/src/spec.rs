//! From ratios to token counts: the pressure threshold and the retained tail of one
//! target (upstream compaction-basic's `resolveCompactSpec`), the numbers range selection
//! works with.

/// How much of the newest surface a compaction keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Retention {
    /// A share of the context window, in (0, 1] (`retainRatio`, default 0.16).
    Ratio(f64),
    /// A fixed token count (`retainTokens`).
    Tokens(u64),
}

/// The token numbers of one target's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactSpec {
    /// Compaction runs when the estimate reaches this (`floor(window × thresholdRatio)`).
    pub threshold_tokens: u64,
    /// The retained tail's price (`retainTokens`, or `floor(window × retainRatio)`).
    pub retain_tokens: u64,
}

/// Why a target's numbers do not make a policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactSpecError {
    /// The context window is not a positive integer.
    #[error("BasicCompactionConfig: contextWindow ({0}) must be a positive integer")]
    ContextWindow(u64),
    /// The retained tail would reach the threshold.
    #[error(
        "BasicCompactionConfig: {target} retainTokens ({retain}) must be less than threshold tokens {threshold}"
    )]
    RetainNotBelowThreshold {
        /// `<provider>/<model>`.
        target: String,
        /// The resolved retained tokens.
        retain: u64,
        /// The resolved threshold.
        threshold: u64,
    },
}

fn scaled(window: u64, ratio: f64) -> u64 {
    // The window is a safe integer and the ratio at most 1, so the product is exact
    // enough to floor as JavaScript does.
    (window as f64 * ratio).floor() as u64
}

impl CompactSpec {
    /// Resolves `threshold_ratio` and `retention` against `context_window` for the
    /// target `<provider>/<model>` named by `target`.
    pub fn resolve(
        context_window: u64,
        threshold_ratio: f64,
        retention: Retention,
        target: &str,
    ) -> Result<Self, CompactSpecError> {
        if context_window == 0 {
            return Err(CompactSpecError::ContextWindow(context_window));
        }
        let threshold_tokens = scaled(context_window, threshold_ratio);
        let retain_tokens = match retention {
            Retention::Tokens(tokens) => tokens,
            Retention::Ratio(ratio) => scaled(context_window, ratio),
        };
        if retain_tokens >= threshold_tokens {
            return Err(CompactSpecError::RetainNotBelowThreshold {
                target: target.to_owned(),
                retain: retain_tokens,
                threshold: threshold_tokens,
            });
        }
        Ok(Self {
            threshold_tokens,
            retain_tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_examples() {
        let defaults = CompactSpec::resolve(1_000_000, 0.8, Retention::Ratio(0.16), "d/m");
        assert_eq!(
            defaults,
            Ok(CompactSpec {
                threshold_tokens: 800_000,
                retain_tokens: 160_000
            })
        );
        let fixed = CompactSpec::resolve(1_000, 0.5, Retention::Tokens(120), "d/m");
        assert_eq!(
            fixed,
            Ok(CompactSpec {
                threshold_tokens: 500,
                retain_tokens: 120
            })
        );
    }

    #[test]
    fn error_texts() {
        let error = CompactSpec::resolve(0, 0.8, Retention::Ratio(0.16), "d/m").err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some("BasicCompactionConfig: contextWindow (0) must be a positive integer")
        );
        let error = CompactSpec::resolve(1_000, 0.5, Retention::Tokens(500), "d/m").err();
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some(
                "BasicCompactionConfig: d/m retainTokens (500) must be less than threshold tokens 500"
            )
        );
    }
}
