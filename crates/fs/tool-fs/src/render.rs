//! The model-facing texts of `read`, `write` and `edit`, and the read card's language.

use crate::window::WindowLine;

/// dsh's read envelope: the numbered lines and exactly one footer.
pub fn format_read_output(
    display_path: &str,
    offset: u64,
    lines: &[WindowLine],
    total_lines: u64,
    truncated_by_bytes: bool,
) -> String {
    let end = lines
        .last()
        .map_or_else(|| offset.saturating_sub(1), |line| line.number);
    let footer = if truncated_by_bytes {
        format!(
            "(Output capped. Showing lines {offset}-{end}. Use offset={} to continue.)",
            end + 1
        )
    } else if end < total_lines {
        format!(
            "(Showing lines {offset}-{end} of {total_lines}. Use offset={} to continue.)",
            end + 1
        )
    } else {
        format!("(End of file - total {total_lines} lines)")
    };
    let mut body = String::new();
    for line in lines {
        body.push_str(&line.number.to_string());
        body.push_str(": ");
        body.push_str(&line.text);
        body.push('\n');
    }
    if !lines.is_empty() {
        body.push('\n');
    }
    body.push_str(&footer);
    format!("<path>{display_path}</path>\n<type>file</type>\n<content>\n{body}\n</content>")
}

/// The envelope of a write: `Created file` or `Updated file`.
pub fn format_write_output(display_path: &str, created: bool) -> String {
    let what = if created {
        "Created file"
    } else {
        "Updated file"
    };
    format!("<path>{display_path}</path>\n<type>file</type>\n<content>\n{what}\n</content>")
}

/// The text of a successful edit.
pub fn format_edit_output(display_path: &str, replace_all: bool) -> String {
    if replace_all {
        format!(
            "The file {display_path} has been updated. All occurrences were successfully replaced."
        )
    } else {
        format!("The file {display_path} has been updated successfully.")
    }
}

/// The language token of a path's extension for the read card (dsh's small map).
pub fn lang_from_path(path: &str) -> Option<&'static str> {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let dot = base.rfind('.').filter(|&dot| dot > 0)?;
    let ext = base.get(dot + 1..)?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "ts" | "mts" | "cts" => "ts",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "js",
        "jsx" => "jsx",
        "json" | "jsonc" => "json",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        "kt" => "kotlin",
        "sh" | "bash" | "zsh" => "sh",
        "yaml" | "yml" => "yaml",
        "md" | "markdown" => "md",
        "html" | "htm" => "html",
        "py" => "py",
        "rb" => "rb",
        "go" => "go",
        "rs" => "rs",
        "java" => "java",
        "cs" => "cs",
        "swift" => "swift",
        "php" => "php",
        "toml" => "toml",
        "ini" => "ini",
        "mdx" => "mdx",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "sql" => "sql",
        "xml" => "xml",
        "lua" => "lua",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(number: u64, text: &str) -> WindowLine {
        WindowLine {
            number,
            text: text.into(),
        }
    }

    #[test]
    fn the_read_window_fixture() {
        let lines = [
            line(5, "line five"),
            line(6, "line six"),
            line(7, "line seven"),
            line(8, "line eight"),
        ];
        assert_eq!(
            format_read_output("/ws/big.txt", 5, &lines, 10, false),
            "<path>/ws/big.txt</path>\n<type>file</type>\n<content>\n5: line five\n6: line six\n7: line seven\n8: line eight\n\n(Showing lines 5-8 of 10. Use offset=9 to continue.)\n</content>"
        );
        assert_eq!(
            format_read_output("/e", 1, &[], 0, false),
            "<path>/e</path>\n<type>file</type>\n<content>\n(End of file - total 0 lines)\n</content>"
        );
        assert!(
            format_read_output("/c", 1, &[line(1, "a")], 9, true)
                .contains("(Output capped. Showing lines 1-1. Use offset=2 to continue.)")
        );
    }

    #[test]
    fn languages() {
        assert_eq!(lang_from_path("/a/b.RS"), Some("rs"));
        assert_eq!(lang_from_path("x.tsx"), Some("tsx"));
        assert_eq!(lang_from_path(".bashrc"), None);
        assert_eq!(lang_from_path("Makefile"), None);
        assert_eq!(lang_from_path("foo.constructor"), None);
    }
}
