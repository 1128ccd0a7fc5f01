//! Logs that are not logs: a FIFO, a directory or a symbolic link where a log belongs, and
//! damaged, empty or misplaced logs next to healthy ones. Nothing blocks, each is refused
//! naming its path and what it is, and one bad log never hides the healthy ones.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use dsh_persistence::log_file::zstd_frames::compress_frame;
use dsh_persistence::{PersistenceError, SessionPersistence, UnreadableSession};
use dsh_persistence_jsonl::Compression;
use pretty_assertions::assert_eq;

use super::support::{FIXTURES, dyn_store, store};

/// A test body's future.
type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// What [`every_read`] saw: each read's outcome, the plain listing, the unreadable artifacts.
type Reads = (Vec<Result<(), String>>, Vec<String>, Vec<UnreadableSession>);

/// How long a read may take before the test calls it hung.
const DEADLINE: Duration = Duration::from_secs(10);

/// Where a log of session `id` (cwd `/srv/dsh-demo`) lives under `root`.
fn log_at(root: &Path, id: &str, compression: Compression) -> PathBuf {
    let dir = root.join("--srv-dsh-demo--").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(compression.transcript_name())
}

fn make_fifo(path: &Path) {
    nix::unistd::mkfifo(
        path,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .unwrap();
}

/// Runs `work` on a store over `root` in a thread of its own and fails the test if it has
/// not finished by [`DEADLINE`]. A reader blocked on a FIFO is then released (a writer opens
/// and closes it), so a hung read fails the test instead of hanging it.
fn within_deadline<T: Send + 'static>(
    root: &Path,
    compression: Compression,
    fifo: Option<&Path>,
    work: impl FnOnce(std::sync::Arc<dyn SessionPersistence>) -> BoxFuture<T> + Send + 'static,
) -> T {
    let (sender, receiver) = mpsc::channel();
    let store = dyn_store(root, compression, true);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _ = sender.send(runtime.block_on(work(store)));
    });
    match receiver.recv_timeout(DEADLINE) {
        Ok(value) => value,
        Err(_) => {
            if let Some(fifo) = fifo {
                let _ = std::fs::OpenOptions::new().write(true).open(fifo);
            }
            panic!("the store blocked for {DEADLINE:?} (on a FIFO?)");
        }
    }
}

/// Every read of `id`, and the listing, as texts: `Ok` or the error.
fn every_read(store: std::sync::Arc<dyn SessionPersistence>, id: &'static str) -> BoxFuture<Reads> {
    Box::pin(async move {
        let text = |result: Result<(), PersistenceError>| result.map_err(|e| e.to_string());
        let reads = vec![
            text(store.load(id).await.map(drop)),
            text(store.inspect(id).await.map(drop)),
            text(store.prepare(id).await.map(drop)),
            text(store.read_from(id, 0).await.map(drop)),
            text(store.read_raw(id).await.map(drop)),
        ];
        let listed = store
            .list()
            .await
            .unwrap()
            .into_iter()
            .map(|header| header.id)
            .collect();
        let listing = store.list_with_unreadable().await.unwrap();
        (reads, listed, listing.unreadable)
    })
}

/// Checks that every read of `id` fails with `error`, the healthy fixture is still listed,
/// and the listing reports `error` once, for `path`.
fn assert_refused_everywhere(root: &Path, compression: Compression, path: &Path, error: &str) {
    let healthy = FIXTURES[0].install(root);
    let fifo = path.exists().then_some(path);
    let (reads, listed, unreadable) =
        within_deadline(root, compression, fifo, |store| every_read(store, "bad"));
    for read in reads {
        assert_eq!(read, Err(error.to_owned()));
    }
    assert_eq!(listed, [FIXTURES[0].id], "the healthy log is listed");
    assert_eq!(
        unreadable,
        [UnreadableSession {
            id: Some("bad".into()),
            path: Some(path.to_path_buf()),
            error: error.to_owned(),
        }]
    );
    assert!(healthy.exists());
}

#[test]
fn a_fifo_in_place_of_a_log_is_refused_without_blocking() {
    for compression in [Compression::Zstd, Compression::None] {
        let root = tempfile::tempdir().unwrap();
        let path = log_at(root.path(), "bad", compression);
        make_fifo(&path);
        let error = format!(
            "session log \"{}\" is a FIFO, not a regular file; move it out of the session store",
            path.display()
        );
        assert_refused_everywhere(root.path(), Compression::Zstd, &path, &error);
    }
}

#[test]
fn a_directory_in_place_of_a_log_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let path = log_at(root.path(), "bad", Compression::Zstd);
    std::fs::create_dir(&path).unwrap();
    let error = format!(
        "session log \"{}\" is a directory, not a regular file; move it out of the session store",
        path.display()
    );
    assert_refused_everywhere(root.path(), Compression::Zstd, &path, &error);
}

