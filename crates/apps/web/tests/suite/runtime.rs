//! The web app row: the embedded UI and the browser opener.

use dsh_kernel::Kernel;
use dsh_web::{BrowserOpener, WEBSERVER, WebRuntimePlugin, WebServerPlugin};
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::json;

async fn boot() -> (Kernel, String) {
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
    let url = root.require(&WEBSERVER).unwrap().url();
    (kernel, url)
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_assets_are_served_under_a_strict_policy() {
    let (kernel, url) = boot().await;
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
    let html = page.text().await.unwrap();
    assert!(html.contains("app.js"), "{html}");
    for path in ["/style.css", "/conversation.css"] {
        assert!(html.contains(&format!("href=\"{path}\"")), "{html}");
    }
    for (path, kind) in [
        ("/app.js", "text/javascript"),
        ("/style.css", "text/css"),
        ("/conversation.css", "text/css"),
    ] {
        let asset = client().get(format!("{url}{path}")).send().await.unwrap();
        assert_eq!(asset.status(), StatusCode::OK, "{path}");
        assert_eq!(asset.headers()["content-type"], kind, "{path}");
    }
    let missing = client().get(format!("{url}/nope.js")).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    kernel.shutdown().await;
}

#[tokio::test]
async fn the_opener_gets_the_url_and_a_failure_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("url");
    let script = format!("printf %s \"$0\" > {}", seen.display());
    BrowserOpener::command("sh", &["-c", &script])
        .open("http://127.0.0.1:1/#login=c0de")
        .await
        .unwrap();
    // The opener gets the URL itself: no file is written on its way.
    let handed = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(handed, "http://127.0.0.1:1/#login=c0de");
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
