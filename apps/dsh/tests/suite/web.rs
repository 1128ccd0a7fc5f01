//! `dsh web` through the launcher: the command line, the boot, the printed URL, the browser
//! hand-off and the served page (the server and API are tested in depth in dsh-web).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use dsh_test_support::fake_deepseek::FakeDeepSeek;
use pretty_assertions::assert_eq;

use super::support::{Run, Sandbox};

#[test]
fn web_help_prints_the_apps_flags_and_binds_nothing() {
    let sandbox = Sandbox::new();
    let help = sandbox.run(&["web", "--help"]);
    assert_eq!((help.code, help.stderr.as_str()), (Some(0), ""));
    for flag in [
        "--host <host>",
        "--port <port>",
        "--trusted-host <authority>",
        "--no-open",
    ] {
        assert!(help.stdout.contains(flag), "{flag}: {}", help.stdout);
    }
}

#[test]
fn a_wildcard_host_and_a_bad_port_are_refused_before_anything_binds() {
    let sandbox = Sandbox::new();
    let wildcard = sandbox.run(&["web", "--host", "0.0.0.0"]);
    assert_eq!(wildcard.code, Some(1));
    assert_eq!(
        wildcard.stderr,
        "error: --host 0.0.0.0 is intentionally not supported yet for safety: it would expose \
         remote code execution to the network; use 127.0.0.1 instead\n"
    );
    let port = sandbox.run(&["web", "--port", "eighty"]);
    assert_eq!(
        (port.code, port.stderr.as_str()),
        (Some(1), "error: --port must be a number, got \"eighty\"\n")
    );
}

/// A running `dsh web`: the child, the URL it printed, and its later stdout lines.
struct Served {
    child: Child,
    url: String,
    lines: Receiver<String>,
}

impl Served {
    /// Starts `command` as a local session (no SSH variables).
    fn start(mut command: Command) -> Self {
        command.env_remove("SSH_CONNECTION").env_remove("SSH_TTY");
        Self::start_keeping_ssh(command)
    }

    fn start_keeping_ssh(mut command: Command) -> Self {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (sender, lines) = channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let first = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("dsh web printed nothing");
        let url = first
            .strip_prefix("dsh web: ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_owned();
        Self { child, url, lines }
    }

    fn port(&self) -> u16 {
        let rest = self.url.strip_prefix("http://127.0.0.1:").unwrap();
        rest.split('/').next().unwrap().parse().unwrap()
    }

    fn token(&self) -> &str {
        self.url.split("#token=").nth(1).unwrap()
    }

    /// Sends `request` (a whole HTTP/1.1 request closing its connection) and returns the
    /// status and body; a server that does not answer within 20 s fails the test.
    fn exchange(&self, request: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port())).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response[9..12].parse().unwrap();
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default();
        (status, body)
    }

    /// `POST path` with the token and a JSON body; returns the status and body.
    fn post(&self, path: &str, body: &serde_json::Value) -> (u16, String) {
        let body = body.to_string();
        self.exchange(&format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nx-dsh-token: {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port(),
            self.token(),
            body.len()
        ))
    }

    /// `GET path` with these extra header lines; returns the status and body.
    fn get(&self, path: &str, headers: &str) -> (u16, String) {
        self.exchange(&format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{headers}Connection: close\r\n\r\n",
            self.port()
        ))
    }

    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("no further line")
    }

    /// SIGTERM, then what it printed on stderr and how it exited.
    fn stop(self) -> Run {
        let status = Command::new("bash")
            .args(["-c", &format!("kill -TERM {}", self.child.id())])
            .status()
            .unwrap();
        assert!(status.success());
        let started = Instant::now();
        let mut child = self.child;
        while child.try_wait().unwrap().is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "dsh web did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Run::from(child.wait_with_output().unwrap())
    }
}