#[test]
fn a_symbolic_link_in_place_of_a_log_is_not_followed() {
    let root = tempfile::tempdir().unwrap();
    // The link points at a perfectly good log of the same id: it is still not read.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = FIXTURES[1].install(elsewhere.path());
    let path = log_at(root.path(), "bad", Compression::None);
    std::os::unix::fs::symlink(&target, &path).unwrap();
    let error = format!(
        "session log \"{}\" is a symbolic link, not a regular file; dsh never reads a session log \
         through a link, so put the log itself there or move the link out of the session store",
        path.display()
    );
    assert_refused_everywhere(root.path(), Compression::Zstd, &path, &error);
}

#[test]
fn bad_logs_are_reported_one_by_one_next_to_the_healthy_ones() {
    let root = tempfile::tempdir().unwrap();
    let healthy: Vec<PathBuf> = FIXTURES
        .iter()
        .map(|fixture| fixture.install(root.path()))
        .collect();
    // A raw log whose header names another session than its directory.
    let foreign = log_at(root.path(), "foreign", Compression::None);
    std::fs::copy(&healthy[1], &foreign).unwrap();
    // A zstd log whose first frame is damaged.
    let damaged = log_at(root.path(), "damaged", Compression::Zstd);
    let mut bytes = std::fs::read(&healthy[0]).unwrap();
    bytes[20] ^= 0xff;
    std::fs::write(&damaged, &bytes).unwrap();
    // Garbage, an empty log, and first lines or frames that never end.
    let garbage = log_at(root.path(), "garbage", Compression::None);
    std::fs::write(&garbage, "not a log at all\n").unwrap();
    let empty_raw = log_at(root.path(), "empty-raw", Compression::None);
    std::fs::write(&empty_raw, "").unwrap();
    let empty_zstd = log_at(root.path(), "empty-zstd", Compression::Zstd);
    std::fs::write(&empty_zstd, "").unwrap();
    let cut_raw = log_at(root.path(), "cut-raw", Compression::None);
    std::fs::write(&cut_raw, "{\"type\":\"session\",\"version\":0").unwrap();
    let cut_zstd = log_at(root.path(), "cut-zstd", Compression::Zstd);
    let frame = compress_frame(b"{\"type\":\"session\"}\n").unwrap();
    std::fs::write(&cut_zstd, &frame[..frame.len() - 3]).unwrap();

    let persistence = store(root.path(), Compression::Zstd, true);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listing = runtime
        .block_on(persistence.list_with_unreadable())
        .unwrap();
    let mut ids: Vec<&str> = listing.sessions.iter().map(|h| h.id.as_str()).collect();
    ids.sort_unstable();
    let mut expected: Vec<&str> = FIXTURES.iter().map(|fixture| fixture.id).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected, "every healthy session is listed");

    let mut found: Vec<(Option<String>, Option<PathBuf>, String)> = listing
        .unreadable
        .into_iter()
        .map(|artifact| (artifact.id, artifact.path, artifact.error))
        .collect();
    found.sort();
    let validation = |id: &str, cause: String| {
        (
            Some(id.to_owned()),
            cause,
            format!("stored session \"{id}\" failed validation: "),
        )
    };
    let mut wanted = vec![
        (
            validation(
                "cut-raw",
                "header-less session log: the first line does not end".into(),
            ),
            &cut_raw,
        ),
        (
            validation(
                "cut-zstd",
                "header-less Zstandard session log: the first frame does not end".into(),
            ),
            &cut_zstd,
        ),
        (
            validation(
                "damaged",
                "corrupt Zstandard session log: header frame failed validation".into(),
            ),
            &damaged,
        ),
        (
            validation("empty-raw", "empty session log".into()),
            &empty_raw,
        ),
        (
            validation("empty-zstd", "empty Zstandard session log".into()),
            &empty_zstd,
        ),
        (
            validation(
                "garbage",
                "corrupt session log: header line is not valid JSON".into(),
            ),
            &garbage,
        ),
    ]
    .into_iter()
    .map(|((id, cause, prefix), path)| {
        (
            id,
            Some(path.clone()),
            format!("{prefix}{cause} (file: {})", path.display()),
        )
    })
    .collect::<Vec<_>>();
    wanted.push((
        Some("foreign".into()),
        Some(foreign.clone()),
        format!(
            "stored session \"foreign\" failed validation: corrupt session log \"{}\": header id \
             \"{}\" and cwd identify \"{}\"",
            foreign.display(),
            FIXTURES[1].id,
            healthy[1].display()
        ),
    ));
    wanted.sort();
    assert_eq!(found, wanted);
    // Each reason names its file once.
    for (_, path, error) in &found {
        let path = path.as_ref().unwrap().display().to_string();
        assert_eq!(error.matches(&path).count(), 1, "{error}");
    }
}
