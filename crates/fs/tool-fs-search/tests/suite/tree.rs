//! Temporary trees to search: files, git repositories, symlinks, and modification times set so
//! that the oldest-first order is known.

use std::fs::{File, FileTimes};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// A temporary directory tree.
pub struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    /// An empty tree.
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The tree's root.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `rel` under the root.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `content` to `rel`, creating its directories.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, content).unwrap();
        self
    }

    /// Makes `rel` a git repository (`git init`).
    pub fn git_init(&self, rel: &str) -> &Self {
        let dir = self.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&dir)
            .status()
            .expect("git is installed");
        assert!(status.success(), "git init in {}", dir.display());
        self
    }

    /// A symbolic link `rel` pointing at `target`.
    pub fn symlink(&self, target: &str, rel: &str) -> &Self {
        std::os::unix::fs::symlink(target, self.join(rel)).unwrap();
        self
    }

    /// Sets `rel`'s modification time to `seconds` after a fixed instant.
    pub fn set_mtime(&self, rel: &str, seconds: u64) -> &Self {
        set_mtime(&self.join(rel), seconds);
        self
    }

    /// Gives every file a distinct modification time in depth-first name order (skipping VCS
    /// directories and symlinks), and every directory the time of its first file, so the
    /// oldest-first order of all files is the name-sorted depth-first order, globally and
    /// within every directory.
    pub fn stamp_depth_first(&self) {
        let mut clock = 0;
        stamp(self.path(), &mut clock);
    }
}

fn set_mtime(path: &Path, seconds: u64) {
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000 + seconds);
    let file = File::open(path).unwrap();
    file.set_times(FileTimes::new().set_modified(when).set_accessed(when))
        .unwrap();
}

/// Stamps `dir`'s subtree; returns the time given to its first file.
fn stamp(dir: &Path, clock: &mut u64) -> Option<u64> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    let mut first = None;
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if meta.file_type().is_symlink() || [".git", ".svn", ".hg"].contains(&name.as_str()) {
            continue;
        }
        let time = if meta.is_dir() {
            let start = *clock;
            let time = stamp(&path, clock).unwrap_or(start);
            set_mtime(&path, time);
            time
        } else {
            *clock += 10;
            set_mtime(&path, *clock);
            *clock
        };
        first.get_or_insert(time);
    }
    first
}

/// The tree the ripgrep comparisons search: a git repository with `.gitignore`, `.ignore` and
/// `.rgignore` rules, hidden files and directories, binary files (a NUL early and one far
/// in), CRLF, Latin-1 and UTF-16 text, a file without a final newline, odd names, symlinks,
/// a nested repository, and a plain directory whose `.gitignore` does not apply.
pub fn fixture() -> Tree {
    let tree = Tree::new();
    tree.git_init("repo").git_init("repo/nested-repo");
    tree.write("repo/.gitignore", "*.log\nbuild/\n/rooted.txt\n!keep.log\n")
        .write("repo/.ignore", "secret.txt\n")
        .write("repo/.rgignore", "gen/\n")
        .write(
            "repo/src/main.rs",
            "fn main() {\n    println!(\"hello\");\n}\n",
        )
        .write(
            "repo/src/lib.rs",
            "pub fn hello() -> &'static str {\n    \"hello world\"\n}\n// hello again\n",
        )
        .write(
            "repo/src/nested/deep/mod.rs",
            "// hello from deep\nfn x() {}\n",
        )
        .write("repo/app.log", "hello log\n")
        .write("repo/keep.log", "hello kept\n")
        .write("repo/build/out.txt", "hello build\n")
        .write("repo/gen/code.rs", "hello generated\n")
        .write("repo/secret.txt", "hello secret\n")
        .write("repo/rooted.txt", "hello rooted\n")
        .write("repo/sub/rooted.txt", "hello sub rooted\n")
        .write(
            "repo/sub/notes.md",
            "# hello notes\nno match here\nhello twice hello\n",
        )
        .write("repo/.hidden.txt", "hello hidden\n")
        .write("repo/.config/settings.toml", "greeting = \"hello\"\n")
        .write("repo/.git/hello.txt", "hello vcs\n")
        .write("repo/bin.dat", b"hello\n\0binary hello\n")
        .write("repo/crlf.txt", "hello crlf\r\nsecond\r\nhello again\r\n")
        .write("repo/latin1.txt", b"caf\xe9 hello\n")
        .write("repo/noeol.txt", "last hello")
        .write("repo/cr.txt", "hello cr\r")
        .write(
            "repo/unicode/\u{fc}n\u{ef}.txt",
            "h\u{e9}llo w\u{f6}rld hello\n",
        )
        .write("repo/spaced dir/wei'rd name.txt", "hello spaced\n")
        .write("repo/nested-repo/.gitignore", "*.txt\n")
        .write("repo/nested-repo/a.txt", "hello nested\n")
        .write("repo/nested-repo/b.rs", "hello rs\n")
        .write("plain/.gitignore", "*.txt\n")
        .write("plain/.ignore", "b.txt\n")
        .write("plain/a.txt", "hello plain\n")
        .write("plain/b.txt", "hello b\n")
        .write("plain/c.rs", "fn hello() {}\n");
    let mut late = "hello early\n".repeat(12_000).into_bytes();
    late.extend_from_slice(b"\0 binary part\nhello late\n");
    tree.write("repo/late-binary.dat", late);
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "hello utf16\n".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    tree.write("repo/utf16.txt", utf16);
    tree.symlink("src/main.rs", "repo/link.txt")
        .symlink("src", "repo/linkdir");
    tree.stamp_depth_first();
    tree
}