#[test]
fn web_boots_prints_its_tokened_url_and_serves_the_page_and_the_api() {
    let sandbox = Sandbox::new();
    let served = Served::start(sandbox.command(&["web", "--no-open", "--port", "0"]));
    let token = served.token().to_owned();
    assert_eq!(
        served.url,
        format!("http://127.0.0.1:{}/#token={token}", served.port())
    );
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|byte| byte.is_ascii_hexdigit()));

    let (status, page) = served.get("/", "");
    assert_eq!(status, 200);
    assert!(page.contains("app.js"), "{page}");
    let (status, health) = served.get("/api/health", &format!("x-dsh-token: {token}\r\n"));
    assert_eq!((status, health.as_str()), (200, r#"{"ok":true}"#));
    let (status, _) = served.get("/api/sessions", "");
    assert_eq!(status, 403, "the API needs the token");
    let (status, _) = served.get("/", "Origin: http://evil.test\r\n");
    assert_eq!(status, 403, "a foreign origin is refused");

    let run = served.stop();
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
}

#[test]
fn the_browser_gets_the_url_unless_the_session_is_over_ssh() {
    let sandbox = Sandbox::new();
    let seen = sandbox.work().join("opened");
    let opener = sandbox.write(
        "work/opener.sh",
        &format!("#!/bin/sh\nprintf %s \"$1\" > {}\n", seen.display()),
    );
    let chmod = Command::new("chmod")
        .arg("+x")
        .arg(&opener)
        .status()
        .unwrap();
    assert!(chmod.success());

    let mut command = sandbox.command(&["web", "--port", "0"]);
    command.env("BROWSER", &opener);
    let served = Served::start(command);
    assert_eq!(
        served.next_line(),
        "dsh web: opening the default browser; pass --no-open to disable"
    );
    let started = Instant::now();
    while !seen.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the opener never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(50));
    // Not the token (a command line is readable by every local process, confined commands
    // included): a one-time login code, which no file ever holds.
    let handed = std::fs::read_to_string(&seen).unwrap();
    let port = served.port();
    let code = handed
        .strip_prefix(&format!("http://127.0.0.1:{port}/#login="))
        .unwrap_or_else(|| panic!("a login URL: {handed}"));
    assert_eq!(code.len(), 64, "{handed}");
    assert!(!handed.contains("token"), "{handed}");
    assert!(!served.url.contains(code), "the code is not the token");
    assert_eq!(served.stop().code, Some(0));

    std::fs::remove_file(&seen).unwrap();
    let mut command = sandbox.command(&["web", "--port", "0"]);
    command
        .env("BROWSER", &opener)
        .env("SSH_CONNECTION", "10.0.0.1 22 10.0.0.2 22");
    let served = Served::start_keeping_ssh(command);
    let port = served.port();
    assert_eq!(
        served.next_line(),
        format!(
            "dsh web: not opening a browser in an SSH session; forward the port \
             (ssh -L {port}:127.0.0.1:{port}) and visit the URL"
        )
    );
    assert_eq!(served.stop().code, Some(0));
    assert!(!seen.exists(), "no browser over SSH");
}

#[test]
fn an_opener_that_fails_leaves_the_server_up_and_names_the_url() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(&["web", "--port", "0"]);
    command.env("BROWSER", "/nonexistent/browser");
    let served = Served::start(command);
    served.next_line();
    let (status, _) = served.get("/", "");
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_millis(200));
    let url = served.url.clone();
    let run = served.stop();
    assert_eq!(run.code, Some(0));
    assert!(
        run.stderr.starts_with(
            "web-app: could not open the default browser because /nonexistent/browser could not \
             start"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.ends_with(&format!("; visit {url} manually\n")),
        "{}",
        run.stderr
    );
}

