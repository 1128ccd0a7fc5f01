//! One live session streaming 10,000 `assistant/chunk` events to two pages over the real
//! loopback server: every chunk must reach both pages in order, and the server's CPU time
//! per chunk (user + system, all threads of this process: the appends, the fan-out, the SSE
//! encoding and the socket writes) must stay under 20 µs.
//!
//! The pages are separate processes (this binary, re-run as a reader), so their reading does
//! not count as server time. `cargo bench -p dsh-web --bench stream`.

#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the figures are printed for the reader"
)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_agent_loop::{AgentDefaultModelPlugin, AgentLoopPlugin};
use dsh_kernel::Kernel;
use dsh_session::{LiveSession, SESSIONS, SurfaceIntent};
use dsh_web::{ApiPlugin, WEBSERVER, WebServerPlugin};
use nix::sys::resource::{UsageWho, getrusage};
use serde_json::{Value, json};

const CHUNKS: u64 = 10_000;
const ROUNDS: usize = 5;
const TARGET: Duration = Duration::from_micros(20);
/// Set in a reader process: the events URL path, the port and the token.
const READER: &str = "DSH_STREAM_BENCH_READER";

fn main() -> ExitCode {
    if let Ok(spec) = std::env::var(READER) {
        return read_as_page(&spec);
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once, briefly.
    let quick = !std::env::args().any(|arg| arg == "--bench");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("stream bench: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(measure(if quick { 1 } else { ROUNDS })) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("stream bench: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn measure(rounds: usize) -> Result<(), String> {
    let kernel = Kernel::new().map_err(|error| error.to_string())?;
    let root = kernel.root();
    let load = |result: Result<dsh_kernel::FiberHandle, dsh_kernel::KernelError>| {
        result.map(drop).map_err(|error| error.to_string())
    };
    load(root.plugin(dsh_session::SessionPlugin, json!({})))?;
    load(root.plugin(dsh_llm::LlmPlugin, Value::Null))?;
    load(root.plugin(dsh_tools::ToolsPlugin, json!({})))?;
    load(root.plugin(dsh_tools::UserApprovalPlugin, json!({})))?;
    load(root.plugin(dsh_system_prompt::SystemPromptPlugin, json!({})))?;
    load(root.plugin(AgentLoopPlugin, json!({})))?;
    load(root.plugin(
        AgentDefaultModelPlugin,
        json!({"provider": "none", "model": "none"}),
    ))?;
    load(root.plugin(WebServerPlugin, json!({"port": 0})))?;
    load(root.plugin(ApiPlugin, json!({})))?;
    kernel.settle().await;
    let server = root
        .require(&WEBSERVER)
        .map_err(|error| error.to_string())?;
    let sessions = root.require(&SESSIONS).map_err(|error| error.to_string())?;

    let mut per_chunk = Vec::new();
    for _ in 0..rounds {
        let session = sessions
            .create(dsh_session::CreateOptions::default())
            .map_err(|error| error.to_string())?;
        open_step(&session)?;
        let first = session.with(dsh_session::Session::next_seq);
        let spec = format!(
            "/api/sessions/{}/events?from={first} {} {}",
            session.id(),
            server.addr().port(),
            server.token()
        );
        let pages = [start_page(&spec)?, start_page(&spec)?];
        let before = cpu_time()?;
        let started = Instant::now();
        let text_of = |n: u64| format!("word{n} ");
        for n in 0..CHUNKS {
            session
                .append(
                    "assistant/chunk",
                    json!({"turn": 1, "step": 1,
                           "chunk": {"type": "text-delta", "index": 0, "text": text_of(n)}}),
                    SurfaceIntent::default(),
                )
                .map_err(|error| error.to_string())?;
        }
        let last = first + CHUNKS - 1;
        for page in pages {
            finish_page(page, last).await?;
        }
        let wall = started.elapsed();
        let cpu = cpu_time()? - before;
        let chunks = u32::try_from(CHUNKS).unwrap_or(u32::MAX);
        per_chunk.push(cpu / chunks);
        println!(
            "  round: {CHUNKS} chunks to 2 pages in {wall:.2?} wall, server CPU {cpu:.2?} \
             ({:.2?} per chunk)",
            cpu / chunks
        );
        sessions
            .dispose(session.id())
            .await
            .map_err(|error| error.to_string())?;
    }
    per_chunk.sort_unstable();
    let median = per_chunk
        .get(per_chunk.len() / 2)
        .copied()
        .unwrap_or_default();
    let verdict = if median < TARGET { "ok" } else { "MISSED" };
    println!(
        "stream: {CHUNKS} chunks to 2 pages, every chunk in order; server CPU per chunk \
         median {median:.2?} over {} rounds (target < {TARGET:?})  {verdict}",
        per_chunk.len()
    );
    kernel.shutdown().await;
    if verdict == "ok" {
        Ok(())
    } else {
        Err("the CPU target was missed".to_owned())
    }
}

/// Opens turn 1, step 1, so chunks land where a model's would.
fn open_step(session: &Arc<LiveSession>) -> Result<(), String> {
    for (kind, data) in [
        ("turn/start", json!({"turn": 1})),
        ("step/start", json!({"turn": 1, "step": 1})),
    ] {
        session
            .append(kind, data, SurfaceIntent::default())
            .map_err(|error| error.to_string())?;
    }
    Ok(())
}

/// User + system CPU time of this process so far.
fn cpu_time() -> Result<Duration, String> {
    let usage = getrusage(UsageWho::RUSAGE_SELF).map_err(|error| error.to_string())?;
    let to_duration = |time: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(time.tv_sec()).unwrap_or(0))
            + Duration::from_micros(u64::try_from(time.tv_usec()).unwrap_or(0))
    };
    Ok(to_duration(usage.user_time()) + to_duration(usage.system_time()))
}

/// Starts a page process and waits until it is subscribed (it prints `ready`).
fn start_page(spec: &str) -> Result<Child, String> {
    let me = std::env::current_exe().map_err(|error| error.to_string())?;
    let mut child = Command::new(me)
        .env(READER, spec)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start a page: {error}"))?;
    let stdout = child.stdout.as_mut().ok_or("a page has no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|error| error.to_string())?;
    if line.trim() != "ready" {
        return Err(format!("a page said {line:?}"));
    }
    Ok(child)
}

/// Waits for a page to exit and checks that it saw every chunk up to `last`.
async fn finish_page(page: Child, last: u64) -> Result<(), String> {
    let output = tokio::task::spawn_blocking(move || page.wait_with_output())
        .await
        .map_err(|error| error.to_string())?
        .map_err(|error| error.to_string())?;
    let said = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && said.trim() == format!("done {last}") {
        Ok(())
    } else {
        Err(format!("a page failed: {said}"))
    }
}

/// The page: subscribes, says `ready` once the stream's headers arrive, then reads frames
/// until the last chunk, checking that the seqs come one by one; prints `done <last>`, or
/// why it failed (the bench reports that line).
fn read_as_page(spec: &str) -> ExitCode {
    match follow_stream(spec) {
        Ok(last) => {
            println!("done {last}");
            ExitCode::SUCCESS
        }
        Err(reason) => {
            println!("page: {reason}");
            ExitCode::FAILURE
        }
    }
}

fn follow_stream(spec: &str) -> Result<u64, String> {
    let [path, port, token] = spec.split(' ').collect::<Vec<_>>()[..] else {
        return Err(format!("bad reader spec {spec:?}"));
    };
    let mut stream = TcpStream::connect(("127.0.0.1", port.parse().unwrap_or(0)))
        .map_err(|error| format!("connecting to port {port}: {error}"))?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-dsh-token: {token}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|error| format!("sending GET {path}: {error}"))?;
    let first: u64 = path
        .rsplit_once("from=")
        .and_then(|(_, from)| from.parse().ok())
        .unwrap_or(0);
    let expected_last = first + CHUNKS - 1;
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|error| format!("reading the status line: {error}"))?;
    if !line.starts_with("HTTP/1.1 200") {
        return Err(format!("GET {path} answered {:?}", line.trim()));
    }
    // The headers.
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return Err("the server closed the stream inside its headers".to_owned());
        }
        if line == "\r\n" {
            break;
        }
    }
    println!("ready");
    let mut next = first;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer) {
            Ok(0) => return Err(format!("the stream ended before seq {expected_last}")),
            Err(error) => return Err(format!("reading the stream: {error}")),
            Ok(_) => {}
        }
        // Chunked transfer framing lines are skipped; only `id:` lines matter.
        let Some(seq) = buffer
            .strip_prefix(b"id: ")
            .and_then(|rest| std::str::from_utf8(rest).ok())
            .and_then(|rest| rest.trim().parse::<u64>().ok())
        else {
            continue;
        };
        if seq != next {
            return Err(format!("out of order: got {seq}, expected {next}"));
        }
        next += 1;
        if seq == expected_last {
            return Ok(seq);
        }
    }
}
