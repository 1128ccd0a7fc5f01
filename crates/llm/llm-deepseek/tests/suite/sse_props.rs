use dsh_llm_deepseek::sse::{SseItem, SseParser};
use dsh_test_support::sse::{self, SseEvent};
use proptest::prelude::*;

fn parse_split(bytes: &[u8], cuts: &[usize]) -> Vec<SseItem> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    let mut start = 0;
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    for cut in cuts {
        parser.feed(&bytes[start..cut], &mut out);
        start = cut;
    }
    parser.feed(&bytes[start..], &mut out);
    out
}

fn stream_text(line_end: &str) -> String {
    let mut events = vec![SseEvent::comment("hi")];
    events.extend(sse::text_events(
        "héllo wörld ✓",
        3,
        Some(sse::usage(1, 2, Some(1), None)),
    ));
    events.push(SseEvent::raw("data: a\ndata: b\n\n"));
    events.push(SseEvent::done());
    sse::render(&events).replace('\n', line_end)
}

proptest! {
    #[test]
    fn any_split_gives_the_same_events(
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        line_end in prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
    ) {
        let text = stream_text(line_end);
        let whole = parse_split(text.as_bytes(), &[]);
        prop_assert_eq!(whole.last(), Some(&SseItem::Done));
        prop_assert!(whole.contains(&SseItem::Data("a\nb".into())));
        prop_assert_eq!(parse_split(text.as_bytes(), &cuts), whole);
    }
}
