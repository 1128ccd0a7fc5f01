//! Embeds the browser UI: every file under `ui/` becomes an entry of `ASSETS` (URL path,
//! bytes, content type) in `$OUT_DIR/assets.rs`, which `src/assets.rs` includes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() -> std::io::Result<()> {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("ui");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut table = String::from("&[\n");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let Ok(relative) = file.strip_prefix(&root) else {
            continue;
        };
        let url = format!("/{}", relative.to_string_lossy().replace('\\', "/"));
        let _ = writeln!(
            table,
            "    ({url:?}, include_bytes!({:?}), {:?}),",
            file.display().to_string(),
            content_type(file)
        );
    }
    table.push(']');
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("assets.rs");
    std::fs::write(out, table)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Dotfiles and editor backups are not part of the UI.
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|ext| ext.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript",
        Some("css") => "text/css",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}
