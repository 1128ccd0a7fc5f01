//! The browser UI, embedded at build time from `ui/` (see `build.rs`).

/// Every UI file: its URL path (`/app.js`), its bytes and its content type.
pub(crate) const ASSETS: &[(&str, &[u8], &str)] = include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// The file served at `path`, with its content type.
pub(crate) fn find(path: &str) -> Option<(&'static [u8], &'static str)> {
    ASSETS
        .iter()
        .find(|(url, _, _)| *url == path)
        .map(|(_, body, kind)| (*body, *kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_script_are_embedded() {
        let (page, kind) = find("/index.html").unwrap_or_default();
        assert_eq!(kind, "text/html; charset=utf-8");
        assert!(String::from_utf8_lossy(page).contains("app.js"));
        assert_eq!(
            find("/app.js").map(|(_, kind)| kind),
            Some("text/javascript")
        );
        assert_eq!(find("/nope.js"), None);
    }
}