#[test]
fn an_opener_planted_on_path_never_runs() {
    // A model's command could write `xdg-open` into a PATH directory inside its workspace
    // (a project's `.venv/bin`); the next `dsh web` would run it unconfined.
    let sandbox = Sandbox::new();
    let ran = sandbox.work().join("planted-ran");
    // And what `xdg-open` (or a `$BROWSER` script) runs in turn.
    let mut planted = sandbox.work();
    for name in ["xdg-open", "xdg-mime", "gio", "sh-helper"] {
        planted = sandbox.write(
            &format!("work/.venv/bin/{name}"),
            &format!("#!/bin/sh\necho {name} >> {}\n", ran.display()),
        );
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let browser = sandbox.write("browser.sh", "#!/bin/sh\nsh-helper \"$1\"\n");
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        planted.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    for browser in [None, Some(&browser)] {
        let mut command = sandbox.command(&["web", "--port", "0"]);
        command.env("PATH", &path).env_remove("BROWSER");
        if let Some(browser) = browser {
            command.env("BROWSER", browser);
        }
        let served = Served::start(command);
        served.next_line();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(served.stop().code, Some(0));
        assert!(
            !ran.exists(),
            "a planted program ran: {}",
            std::fs::read_to_string(&ran).unwrap_or_default()
        );
    }
}

/// A model's command under `dsh web` (run as root, or as `nobody` when `as_nobody`) tries
/// the host's port and every place the token or the key could be read from.
async fn probe_web_host(as_nobody: bool) -> Option<()> {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    let mut command =
        sandbox.command_maybe_as_nobody(as_nobody, &["web", "--no-open", "--port", "0"])?;
    command
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", "sk-web-never-readable")
        .env_remove("DSH_PERMISSION_MODE");
    let served = tokio::task::spawn_blocking(move || Served::start(command))
        .await
        .unwrap();
    let (port, token) = (served.port(), served.token().to_owned());
    // Everything a command could learn the token or the key from, and the host's port.
    let probe = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && echo host-reachable; \
         cat /tmp/dsh-web-* \"${{XDG_RUNTIME_DIR:-/nonexistent}}\"/dsh-web-* 2>/dev/null; \
         tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' ' ' < /proc/$PPID/cmdline; echo; \
         for f in /proc/$PPID/fd/*; do head -c 65536 \"$f\" 2>/dev/null | strings; done; \
         head -c 1048576 /proc/$PPID/mem 2>/dev/null | strings; echo probe-done"
    );
    fake.push(super::headless::bash_call("call_1", &probe));
    fake.push(super::headless::answer("Probed."));
    let work = sandbox.work();
    let served = tokio::task::spawn_blocking(move || {
        let (status, created) = served.post("/api/agents", &serde_json::json!({"cwd": work}));
        assert_eq!(status, 201, "{created}");
        let created: serde_json::Value = serde_json::from_str(&created).unwrap();
        let id = created["sessionId"].as_str().unwrap().to_owned();
        let (status, sent) = served.post(
            &format!("/api/agents/{id}/messages"),
            &serde_json::json!({"text": "probe the host"}),
        );
        assert_eq!(status, 202, "{sent}");
        served
    })
    .await
    .unwrap();
    let requests = fake
        .wait_for_requests_within(2, Duration::from_secs(30))
        .await
        .unwrap();
    let result = &super::headless::tool_results(&requests[1].body)[0].1;
    assert!(result.contains("probe-done"), "{result}");
    assert!(!result.contains("host-reachable"), "{result}");
    assert!(
        result.contains(&format!("/dev/tcp/127.0.0.1/{port}: Permission denied")),
        "{result}"
    );
    assert!(!result.contains(&token), "the token leaked: {result}");
    assert!(
        !result.contains("sk-web-never-readable"),
        "the key leaked: {result}"
    );
    let run = tokio::task::spawn_blocking(move || served.stop())
        .await
        .unwrap();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    Some(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_command_reaches_neither_the_web_host_nor_its_token_as_root() {
    probe_web_host(false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_command_reaches_neither_the_web_host_nor_its_token_unprivileged() {
    let _ = probe_web_host(true).await;
}

/// The number of threads of process `pid`.
fn threads_of(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|count| count.trim().parse().ok())
        .unwrap()
}

#[test]
fn a_fifo_in_the_store_neither_hangs_the_session_list_nor_leaks_threads() {
    use super::sessions::{PROJECT, ZSTD_ID, zstd_fixture_log};
    let sandbox = Sandbox::new();
    let healthy = sandbox.home().join(format!("sessions/{PROJECT}/{ZSTD_ID}"));
    std::fs::create_dir_all(&healthy).unwrap();
    std::fs::copy(zstd_fixture_log(), healthy.join("session.jsonl.zstd")).unwrap();
    let planted = sandbox.home().join(format!(
        "sessions/{PROJECT}/session-0f0f0f0f-fifo-0000-0000-000000000000"
    ));
    std::fs::create_dir_all(&planted).unwrap();
    nix::unistd::mkfifo(
        &planted.join("session.jsonl.zstd"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let served = Served::start(sandbox.command(&["web", "--no-open", "--port", "0"]));
    let token = served.token().to_owned();
    let (status, body) = served.get("/api/sessions", &format!("x-dsh-token: {token}\r\n"));
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(ZSTD_ID),
        "the healthy session is listed: {body}"
    );
    assert!(!body.contains("fifo"), "{body}");
    // A thread stuck opening the FIFO would stay for good, one per listing; the runtime's pool
    // of blocking threads may grow by a few under load and shrinks on its own. So the count
    // may rise a little, but never by one thread per listing.
    const LISTINGS: usize = 40;
    let before = threads_of(served.child.id());
    for _ in 0..LISTINGS {
        let started = Instant::now();
        let (status, _) = served.get("/api/sessions", &format!("x-dsh-token: {token}\r\n"));
        assert_eq!(status, 200);
        assert!(started.elapsed() < Duration::from_secs(5), "the list hung");
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = threads_of(served.child.id());
    assert!(
        after < before + LISTINGS / 4,
        "threads grew from {before} to {after} over {LISTINGS} listings"
    );
    assert_eq!(served.stop().code, Some(0));
}
