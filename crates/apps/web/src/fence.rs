//! The checks every request passes before a route runs: the Host header and any authority
//! in the request target (DNS-rebinding defence), the per-launch token on `/api/`, and the
//! Origin of browser requests (no other site may drive the API, and there is no CORS).
//!
//! The token never rides in a cookie: browsers send a host's cookies to all of its ports, so
//! any other server on 127.0.0.1 would receive it. A client sends it in a header; a page's
//! `EventSource`, which cannot set headers, may put it in the query of a `GET`.

use axum::http::{HeaderMap, HeaderName, Method, StatusCode, Uri, header};

use crate::login::LOGIN_PATH;
use crate::secret::same;

/// The header a client sends the token in (or `Authorization: Bearer <token>`).
pub const TOKEN_HEADER: &str = "x-dsh-token";
/// The query parameter a `GET` may carry the token in instead (an `EventSource` URL).
pub const TOKEN_QUERY: &str = "token";

/// Who may talk to the server.
#[derive(Debug, Clone)]
pub struct Fence {
    /// `127.0.0.1:<port>` and `localhost:<port>`, lowercase.
    own: Vec<String>,
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
    fn is_token(&self, candidate: &str) -> bool {
        same(candidate.as_bytes(), self.token.as_bytes())
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

    /// Checks one request; `Ok` lets it through.
    pub fn check(&self, method: &Method, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = single(headers, &header::HOST)?.unwrap_or_default();
        if !self.allowed_authority(host) {
            return Err(refuse(format!(
                "forbidden host {host:?}: this server answers only to {} (add others with \
                 --trusted-host)",
                self.own.join(" and ")
            )));
        }
        // An absolute-form target (`GET http://name/ HTTP/1.1`) names the host that counts.
        if let Some(authority) = uri.authority() {
            let ours =
                uri.scheme_str() == Some("http") && self.allowed_authority(authority.as_str());
            if !ours {
                return Err(refuse(format!(
                    "forbidden request target {uri:?}: this server answers only to {} (add \
                     others with --trusted-host)",
                    self.own.join(" and ")
                )));
            }
        }
        if let Some(origin) = single(headers, &header::ORIGIN)? {
            let authority = origin.strip_prefix("http://").unwrap_or_default();
            if authority.is_empty() || !self.allowed_authority(authority) {
                return Err(refuse(format!(
                    "forbidden origin {origin:?}: only pages served by this server may call it"
                )));
            }
        }
        let path = uri.path();
        if (!path.starts_with("/api/") && path != "/api") || path == LOGIN_PATH {
            // The page trades a login code for the token there; it has none yet.
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
        let reading = matches!(*method, Method::GET | Method::HEAD);
        // A URL can be made to load by any page, so a query token only ever reads.
        let query_token = uri
            .query()
            .filter(|_| reading)
            .into_iter()
            .flat_map(|query| query.split('&'))
            .filter_map(|pair| pair.split_once('='))
            .find(|(name, _)| *name == TOKEN_QUERY)
            .map(|(_, value)| value);
        let token = header_token.or(query_token);
        match token {
            Some(token) if self.is_token(token) => Ok(()),
            Some(_) => Err(refuse(
                "wrong token: use the URL dsh web printed for this launch",
            )),
            None => Err(refuse(format!(
                "missing token: send the {TOKEN_HEADER} header (the page gets it from the URL \
                 dsh web printed)"
            ))),
        }
    }
}

/// The value of a header that may appear at most once (`None` when absent or not text); a
/// second copy is refused, since proxies and servers disagree on which one counts.
fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, Refusal> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(refuse(format!(
            "forbidden request: it has more than one {name} header; send exactly one"
        )));
    }
    Ok(first.and_then(|value| value.to_str().ok()))
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

