//! What a path holds, in the words of the file-backed stores' messages.

use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;

/// The kind of file-system object `file_type` is, with its article: `a regular file`,
/// `a directory`, `a symbolic link`, `a FIFO`, `a socket`, `a block device`,
/// `a character device`.
pub fn file_kind(file_type: FileType) -> &'static str {
    if file_type.is_file() {
        "a regular file"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_char_device() {
        "a character device"
    } else {
        "an object of unknown type"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_named() {
        let dir = std::env::temp_dir();
        let kind = |path: &std::path::Path| {
            file_kind(std::fs::symlink_metadata(path).unwrap().file_type())
        };
        assert_eq!(kind(&dir), "a directory");
        assert_eq!(
            kind(std::path::Path::new("/dev/null")),
            "a character device"
        );
        let file = dir.join(format!("dsh-file-kind-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        assert_eq!(kind(&file), "a regular file");
        let link = file.with_extension("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(kind(&link), "a symbolic link");
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_file(&file).unwrap();
    }
}
