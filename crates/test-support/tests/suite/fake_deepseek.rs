//! The fake DeepSeek server, driven by a raw TCP client.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use dsh_test_support::fake_deepseek::{
    FIXTURE_CASES, FakeDeepSeek, FixtureExchange, RecordedRequest, Reply,
};
use dsh_test_support::sse::{self, SseEvent};

use super::client::{self, Response, chunks_after_head, has_head, post, read_until};

/// A request body shaped like dsh's.
fn body() -> serde_json::Value {
    json!({
        "model": "deepseek-v4-flash",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        "stream": true,
        "stream_options": {"include_usage": true},
        "tools": [{"type": "function", "function": {"name": "bash", "description": "Run", "parameters": {"type": "object"}}}],
    })
}

fn chat(body: &serde_json::Value) -> Vec<u8> {
    post("/chat/completions", &body.to_string(), &[])
}

fn events() -> Vec<SseEvent> {
    vec![
        SseEvent::data(sse::chunk_role()),
        SseEvent::data(sse::chunk_reasoning("think")),
        SseEvent::comment("keep-alive"),
        SseEvent::data(sse::chunk_text("hello")),
        SseEvent::data(sse::chunk_tool_call(
            0,
            Some("call_1"),
            Some("bash"),
            "{\"a\"",
        )),
        SseEvent::data(sse::chunk_tool_call(0, None, None, ":1}")),
        SseEvent::data(sse::chunk_finish(
            "tool_calls",
            Some(sse::usage(10, 4, Some(2), Some(1))),
        )),
    ]
}

#[tokio::test]
async fn an_sse_reply_arrives_byte_for_byte_one_chunk_per_event() {
    let server = FakeDeepSeek::start().await.unwrap();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    server.push(Reply::sse(events()));
    let body = body().to_string();
    let request = post(
        "/v1/chat/completions",
        &body,
        &[
            ("Authorization", "Bearer sk-test"),
            ("Accept", "text/event-stream"),
            ("X-DeepSeek-Harness-Session-Id", "session-1"),
        ],
    );
    let response = client::exchange(server.addr(), &request).await;

    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert_eq!(response.header("transfer-encoding"), Some("chunked"));
    assert_eq!(response.header("connection"), Some("close"));
    let mut expected = events();
    expected.push(SseEvent::done());
    let (chunks, complete) = response.chunks();
    assert!(complete, "the chunked body ends with the zero chunk");
    let wanted: Vec<String> = expected.iter().map(SseEvent::to_sse).collect();
    assert_eq!(chunks, wanted);
    assert_eq!(response.decoded(), sse::render(&expected));
    assert!(response.decoded().starts_with(
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}}]}\n\n"
    ));
    assert!(response.decoded().ends_with("\n\ndata: [DONE]\n\n"));
    assert!(response.decoded().contains("\n\n: keep-alive\n\n"));

    let requests = server.wait_for_requests(1).await.unwrap();
    assert_eq!(requests.len(), 1);
    let recorded = &requests[0];
    assert_eq!(recorded.method, "POST");
    assert_eq!(recorded.path, "/v1/chat/completions");
    assert!(recorded.is_chat());
    assert!(recorded.scripted);
    assert_eq!(recorded.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        recorded.header("X-DeepSeek-Harness-Session-Id"),
        Some("session-1")
    );
    assert!(
        recorded
            .headers
            .iter()
            .any(|(name, value)| name == "x-deepseek-harness-session-id" && value == "session-1")
    );
    assert_eq!(
        recorded.header("content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(recorded.body, self::body());
    assert_eq!(recorded.body_text, body);
    assert!(recorded.has_tools());
    assert_eq!(server.pending(), 0);
}

#[tokio::test]
async fn replies_go_out_in_queue_order() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("first", 8, None)));
    server.push(Reply::sse(sse::text_events("second", 8, None)));
    assert_eq!(server.pending(), 2);
    for text in ["first", "second"] {
        let response = client::exchange(server.addr(), &chat(&body())).await;
        assert!(
            response
                .decoded()
                .contains(&sse::chunk_text(text).to_string())
        );
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_error_reply_carries_retry_after_and_the_request_id() {
    let server = FakeDeepSeek::start().await.unwrap();
    let error = json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit"}});
    server.push(
        Reply::error(429, error.clone())
            .retry_after("2")
            .request_id("req-7"),
    );
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert_eq!(response.status, 429);
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.header("retry-after"), Some("2"));
    assert_eq!(response.header("x-request-id"), Some("req-7"));
    assert_eq!(
        response.header("content-length"),
        Some(error.to_string().len().to_string().as_str())
    );
    assert_eq!(response.json(), error);
}

