//! `dsh web` through the launcher: the command line, the boot, the printed URL, the browser
//! hand-off and the served page (the server and API are tested in depth in dsh-web).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

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

    /// `GET path` with these extra header lines; returns the status and body.
    fn get(&self, path: &str, headers: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port())).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{headers}Connection: close\r\n\r\n",
            self.port()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response[9..12].parse().unwrap();
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default();
        (status, body)
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
    // Not the URL itself (its token would show in `ps`): a private page that leads to it.
    let handed = std::fs::read_to_string(&seen).unwrap();
    let page = handed.strip_prefix("file://").expect("a file:// page");
    let text = std::fs::read_to_string(page).unwrap();
    assert!(text.contains(&format!("url={}", served.url)), "{text}");
    assert_eq!(served.stop().code, Some(0));
    assert!(
        !std::path::Path::new(page).exists(),
        "the page goes with the server"
    );

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