    fn uri(text: &str) -> Uri {
        text.parse().unwrap_or_default()
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
                    .check(&Method::GET, &uri("/"), &headers(&[("host", host)]))
                    .is_ok(),
                "{host}"
            );
        }
        for host in ["evil.test", "127.0.0.1:3081", "box.test:9001", ""] {
            let refused = fence.check(&Method::GET, &uri("/"), &headers(&[("host", host)]));
            assert_eq!(
                refused.map_err(|r| r.status),
                Err(StatusCode::FORBIDDEN),
                "{host}"
            );
        }
    }

    #[test]
    fn the_api_needs_the_token_in_a_header_or_in_the_query_of_a_read() {
        let fence = fence();
        let host = ("host", "127.0.0.1:3080");
        let with_query = |path: &str, query: Option<&str>| match query {
            Some(query) => uri(&format!("{path}?{query}")),
            None => uri(path),
        };
        let get = |query: Option<&str>, pairs: &[(&'static str, &str)]| {
            fence.check(
                &Method::GET,
                &with_query("/api/sessions", query),
                &headers(pairs),
            )
        };
        let post = |query: Option<&str>, pairs: &[(&'static str, &str)]| {
            fence.check(
                &Method::POST,
                &with_query("/api/agents", query),
                &headers(pairs),
            )
        };
        assert!(get(None, &[host]).is_err());
        assert!(get(None, &[host, ("x-dsh-token", "nope")]).is_err());
        assert!(get(None, &[host, ("x-dsh-token", "t0k")]).is_ok());
        assert!(get(None, &[host, ("authorization", "Bearer t0k")]).is_ok());
        assert!(get(Some("from=3&token=t0k"), &[host]).is_ok());
        assert!(get(Some("token=nope"), &[host]).is_err());
        assert!(
            get(None, &[host, ("cookie", "dsh_token=t0k; token=t0k")]).is_err(),
            "cookies carry no token"
        );
        assert!(
            post(Some("token=t0k"), &[host]).is_err(),
            "a query token only reads"
        );
        assert!(post(None, &[host, ("x-dsh-token", "t0k")]).is_ok());
        assert!(
            post(
                None,
                &[
                    host,
                    ("x-dsh-token", "t0k"),
                    ("origin", "http://127.0.0.1:3080")
                ]
            )
            .is_ok()
        );
        assert!(
            post(
                None,
                &[host, ("x-dsh-token", "t0k"), ("origin", "http://evil.test")]
            )
            .is_err()
        );
        assert!(
            get(
                Some("token=t0k"),
                &[host, ("origin", "https://127.0.0.1:3080")]
            )
            .is_err()
        );
    }

    #[test]
    fn a_foreign_request_target_or_a_second_host_is_refused() {
        let fence = fence();
        let ours = headers(&[("host", "127.0.0.1:3080")]);
        let status = |uri_text: &str, map: &HeaderMap| {
            fence
                .check(&Method::GET, &uri(uri_text), map)
                .map_err(|refusal| refusal.status)
        };
        assert_eq!(
            status("http://evil.example:3080/", &ours),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status("http://user@127.0.0.1:3080/", &ours),
            Err(StatusCode::FORBIDDEN),
            "credentials in the target are not our authority"
        );
        assert_eq!(
            status("https://127.0.0.1:3080/", &ours),
            Err(StatusCode::FORBIDDEN),
            "this server speaks plain http"
        );
        assert_eq!(status("http://127.0.0.1:3080/", &ours), Ok(()));
        assert_eq!(status("http://dev.test/", &ours), Ok(()), "trusted");
        let refused = fence.check(
            &Method::GET,
            &uri("/"),
            &headers(&[("host", "127.0.0.1:3080"), ("host", "evil.test")]),
        );
        assert_eq!(
            refused.map_err(|refusal| refusal.message),
            Err("forbidden request: it has more than one host header; send exactly one".to_owned())
        );
        let two_origins = headers(&[
            ("host", "127.0.0.1:3080"),
            ("origin", "http://127.0.0.1:3080"),
            ("origin", "http://evil.test"),
        ]);
        assert_eq!(status("/", &two_origins), Err(StatusCode::FORBIDDEN));
    }

    #[test]
    fn only_the_login_route_takes_no_token() {
        let fence = fence();
        let ours = headers(&[("host", "127.0.0.1:3080")]);
        assert!(
            fence
                .check(&Method::POST, &uri("/api/login"), &ours)
                .is_ok()
        );
        assert!(
            fence
                .check(&Method::POST, &uri("/api/login/x"), &ours)
                .is_err()
        );
        assert!(
            fence
                .check(
                    &Method::POST,
                    &uri("/api/login"),
                    &headers(&[("host", "127.0.0.1:3080"), ("origin", "http://evil.test")])
                )
                .is_err(),
            "the Origin check still applies"
        );
    }
}