#[tokio::test]
async fn any_status_body_and_content_type_can_be_sent() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::http(502, "text/html", "<h1>bad gateway</h1>"));
    server.push(
        Reply::sse(sse::text_events("x", 1, None)).header("Content-Type", "application/json"),
    );
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert_eq!(response.status, 502);
    assert_eq!(response.header("content-type"), Some("text/html"));
    assert_eq!(response.text(), "<h1>bad gateway</h1>");
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert!(response.decoded().ends_with("data: [DONE]\n\n"));
}

#[tokio::test]
async fn a_stream_without_done_ends_cleanly_and_a_cut_one_breaks_off() {
    let server = FakeDeepSeek::start().await.unwrap();
    let partial = vec![
        SseEvent::data(sse::chunk_role()),
        SseEvent::data(sse::chunk_text("par")),
    ];
    server.push(Reply::sse(partial.clone()).without_done());
    server.push(Reply::sse(partial.clone()).cut());

    let response = client::exchange(server.addr(), &chat(&body())).await;
    let (chunks, complete) = response.chunks();
    assert!(complete, "without_done ends the chunked body");
    assert_eq!(chunks.concat(), sse::render(&partial));
    assert!(!response.decoded().contains("[DONE]"));

    let response = client::exchange(server.addr(), &chat(&body())).await;
    let (chunks, complete) = response.chunks();
    assert!(!complete, "a cut stream has no zero chunk");
    assert_eq!(chunks.concat(), sse::render(&partial));
    assert!(response.raw_body.ends_with(b"\r\n"));
}

#[tokio::test]
async fn a_stall_keeps_the_connection_open_until_the_server_is_dropped() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(events()).stall_after(2));
    let mut stream = client::send(server.addr(), &chat(&body())).await;
    let mut buf = Vec::new();
    assert!(
        read_until(&mut stream, &mut buf, Duration::from_secs(5), |buf| {
            chunks_after_head(buf) >= 2
        })
        .await
    );
    // Nothing more comes, and the connection stays open.
    let mut scratch = [0_u8; 64];
    let more = tokio::time::timeout(Duration::from_millis(300), stream.read(&mut scratch)).await;
    assert!(more.is_err(), "the stalled stream sent {more:?}");
    assert_eq!(chunks_after_head(&buf), 2);
    let response = Response::parse(&buf);
    assert_eq!(response.status, 200);
    assert_eq!(
        response.chunks().0,
        [events()[0].to_sse(), events()[1].to_sse()]
    );

    drop(server);
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    assert!(
        closed.is_ok(),
        "dropping the server closes the stalled connection"
    );
    assert!(!Response::parse(&[buf, rest].concat()).chunks().1);
}

#[tokio::test]
async fn a_stall_ends_when_the_client_hangs_up() {
    let server = FakeDeepSeek::start().await.unwrap();
    let (reply, gate) = Reply::sse(events()).stall_after(0).gate();
    server.push(reply);
    let mut stream = client::send(server.addr(), &chat(&body())).await;
    let mut buf = Vec::new();
    assert!(read_until(&mut stream, &mut buf, Duration::from_secs(5), has_head).await);
    gate.release_all();
    drop(stream);
    assert!(gate.wait_client_closed(Duration::from_secs(5)).await);
    assert_eq!(gate.sent(), 0);
}

#[tokio::test]
async fn a_gate_lets_events_out_one_by_one() {
    let server = FakeDeepSeek::start().await.unwrap();
    let three = vec![
        SseEvent::data(sse::chunk_role()),
        SseEvent::data(sse::chunk_text("a")),
        SseEvent::data(sse::chunk_finish("stop", None)),
    ];
    let (reply, gate) = Reply::gated(three.clone());
    server.push(reply);
    let mut stream = client::send(server.addr(), &chat(&body())).await;
    let mut buf = Vec::new();
    // The head goes out before any event is released.
    assert!(read_until(&mut stream, &mut buf, Duration::from_secs(5), has_head).await);
    assert!(
        !read_until(&mut stream, &mut buf, Duration::from_millis(200), |buf| {
            chunks_after_head(buf) > 0
        })
        .await
    );
    assert_eq!(gate.sent(), 0);
    for released in 1..=3 {
        gate.release(1);
        assert!(
            read_until(&mut stream, &mut buf, Duration::from_secs(5), |buf| {
                chunks_after_head(buf) >= released
            })
            .await
        );
        assert!(gate.wait_sent(released, Duration::from_secs(5)).await);
        assert!(
            !read_until(&mut stream, &mut buf, Duration::from_millis(100), |buf| {
                chunks_after_head(buf) > released
            })
            .await,
            "only {released} event(s) released"
        );
        assert_eq!(
            Response::parse(&buf).chunks().0.last(),
            Some(&three[released - 1].to_sse())
        );
    }
    // `[DONE]` is the fourth event.
    gate.release(1);
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    let response = Response::parse(&[buf, rest].concat());
    assert!(response.chunks().1);
    assert!(response.decoded().ends_with("data: [DONE]\n\n"));
    assert_eq!(gate.sent(), 4);
    assert!(!gate.client_closed());
}

