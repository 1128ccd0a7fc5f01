//! The web host over real loopback HTTP: the fence, the limits, mounts, and unload.

use std::sync::Arc;

use axum::Router;
use axum::routing::post;
use dsh_kernel::{FiberHandle, Kernel};
use dsh_web::{WEBSERVER, WebServer, WebServerPlugin};
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::raw;

struct Host {
    kernel: Kernel,
    fiber: FiberHandle,
    server: Arc<WebServer>,
    client: reqwest::Client,
}

async fn host(config: Value) -> Host {
    // reqwest's rustls backend is built without a crypto provider; the test brings ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kernel = Kernel::new().unwrap();
    let fiber = kernel.root().plugin(WebServerPlugin, config).unwrap();
    kernel.settle().await;
    let server = kernel.root().require(&WEBSERVER).unwrap();
    // A JSON route, as the API rows mount theirs.
    let echo = Router::new().route(
        "/api/echo",
        post(|axum::Json(body): axum::Json<Value>| async move { axum::Json(body) }),
    );
    server.mount(&kernel.root(), "/api/echo", echo).unwrap();
    Host {
        kernel,
        fiber,
        server,
        client: reqwest::Client::new(),
    }
}

impl Host {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.url())
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .get(self.url(path))
            .header("x-dsh-token", self.server.token())
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(self.url(path))
            .header("x-dsh-token", self.server.token())
    }
}

async fn error_of(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["error"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_route_answers_with_the_token() {
    let h = host(json!({"port": 0})).await;
    assert_eq!(h.server.addr().ip().to_string(), "127.0.0.1");
    let ok = h.get("/api/health").send().await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert!(ok.headers().get("access-control-allow-origin").is_none());
    assert_eq!(ok.json::<Value>().await.unwrap(), json!({"ok": true}));
    h.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_origins_and_missing_tokens_are_refused() {
    let h = host(json!({"port": 0, "trustedHosts": ["dev.test"]})).await;
    let foreign_host = h
        .get("/api/health")
        .header("host", "evil.test")
        .send()
        .await
        .unwrap();
    let (status, message) = error_of(foreign_host).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        message.starts_with("forbidden host \"evil.test\""),
        "{message}"
    );
    let trusted = h
        .get("/api/health")
        .header("host", "dev.test")
        .send()
        .await
        .unwrap();
    assert_eq!(trusted.status(), StatusCode::OK);

    let untokened = h.client.get(h.url("/api/health")).send().await.unwrap();
    let (status, message) = error_of(untokened).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(message.starts_with("missing token"), "{message}");
    let wrong = h
        .client
        .get(h.url("/api/health"))
        .header("x-dsh-token", "guess")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::FORBIDDEN);

    let foreign_origin = h
        .post("/api/echo")
        .header("origin", "http://evil.test")
        .json(&json!({"a": 1}))
        .send()
        .await
        .unwrap();
    let (status, message) = error_of(foreign_origin).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(message.starts_with("forbidden origin"), "{message}");
    let query_post = h
        .client
        .post(h.url(&format!("/api/echo?token={}", h.server.token())))
        .json(&json!({"a": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        query_post.status(),
        StatusCode::FORBIDDEN,
        "a token in the URL only reads"
    );
    let query_read = h
        .client
        .get(h.url(&format!("/api/health?token={}", h.server.token())))
        .send()
        .await
        .unwrap();
    assert_eq!(query_read.status(), StatusCode::OK);
    let own_page = h
        .post("/api/echo")
        .header("origin", h.server.url())
        .json(&json!({"a": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(own_page.json::<Value>().await.unwrap(), json!({"a": 1}));
    h.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_request_target_or_a_second_host_header_is_refused() {
    let h = host(json!({"port": 0})).await;
    let addr = h.server.addr();
    let token = h.server.token();
    let ask = |target: String, hosts: &[&str]| {
        let hosts: String = hosts
            .iter()
            .map(|host| format!("Host: {host}\r\n"))
            .collect();
        format!("GET {target} HTTP/1.1\r\n{hosts}x-dsh-token: {token}\r\nConnection: close\r\n\r\n")
    };
    let own = addr.to_string();
    let foreign = raw::exchange(
        addr,
        &ask(
            format!("http://evil.example:{}/api/health", addr.port()),
            &[&own],
        ),
    )
    .await;
    assert_eq!(raw::status_of(&foreign), 403, "{foreign}");
    assert!(foreign.contains("forbidden request target"), "{foreign}");
    let second_host = raw::exchange(
        addr,
        &ask("/api/health".to_owned(), &[&own, "evil.example"]),
    )
    .await;
    assert_eq!(raw::status_of(&second_host), 403, "{second_host}");
    assert!(
        second_host.contains("more than one host header"),
        "{second_host}"
    );
    let absolute_own = raw::exchange(addr, &ask(format!("http://{own}/api/health"), &[&own])).await;
    assert_eq!(raw::status_of(&absolute_own), 200, "{absolute_own}");
    h.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_get_400_and_413_and_the_server_keeps_serving() {
    let h = host(json!({"port": 0, "maxBodyBytes": 64})).await;
    let malformed = h
        .post("/api/echo")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
    assert!(
        !malformed.text().await.unwrap().is_empty(),
        "a reason is given"
    );
    let oversized = h
        .post("/api/echo")
        .json(&json!({"text": "x".repeat(200)}))
        .send()
        .await
        .unwrap();
    let (status, message) = error_of(oversized).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(message, "request body over 64 bytes");
    let fine = h
        .post("/api/echo")
        .json(&json!({"a": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(fine.json::<Value>().await.unwrap(), json!({"a": 2}));
    let (status, _) = error_of(h.get("/api/nothing").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    h.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounts_go_with_their_owner_and_unloading_closes_the_port() {
    let h = host(json!({"port": 0})).await;
    assert!(
        h.server
            .mount(&h.kernel.root(), "/api/echo", Router::new())
            .is_err(),
        "one table per prefix"
    );
    let url = h.url("/api/health");
    let token = h.server.token().to_owned();
    h.fiber.dispose().await;
    let closed = h.client.get(&url).header("x-dsh-token", token).send().await;
    assert!(closed.is_err(), "the port is closed once the row unloads");
    h.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_loopback_binds() {
    for (host, expected) in [
        (
            "0.0.0.0",
            "--host 0.0.0.0 is intentionally not supported yet for safety",
        ),
        ("192.168.1.5", "host must be 127.0.0.1"),
    ] {
        let kernel = Kernel::new().unwrap();
        let fiber = kernel
            .root()
            .plugin(WebServerPlugin, json!({"host": host, "port": 0}))
            .unwrap();
        kernel.settle().await;
        let error = fiber.error().unwrap_or_default();
        assert!(error.contains(expected), "{error}");
        kernel.shutdown().await;
    }
}
