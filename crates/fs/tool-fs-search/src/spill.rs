//! Saving the full text of an over-cap result, so the model can read or grep it: in the
//! process's private spill directory (the one `bash` spills into, mode 0700, which confined
//! commands may read but never write), one new file per result (`<12 hex>-<name>`, mode
//! 0600, created exclusively so nothing planted can redirect it).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Twelve random hex digits, from the operating system's generator.
fn random_hex() -> String {
    let mut hex = uuid::Uuid::new_v4().simple().to_string();
    hex.truncate(12);
    hex
}

/// Writes `content` to a new file `<12 hex>-<name>` in `dir`, mode 0600, and returns its path.
fn save_in(dir: &Path, name: &str, content: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(format!("{}-{name}", random_hex()));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    file.write_all(content.as_bytes())?;
    file.sync_all()?;
    Ok(path)
}

/// Saves a full result as `name` (`glob-results.txt`, `grep-results.txt`) and returns the path
/// to show the model, or `None` when it could not be saved (the caller then says so; a failed
/// save never fails the search).
pub fn save_text(name: &str, content: &str) -> Option<String> {
    let saved = dsh_shell::default_spill_dir().and_then(|dir| save_in(&dir, name, content));
    match saved {
        Ok(path) => Some(path.to_string_lossy().into_owned()),
        Err(error) => {
            tracing::warn!("tool-fs-search: the complete {name} could not be saved: {error}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_private_and_named_as_dsh_names_them() {
        let dir = dsh_shell::default_spill_dir().unwrap();
        let path = save_in(&dir, "grep-results.txt", "Found 1 match").unwrap();
        let file = path.file_name().unwrap().to_str().unwrap();
        let (hex, rest) = file.split_at(12);
        assert!(hex.bytes().all(|byte| byte.is_ascii_hexdigit()), "{file}");
        assert_eq!(rest, "-grep-results.txt");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "Found 1 match");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir), 0o700);
            assert_eq!(mode(&path), 0o600);
        }
    }

    #[test]
    fn the_process_directory_is_reused() {
        let first = save_text("glob-results.txt", "a").unwrap();
        let second = save_text("glob-results.txt", "b").unwrap();
        assert_ne!(first, second);
        assert_eq!(Path::new(&first).parent(), Path::new(&second).parent());
        assert!(save_in(Path::new("/nonexistent/dir"), "x", "y").is_err());
    }
}