#[tokio::test]
async fn a_gate_sees_the_client_cancel() {
    let server = FakeDeepSeek::start().await.unwrap();
    let (reply, gate) = Reply::gated(events());
    server.push(reply);
    let mut stream = client::send(server.addr(), &chat(&body())).await;
    gate.release(1);
    let mut buf = Vec::new();
    assert!(
        read_until(&mut stream, &mut buf, Duration::from_secs(5), |buf| {
            chunks_after_head(buf) == 1
        })
        .await
    );
    assert!(!gate.wait_client_closed(Duration::from_millis(50)).await);
    drop(stream);
    assert!(gate.wait_client_closed(Duration::from_secs(5)).await);
    assert_eq!(gate.sent(), 1);
}

#[tokio::test]
async fn events_can_be_delayed() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(
        Reply::sse(vec![
            SseEvent::data(sse::chunk_text("a")).after(Duration::from_millis(100)),
            SseEvent::data(sse::chunk_text("b")),
        ])
        .event_delay(Duration::from_millis(50)),
    );
    let started = Instant::now();
    let response = client::exchange(server.addr(), &chat(&body())).await;
    // 100 + 50 before the first event, 50 before the second and 50 before `[DONE]`.
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(response.chunks().0.len(), 3);
}

#[tokio::test]
async fn a_repeating_reply_never_ends_and_stops_when_the_client_hangs_up() {
    let server = FakeDeepSeek::start().await.unwrap();
    let keep_alive = SseEvent::comment("keep-alive").after(Duration::from_millis(20));
    let (reply, gate) = Reply::sse(vec![SseEvent::data(sse::chunk_role())])
        .repeat_forever(keep_alive.clone())
        .gate();
    server.push(reply);
    gate.release_all();
    let mut stream = client::send(server.addr(), &chat(&body())).await;
    let mut buf = Vec::new();
    assert!(
        read_until(&mut stream, &mut buf, Duration::from_secs(5), |buf| {
            chunks_after_head(buf) >= 6
        })
        .await
    );
    let (chunks, complete) = Response::parse(&buf).chunks();
    assert!(!complete, "a repeating reply never ends its body");
    assert_eq!(chunks[0], sse::render(&[SseEvent::data(sse::chunk_role())]));
    assert!(
        chunks[1..]
            .iter()
            .all(|chunk| *chunk == keep_alive.to_sse())
    );
    assert!(!chunks.iter().any(|chunk| chunk.contains("[DONE]")));
    drop(stream);
    assert!(gate.wait_client_closed(Duration::from_secs(5)).await);
}

#[tokio::test]
async fn an_unexpected_request_gets_a_500_naming_it() {
    let server = FakeDeepSeek::start().await.unwrap();
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert_eq!(response.status, 500);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let error = response.json();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("unexpected request 1"), "{message}");
    assert!(message.contains("POST /chat/completions"), "{message}");
    assert!(message.contains("deepseek-v4-flash"), "{message}");
    assert!(message.contains("last message user: \"hi\""), "{message}");
    assert!(message.contains("no reply is queued"), "{message}");
    assert_eq!(error["error"]["code"], "unexpected_request");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(!requests[0].scripted);
}

#[tokio::test]
async fn matchers_route_racing_requests() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push_when(
        RecordedRequest::has_tools,
        Reply::sse(sse::text_events("turn", 8, None)),
    );
    server.push_when(
        |request| !request.has_tools(),
        Reply::sse(sse::text_events("title", 8, None)),
    );
    let mut title = body();
    title.as_object_mut().unwrap().remove("tools");
    let response = client::exchange(server.addr(), &chat(&title)).await;
    assert!(response.decoded().contains("\"title\""));
    // A request no queued matcher accepts is unexpected, and leaves the queue alone.
    let response = client::exchange(server.addr(), &chat(&title)).await;
    assert_eq!(response.status, 500);
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("none of the 1 queued replies matches it")
    );
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert!(response.decoded().contains("\"turn\""));
    assert_eq!(server.pending(), 0);
}

