//! One-time login codes: what the browser opener is given instead of the token.
//!
//! An opener's command line is readable by every local process (`ps`, `/proc/*/cmdline`)
//! and a browser it starts keeps it for its whole life, so it never holds the token. It gets
//! `/#login=<code>`; the page takes the code out of the address bar and trades it once at
//! `POST /api/login` for the token. A code is random (256 bits), good for one exchange and
//! for [`LOGIN_CODE_TTL`], compared in constant time, and lives only in memory.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use dsh_kernel::sync::lock;
use serde::Deserialize;
use serde_json::json;

use crate::secret::{random_hex, same};
use crate::server::json_error;

/// Where a page trades a login code for the token (the one API path that needs no token).
pub const LOGIN_PATH: &str = "/api/login";

/// How long a login code may be traded (60 s).
pub const LOGIN_CODE_TTL: Duration = Duration::from_secs(60);

/// At most this many codes wait at once; issuing another forgets the oldest.
const MAX_PENDING: usize = 16;

/// The refusal of a code that is not (or no longer) good.
const REFUSED: &str = "login code refused: a code signs in once, within 60 seconds of being \
     issued; open the URL dsh web printed (it ends in #token=...)";

/// The codes issued and not yet traded.
#[derive(Debug)]
pub(crate) struct LoginCodes {
    ttl: Duration,
    pending: Mutex<Vec<Pending>>,
}

#[derive(Debug)]
struct Pending {
    code: String,
    expires: Instant,
}

impl LoginCodes {
    /// Codes good for `ttl` each.
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            pending: Mutex::default(),
        }
    }

    fn pending(&self) -> MutexGuard<'_, Vec<Pending>> {
        lock(&self.pending)
    }

    /// A fresh code, good once until `ttl` from now.
    pub(crate) fn issue(&self) -> Result<String, String> {
        self.issue_at(Instant::now())
    }

    fn issue_at(&self, now: Instant) -> Result<String, String> {
        let code = random_hex("webserver: cannot make a login code")?;
        let mut pending = self.pending();
        pending.retain(|entry| entry.expires > now);
        if pending.len() >= MAX_PENDING {
            pending.remove(0);
        }
        pending.push(Pending {
            code: code.clone(),
            expires: now + self.ttl,
        });
        Ok(code)
    }

    /// Whether `candidate` is a code still good now; it is spent either way it matched.
    pub(crate) fn redeem(&self, candidate: &str) -> bool {
        self.redeem_at(candidate, Instant::now())
    }

    fn redeem_at(&self, candidate: &str, now: Instant) -> bool {
        let mut pending = self.pending();
        pending.retain(|entry| entry.expires > now);
        // Every code is compared (no early exit), each in constant time.
        let matched = pending
            .iter()
            .enumerate()
            .fold(None, |found, (index, entry)| {
                if same(entry.code.as_bytes(), candidate.as_bytes()) {
                    Some(index)
                } else {
                    found
                }
            });
        match matched {
            Some(index) => {
                pending.swap_remove(index);
                true
            }
            None => false,
        }
    }
}

/// `POST /api/login` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    /// The code from the `#login=` fragment.
    code: String,
}

/// What the login route needs.
#[derive(Debug, Clone)]
struct Desk {
    codes: Arc<LoginCodes>,
    token: Arc<str>,
}

/// The route trading a code for `token`: `200 {"token": …}`, or `403` with why.
pub(crate) fn router(codes: Arc<LoginCodes>, token: &str) -> Router {
    Router::new()
        .route(LOGIN_PATH, post(login))
        .with_state(Desk {
            codes,
            token: Arc::from(token),
        })
}

async fn login(State(desk): State<Desk>, body: Result<Json<LoginBody>, JsonRejection>) -> Response {
    let Json(body) = match body {
        Ok(body) => body,
        Err(rejection) => return json_error(rejection.status(), &rejection.body_text()),
    };
    if !desk.codes.redeem(&body.code) {
        return json_error(StatusCode::FORBIDDEN, REFUSED);
    }
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(json!({"token": &*desk.token})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_good_once_and_only_until_it_expires() {
        let codes = LoginCodes::new(Duration::from_secs(60));
        let start = Instant::now();
        let first = codes.issue_at(start).unwrap_or_default();
        let second = codes.issue_at(start).unwrap_or_default();
        assert_eq!(first.len(), 64, "256 bits as hex");
        assert_ne!(first, second);
        assert!(!codes.redeem_at("", start));
        assert!(
            !codes.redeem_at(&first[..63], start),
            "a prefix is not the code"
        );
        assert!(codes.redeem_at(&first, start + Duration::from_secs(59)));
        assert!(
            !codes.redeem_at(&first, start + Duration::from_secs(59)),
            "spent"
        );
        assert!(
            !codes.redeem_at(&second, start + Duration::from_secs(60)),
            "expired"
        );
    }

    #[test]
    fn only_the_newest_codes_wait() {
        let codes = LoginCodes::new(Duration::from_secs(60));
        let now = Instant::now();
        let issued: Vec<String> = (0..=MAX_PENDING)
            .map(|_| codes.issue_at(now).unwrap_or_default())
            .collect();
        assert!(
            !codes.redeem_at(&issued[0], now),
            "the oldest was forgotten"
        );
        assert!(codes.redeem_at(&issued[MAX_PENDING], now));
    }
}
