//! The web app row: the embedded UI, the token-for-cookie login, and the browser opener.

use dsh_kernel::Kernel;
use dsh_web::{BrowserOpener, WEBSERVER, WebRuntimePlugin, WebServerPlugin};
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use reqwest::redirect::Policy;
use serde_json::json;

async fn boot() -> (Kernel, String, String, u16) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kernel = Kernel::new().unwrap();
    let root = kernel.root();
    root.plugin(WebServerPlugin, json!({"port": 0})).unwrap();
    root.plugin(
        WebRuntimePlugin,
        json!({"openBrowser": false, "printUrl": false}),
    )
    .unwrap();
    kernel.settle().await;
    let server = root.require(&WEBSERVER).unwrap();
    let (url, token, port) = (
        server.url(),
        server.token().to_owned(),
        server.addr().port(),
    );
    (kernel, url, token, port)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_assets_are_served_under_a_strict_policy() {
    let (kernel, url, _, _) = boot().await;
    let page = client().get(format!("{url}/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.text().await.unwrap().contains("app.js"));
    for (path, kind) in [("/app.js", "text/javascript"), ("/style.css", "text/css")] {
        let asset = client().get(format!("{url}{path}")).send().await.unwrap();
        assert_eq!(asset.status(), StatusCode::OK, "{path}");
        assert_eq!(asset.headers()["content-type"], kind, "{path}");
    }
    let missing = client().get(format!("{url}/nope.js")).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_token_becomes_a_cookie_for_this_port_and_leaves_the_url() {
    let (kernel, url, token, port) = boot().await;
    let wrong = client()
        .get(format!("{url}/?token=0000"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::FORBIDDEN);
    assert!(wrong.headers().get("set-cookie").is_none());

    let login = client()
        .get(format!("{url}/?token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::SEE_OTHER);
    assert_eq!(login.headers()["location"], "/");
    let cookie = login.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert_eq!(
        cookie,
        format!("dsh_token_{port}={token}; Path=/; HttpOnly; SameSite=Strict")
    );
    let pair = cookie.split(';').next().unwrap();
    let health = client()
        .get(format!("{url}/api/health"))
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let other_port = client()
        .get(format!("{url}/api/health"))
        .header(
            "cookie",
            format!("dsh_token_{}={token}", port.wrapping_add(1)),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        other_port.status(),
        StatusCode::FORBIDDEN,
        "another server's cookie does not count"
    );
    kernel.shutdown().await;
}

#[tokio::test]
async fn the_opener_gets_the_url_and_a_failure_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("url");
    let script = format!("printf %s \"$0\" > {}", seen.display());
    BrowserOpener::command("sh", &["-c", &script])
        .open("http://127.0.0.1:1/?token=t")
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "http://127.0.0.1:1/?token=t"
    );
    let missing = BrowserOpener::command("/nonexistent/opener", &[])
        .open("http://127.0.0.1:1/")
        .await
        .unwrap_err();
    assert!(
        missing.starts_with("/nonexistent/opener could not start"),
        "{missing}"
    );
    let failing = BrowserOpener::command("false", &[])
        .open("http://127.0.0.1:1/")
        .await
        .unwrap_err();
    assert!(failing.starts_with("false failed"), "{failing}");
}