#[tokio::test]
async fn a_responder_answers_what_the_queue_does_not() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("queued", 8, None)));
    server.respond_with(|request| {
        let last = request.body["messages"][1]["content"]
            .as_str()
            .unwrap_or("");
        Reply::sse(sse::text_events(&format!("built for {last}"), 64, None))
    });
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert!(response.decoded().contains("\"queued\""));
    for _ in 0..2 {
        let response = client::exchange(server.addr(), &chat(&body())).await;
        assert_eq!(response.status, 200);
        assert!(response.decoded().contains("\"built for hi\""));
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|request| request.scripted));
    // Only chat requests reach the responder.
    let other = client::exchange(server.addr(), &post("/models", "{}", &[])).await;
    assert_eq!(other.status, 404);
}

#[tokio::test]
async fn a_kept_alive_reply_serves_the_next_request_on_the_same_connection() {
    let server = FakeDeepSeek::start().await.unwrap();
    let stream_text = sse::render(&[SseEvent::data(sse::chunk_text("a")), SseEvent::done()]);
    let reply = Reply::http(200, "text/event-stream", stream_text.clone()).keep_alive();
    server.push(reply.clone());
    server.push(reply);
    let mut stream = client::send(server.addr(), &chat(&body())).await;
    let expected = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{stream_text}",
        stream_text.len()
    );
    for _ in 0..2 {
        let mut buf = Vec::new();
        assert!(
            read_until(&mut stream, &mut buf, Duration::from_secs(5), |buf| buf
                .len()
                >= expected.len())
            .await
        );
        assert_eq!(String::from_utf8_lossy(&buf), expected);
        stream.write_all(&chat(&body())).await.unwrap();
    }
    // The third request on the connection finds the queue empty: a 500, and the close.
    let rest = client::read_to_end(&mut stream).await;
    assert_eq!(client::Response::parse(&rest).status, 500);
    assert_eq!(server.requests().len(), 3);
    // Keep-alive applies to replies framed by Content-Length only.
    server.push(Reply::sse(sse::text_events("x", 8, None)).keep_alive());
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert_eq!(response.header("connection"), Some("close"));
}

#[test]
fn a_background_server_answers_outside_any_runtime() {
    use std::io::{Read, Write};
    let url = dsh_test_support::fake_deepseek::serve_in_background(|request| {
        let answered = request.body_text.contains("tool_call_id");
        Reply::sse(sse::text_events(
            if answered { "done" } else { "first" },
            64,
            None,
        ))
    })
    .unwrap();
    let addr = url.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(&chat(&body())).unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let response = client::Response::parse(&bytes);
    assert_eq!(response.status, 200);
    assert!(response.decoded().contains("\"first\""));
}

#[tokio::test]
async fn other_routes_methods_and_bodies_are_refused() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("kept", 8, None)));
    let response = client::exchange(server.addr(), &post("/models", "{}", &[])).await;
    assert_eq!(response.status, 404);
    assert_eq!(response.json()["error"]["code"], "not_found");
    let response = client::exchange(
        server.addr(),
        b"GET /chat/completions HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert_eq!(response.status, 405);
    let response = client::exchange(server.addr(), &post("/chat/completions", "{oops", &[])).await;
    assert_eq!(response.status, 400);
    assert_eq!(response.json()["error"]["code"], "invalid_json");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|request| !request.scripted));
    assert_eq!(requests[2].body, serde_json::Value::Null);
    assert_eq!(requests[2].body_text, "{oops");
    assert_eq!(server.pending(), 1, "refused requests take no reply");
}

#[tokio::test]
async fn malformed_requests_get_400_and_the_server_keeps_serving() {
    let server = FakeDeepSeek::start().await.unwrap();
    for garbage in [
        &b"GARBAGE\r\n\r\n"[..],
        b"POST /chat/completions HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
        b"POST /chat/completions HTTP/1.1\r\nbad header\r\n\r\n",
        b"POST /chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"\xff\xfe\r\n\r\n",
    ] {
        let response = client::exchange(server.addr(), garbage).await;
        assert_eq!(
            response.status,
            400,
            "{:?}",
            String::from_utf8_lossy(garbage)
        );
        assert_eq!(response.json()["error"]["code"], "bad_request");
    }
    // A body shorter than announced, then a hang-up.
    let mut stream = client::send(
        server.addr(),
        b"POST /chat/completions HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}",
    )
    .await;
    stream.shutdown().await.unwrap();
    let response = Response::parse(&client::read_to_end(&mut stream).await);
    assert_eq!(response.status, 400);
    // A connection closed without a byte.
    drop(tokio::net::TcpStream::connect(server.addr()).await.unwrap());

    assert!(server.requests().is_empty());
    server.push(Reply::sse(sse::text_events("still here", 20, None)));
    let response = client::exchange(server.addr(), &chat(&body())).await;
    assert_eq!(response.status, 200);
    assert!(response.decoded().contains("still here"));
}

