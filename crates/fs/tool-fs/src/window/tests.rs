use proptest::prelude::*;

use super::*;

fn request(offset: u64, limit: u64) -> WindowRequest {
    WindowRequest {
        offset,
        limit,
        max_line_length: 2000,
        max_bytes: 51200,
    }
}

fn build(chunks: &[&str], request: WindowRequest) -> Result<Window, String> {
    let mut builder = WindowBuilder::new(request);
    for chunk in chunks {
        builder.push(chunk);
    }
    builder
        .finish("/f")
        .map_err(|error| error.message().to_owned())
}

fn texts(window: &Window) -> Vec<(u64, &str)> {
    window
        .lines
        .iter()
        .map(|line| (line.number, line.text.as_str()))
        .collect()
}

#[test]
fn line_counting_follows_dsh() {
    assert_eq!(build(&[""], request(1, 10)).unwrap().total_lines, 0);
    assert_eq!(build(&["\n"], request(1, 10)).unwrap().total_lines, 1);
    assert_eq!(build(&["a\n\n"], request(1, 10)).unwrap().total_lines, 2);
    assert_eq!(build(&["a\nb"], request(1, 10)).unwrap().total_lines, 2);
    let crlf = build(&["one\r\ntwo\r", "\nthree\r"], request(1, 10)).unwrap();
    assert_eq!(texts(&crlf), vec![(1, "one"), (2, "two"), (3, "three")]);
}

#[test]
fn offset_and_limit_choose_the_window() {
    let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
    let window = build(&[&text], request(5, 4)).unwrap();
    assert_eq!(
        texts(&window),
        vec![(5, "line 5"), (6, "line 6"), (7, "line 7"), (8, "line 8")]
    );
    assert_eq!(window.total_lines, 10);
    assert_eq!(
        build(&[&text], request(11, 4)).unwrap_err(),
        "offset 11 is out of range for \"/f\" (10 lines)"
    );
    assert!(build(&[""], request(1, 4)).is_ok());
    assert!(build(&[""], request(2, 4)).is_err());
}

#[test]
fn long_lines_and_the_byte_cap() {
    let long = "x".repeat(2500);
    let window = build(&[&long[..1000], &long[1000..]], request(1, 10)).unwrap();
    assert_eq!(
        window.lines[0].text,
        format!("{}... (line truncated to 2000 chars)", "x".repeat(2000))
    );
    let capped = WindowRequest {
        max_bytes: 10,
        ..request(1, 10)
    };
    let window = build(&["12345\n1234\n1\n"], capped).unwrap();
    assert_eq!(texts(&window), vec![(1, "12345"), (2, "1234")]);
    assert!(window.truncated_by_bytes);
    assert_eq!(window.total_lines, 3);
}

proptest! {
    #[test]
    fn chunking_never_changes_the_window(
        text in "[a-c\r\n😀]{0,80}",
        cuts in proptest::collection::vec(0usize..80, 0..6),
        offset in 1u64..6,
        limit in 1u64..6,
        max_line_length in 1usize..6,
    ) {
        let request = WindowRequest { offset, limit, max_line_length, max_bytes: 40 };
        let whole = build(&[&text], request);
        let mut bounds: Vec<usize> = cuts.into_iter().filter(|at| text.is_char_boundary(*at)).collect();
        bounds.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for end in bounds {
            chunks.push(&text[start..end]);
            start = end;
        }
        chunks.push(&text[start..]);
        prop_assert_eq!(build(&chunks, request), whole);
    }
}
