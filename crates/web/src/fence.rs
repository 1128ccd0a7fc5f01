//! The checks every request passes before a route runs: the Host header (DNS-rebinding
//! defence), the per-launch token on `/api/`, and the Origin of browser requests (no other
//! site may drive the API, and there is no CORS).

use axum::http::{HeaderMap, Method, StatusCode, header};

/// The header a client sends the token in (or `Authorization: Bearer <token>`).
pub const TOKEN_HEADER: &str = "x-dsh-token";
/// The cookie the browser UI keeps the token in is `dsh_token_<port>`: browsers share
/// cookies between the ports of one host, so two servers must not overwrite each other's.
pub fn token_cookie(port: u16) -> String {
    format!("dsh_token_{port}")
}

/// Who may talk to the server.
#[derive(Debug, Clone)]
pub struct Fence {
    /// `127.0.0.1:<port>` and `localhost:<port>`, lowercase.
    own: Vec<String>,
    /// The token cookie's name ([`token_cookie`]).
    cookie: String,
    /// `--trusted-host` entries, lowercase: `host:port` matches exactly, `host` any port.
    trusted: Vec<String>,
    token: String,
}

/// Why a request was refused: status and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 403.
    pub status: StatusCode,
    /// What failed and what to do.
    pub message: String,
}

fn refuse(message: impl Into<String>) -> Refusal {
    Refusal {
        status: StatusCode::FORBIDDEN,
        message: message.into(),
    }
}

impl Fence {
    /// The fence of a server on `port` with `token`, also accepting `trusted` authorities.
    pub fn new(port: u16, trusted: &[String], token: String) -> Self {
        Self {
            own: vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            cookie: token_cookie(port),
            trusted: trusted
                .iter()
                .map(|entry| entry.trim().to_ascii_lowercase())
                .collect(),
            token,
        }
    }

    /// The per-launch token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether `candidate` is the token.
    pub fn is_token(&self, candidate: &str) -> bool {
        same(candidate.as_bytes(), self.token.as_bytes())
    }

    /// The name of the cookie that carries the token.
    pub fn cookie_name(&self) -> &str {
        &self.cookie
    }

    fn allowed_authority(&self, authority: &str) -> bool {
        let authority = authority.trim().to_ascii_lowercase();
        if self.own.contains(&authority) {
            return true;
        }
        let host = authority
            .rsplit_once(':')
            .filter(|(_, port)| port.bytes().all(|byte| byte.is_ascii_digit()))
            .map_or(authority.as_str(), |(host, _)| host);
        self.trusted
            .iter()
            .any(|entry| *entry == authority || (!entry.contains(':') && entry == host))
    }

    /// Checks one request; `Ok` lets it through to the routes.
    pub fn check(&self, method: &Method, path: &str, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        if !self.allowed_authority(host) {
            return Err(refuse(format!(
                "forbidden host {host:?}: this server answers only to {} (add others with \
                 --trusted-host)",
                self.own.join(" and ")
            )));
        }
        let origin = headers
            .get(header::ORIGIN)
            .and_then(|value| value.to_str().ok());
        if let Some(origin) = origin {
            let authority = origin.strip_prefix("http://").unwrap_or_default();
            if authority.is_empty() || !self.allowed_authority(authority) {
                return Err(refuse(format!(
                    "forbidden origin {origin:?}: only pages served by this server may call it"
                )));
            }
        }
        if !path.starts_with("/api/") && path != "/api" {
            return Ok(());
        }
        let header_token = headers
            .get(TOKEN_HEADER)
            .and_then(|value| value.to_str().ok())
            .or_else(|| {
                headers
                    .get(header::AUTHORIZATION)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.strip_prefix("Bearer "))
            });
        let cookie_token = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|cookies| cookies.split(';'))
            .filter_map(|cookie| cookie.trim().split_once('='))
            .find(|(name, _)| *name == self.cookie)
            .map(|(_, value)| value);
        let state_changing = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        // A cookie rides along with any browser request, so a state-changing one must come
        // from one of our pages (an Origin) or carry the token where no form can: a header.
        let token = match (header_token, cookie_token) {
            (Some(token), _) => Some(token),
            (None, Some(token)) if !state_changing || origin.is_some() => Some(token),
            _ => None,
        };
        match token {
            Some(token) if self.is_token(token) => Ok(()),
            Some(_) => Err(refuse(
                "wrong token: use the URL dsh web printed for this launch",
            )),
            None => Err(refuse(format!(
                "missing token: send the {TOKEN_HEADER} header (or open the URL dsh web printed)"
            ))),
        }
    }
}

/// Compares in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn fence() -> Fence {
        Fence::new(
            3080,
            &["dev.test".to_owned(), "box.test:9000".to_owned()],
            "t0k".to_owned(),
        )
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                *name,
                HeaderValue::from_str(value).unwrap_or(HeaderValue::from_static("")),
            );
        }
        map
    }

    #[test]
    fn hosts_are_ours_or_trusted() {
        let fence = fence();
        for host in [
            "127.0.0.1:3080",
            "LOCALHOST:3080",
            "dev.test",
            "dev.test:1",
            "box.test:9000",
        ] {
            assert!(
                fence
                    .check(&Method::GET, "/", &headers(&[("host", host)]))
                    .is_ok(),
                "{host}"
            );
        }
        for host in ["evil.test", "127.0.0.1:3081", "box.test:9001", ""] {
            let refused = fence.check(&Method::GET, "/", &headers(&[("host", host)]));
            assert_eq!(
                refused.map_err(|r| r.status),
                Err(StatusCode::FORBIDDEN),
                "{host}"
            );
        }
    }

    #[test]
    fn the_api_needs_the_token_and_state_changes_need_an_origin_or_the_header() {
        let fence = fence();
        let host = ("host", "127.0.0.1:3080");
        let get = |pairs: &[(&'static str, &str)]| {
            fence.check(&Method::GET, "/api/sessions", &headers(pairs))
        };
        let post = |pairs: &[(&'static str, &str)]| {
            fence.check(&Method::POST, "/api/agents", &headers(pairs))
        };
        assert!(get(&[host]).is_err());
        assert!(get(&[host, ("x-dsh-token", "nope")]).is_err());
        assert!(get(&[host, ("x-dsh-token", "t0k")]).is_ok());
        assert!(get(&[host, ("authorization", "Bearer t0k")]).is_ok());
        assert!(get(&[host, ("cookie", "a=1; dsh_token_3080=t0k")]).is_ok());
        assert!(
            post(&[host, ("cookie", "dsh_token_3080=t0k")]).is_err(),
            "a cookie alone cannot post"
        );
        assert!(
            post(&[
                host,
                ("cookie", "dsh_token_3080=t0k"),
                ("origin", "http://127.0.0.1:3080")
            ])
            .is_ok()
        );
        assert!(post(&[host, ("x-dsh-token", "t0k")]).is_ok());
        assert!(post(&[host, ("x-dsh-token", "t0k"), ("origin", "http://evil.test")]).is_err());
        assert!(
            get(&[
                host,
                ("cookie", "dsh_token_3080=t0k"),
                ("origin", "https://127.0.0.1:3080")
            ])
            .is_err()
        );
    }
}