#[tokio::test]
async fn chunked_request_bodies_and_expect_continue_are_accepted() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::sse(sse::text_events("ok", 8, None)));
    let body = body().to_string();
    let (first, second) = body.split_at(10);
    let request = format!(
        "POST /chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n{:x}\r\n{first}\r\n{:x}\r\n{second}\r\n0\r\n\r\n",
        first.len(),
        second.len()
    );
    let mut stream = client::send(server.addr(), request.as_bytes()).await;
    let bytes = client::read_to_end(&mut stream).await;
    let continued = b"HTTP/1.1 100 Continue\r\n\r\n";
    assert!(bytes.starts_with(continued));
    let response = Response::parse(&bytes[continued.len()..]);
    assert_eq!(response.status, 200);
    assert_eq!(server.requests()[0].body, self::body());
}

#[tokio::test]
async fn hang_sends_nothing_and_disconnect_closes_at_once() {
    let server = FakeDeepSeek::start().await.unwrap();
    server.push(Reply::hang());
    server.push(Reply::disconnect());
    let mut hung = client::send(server.addr(), &chat(&body())).await;
    let mut scratch = [0_u8; 16];
    assert!(
        tokio::time::timeout(Duration::from_millis(200), hung.read(&mut scratch))
            .await
            .is_err()
    );
    let mut closed = client::send(server.addr(), &chat(&body())).await;
    assert!(client::read_to_end(&mut closed).await.is_empty());
    assert_eq!(server.wait_for_requests(2).await.unwrap().len(), 2);
}

#[tokio::test]
async fn waiting_for_requests_times_out_with_what_arrived() {
    let server = FakeDeepSeek::start().await.unwrap();
    let _ = client::exchange(server.addr(), &chat(&body())).await;
    assert_eq!(server.wait_for_requests(1).await.unwrap().len(), 1);
    let error = server
        .wait_for_requests_within(2, Duration::from_millis(50))
        .await
        .unwrap_err();
    assert_eq!(error.received.len(), 1);
    let text = error.to_string();
    assert!(text.contains("for 2 request(s), received 1"), "{text}");
    assert!(text.contains("1. POST /chat/completions"), "{text}");
}

#[tokio::test]
async fn a_fixture_exchange_replays_what_dsh_fake_sent() {
    let server = FakeDeepSeek::start().await.unwrap();
    let exchanges = FixtureExchange::load(FIXTURE_CASES[0]).unwrap();
    for exchange in &exchanges {
        server.push(exchange.reply());
    }
    for exchange in &exchanges {
        let request = post(&exchange.url, &exchange.body.to_string(), &[]);
        let response = client::exchange(server.addr(), &request).await;
        assert_eq!(response.status, 200);
        let mut expected = exchange.events();
        expected.push(SseEvent::done());
        assert_eq!(response.decoded(), sse::render(&expected));
    }
    let requests = server.requests();
    assert_eq!(requests.len(), exchanges.len());
    for (request, exchange) in requests.iter().zip(&exchanges) {
        assert_eq!(request.path, exchange.url);
        assert_eq!(request.body, exchange.body);
    }
}

#[tokio::test(start_paused = true)]
async fn a_stall_outlasts_a_client_timeout_under_the_paused_clock() {
    let server = FakeDeepSeek::start().await.unwrap();
    let (reply, gate) = Reply::sse(events()).stall_after(1).gate();
    gate.release_all();
    server.push(reply);
    let mut stream = client::send(server.addr(), &chat(&body())).await;
    let mut buf = Vec::new();
    assert!(
        read_until(&mut stream, &mut buf, Duration::from_secs(5), |buf| {
            chunks_after_head(buf) == 1
        })
        .await
    );
    // A five-minute idle watchdog on the client fires (at once, on the paused clock) while the
    // server still holds the stream: the server has no timer that would end it first.
    let started = tokio::time::Instant::now();
    let mut scratch = [0_u8; 64];
    let idle = tokio::time::timeout(Duration::from_secs(300), stream.read(&mut scratch)).await;
    assert!(idle.is_err(), "the stalled stream sent {idle:?}");
    assert!(started.elapsed() >= Duration::from_secs(300));
    assert!(!gate.client_closed());
    drop(stream);
    assert!(gate.wait_client_closed(Duration::from_secs(5)).await);
}
