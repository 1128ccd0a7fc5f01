//! `dsh sessions convert`: copy sessions from the profile's store into a store of another
//! format, and prove each copy by reading it back.
//!
//! The source is only read. Each session is created in the destination and appended in
//! batches, so an id the destination already holds is refused by `create` and never
//! overwritten. A copy counts once the destination reads it back as the source reads: the
//! same header line and, event for event, the same canonical JSON (key order of surface
//! fields may differ between backends, the canonical text does not).
//!
//! Headers are compared as the header line `export` prints, where an absent
//! `delegationDepth` reads as 0: dsh's SQLite schema keeps it absent (NULL) for a top-level
//! session, while a JSONL header line always carries it, so a session moved to JSONL comes
//! back with an explicit 0 and means the same.

use dsh_persistence::log_file::header_line::header_line;
use dsh_persistence::{PersistenceError, SessionInspection, SessionListing, SessionPersistence};
use dsh_protocol::json::to_js_string;
use dsh_session::{Canonical, SessionEvent};

use super::destination::Destination;
use super::list::sort_unreadable;
use crate::output;

/// Events per `append`: one transaction or one zstd frame each.
const BATCH: usize = 1_000;

/// What happened to one session.
enum Outcome {
    /// Copied and verified, with the number of stored events.
    Copied(usize),
    /// Not copied, by rule (the destination already has it, or there is nothing to write).
    Skipped(String),
    /// Not copied, or not copied faithfully.
    Failed(String),
}

/// Copies every session of `source` (or only `only`) into `destination`, printing one line
/// per session and a summary; closes the destination. Exit code 0 only when every requested
/// session was copied and verified.
pub async fn convert(
    source: &dyn SessionPersistence,
    destination: &Destination,
    only: Option<&str>,
) -> anyhow::Result<i32> {
    let outcome = convert_all(source, destination, only).await;
    let closed = destination.close().await;
    let code = outcome?;
    if let Err(error) = closed {
        output::diagnostic(&format!(
            "closing the {} failed: {error}",
            destination.describe()
        ));
        return Ok(1);
    }
    Ok(code)
}

async fn convert_all(
    source: &dyn SessionPersistence,
    destination: &Destination,
    only: Option<&str>,
) -> anyhow::Result<i32> {
    let (ids, unreadable) = match only {
        Some(id) => (vec![id.to_owned()], Vec::new()),
        None => {
            let SessionListing {
                sessions: mut headers,
                mut unreadable,
            } = source.list_with_unreadable().await?;
            headers.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            sort_unreadable(&mut unreadable);
            let ids = headers.into_iter().map(|header| header.id).collect();
            (ids, unreadable)
        }
    };
    if ids.is_empty() && unreadable.is_empty() {
        output::stdout("nothing to convert: the profile's session store holds no sessions\n");
        return Ok(0);
    }
    // A destination that cannot be read (not a dsh database, a bad root) fails once, here.
    destination.store().list().await.map_err(|error| {
        anyhow::Error::new(error).context(format!("cannot use the {}", destination.describe()))
    })?;
    let (mut copied, mut skipped, mut failed) = (0_usize, 0_usize, 0_usize);
    // A log the listing could not read fails with its reason (which names it); the others go on.
    for artifact in &unreadable {
        failed += 1;
        let line = match &artifact.id {
            Some(id) => format!("failed {id}: {}\n", artifact.error),
            None => format!("failed: {}\n", artifact.error),
        };
        output::stdout(&line);
    }
    for id in &ids {
        let line = match copy_one(source, destination.store(), id).await {
            Outcome::Copied(events) => {
                copied += 1;
                format!("copied {id} {events} events\n")
            }
            Outcome::Skipped(reason) => {
                skipped += 1;
                format!("skipped {id}: {reason}\n")
            }
            Outcome::Failed(reason) => {
                failed += 1;
                format!("failed {id}: {reason}\n")
            }
        };
        output::stdout(&line);
    }
    output::stdout(&format!(
        "{copied} copied, {skipped} skipped, {failed} failed; destination: {}\n",
        destination.describe()
    ));
    Ok(if copied == ids.len() && unreadable.is_empty() {
        0
    } else {
        1
    })
}

/// Copies one session and verifies the copy.
async fn copy_one(
    source: &dyn SessionPersistence,
    dest: &dyn SessionPersistence,
    id: &str,
) -> Outcome {
    // The stored length first, then the log: if a writer appends in between, the copy is a
    // prefix that fails verification, never stored events mixed with in-memory closers.
    let stored = match source.read_from(id, 0).await {
        Ok(events) => events.len(),
        Err(error) => return Outcome::Failed(error.to_string()),
    };
    let inspection = match source.inspect(id).await {
        Ok(inspection) => inspection,
        Err(error) => return Outcome::Failed(error.to_string()),
    };
    if stored > inspection.events.len() {
        return Outcome::Failed("the log changed while it was read; convert it again".into());
    }
    if stored == 0 {
        return Outcome::Skipped(
            "no stored events, and a store writes a session with its first event".into(),
        );
    }
    match dest.create(inspection.header.clone()).await {
        Ok(()) => {}
        Err(PersistenceError::AlreadyExists(_)) => {
            return Outcome::Skipped("the destination already holds this id; left as it is".into());
        }
        Err(error) => return Outcome::Failed(error.to_string()),
    }
    let expected: Vec<String> = inspection.events.iter().map(canonical).collect();
    let SessionInspection { header, mut events } = inspection;
    events.truncate(stored);
    if let Err(reason) = append_in_batches(dest, id, events).await {
        return Outcome::Failed(reason);
    }
    match dest.inspect(id).await {
        Err(error) => Outcome::Failed(format!("the copy does not read back: {error}")),
        Ok(copy) if header_line(&copy.header) != header_line(&header) => Outcome::Failed(format!(
            "the copy's header differs: {} instead of {}",
            header_line(&copy.header),
            header_line(&header)
        )),
        Ok(copy) => match first_difference(&expected, &copy.events) {
            Some(reason) => Outcome::Failed(format!("the copy differs from the source: {reason}")),
            None => Outcome::Copied(stored),
        },
    }
}

/// Appends `events` in batches of [`BATCH`]; on failure, says how much was written.
async fn append_in_batches(
    dest: &dyn SessionPersistence,
    id: &str,
    events: Vec<SessionEvent>,
) -> Result<(), String> {
    let total = events.len();
    let mut written = 0;
    let mut batch = Vec::with_capacity(BATCH.min(total));
    let mut events = events.into_iter().peekable();
    while let Some(event) = events.next() {
        batch.push(event);
        if batch.len() < BATCH && events.peek().is_some() {
            continue;
        }
        let size = batch.len();
        if let Err(error) = dest.append(id, std::mem::take(&mut batch)).await {
            return Err(format!(
                "{error} (the destination keeps the first {written} of {total} events)"
            ));
        }
        written += size;
    }
    Ok(())
}

/// Where `copy` first differs from the canonical texts `expected`, if anywhere.
fn first_difference(expected: &[String], copy: &[SessionEvent]) -> Option<String> {
    for (index, (want, event)) in expected.iter().zip(copy).enumerate() {
        let got = canonical(event);
        if *want != got {
            return Some(format!(
                "event {index} (seq {}) reads back as {got}",
                event.seq
            ));
        }
    }
    (expected.len() != copy.len()).then(|| {
        format!(
            "it reads back {} events, the source {}",
            copy.len(),
            expected.len()
        )
    })
}

fn canonical(event: &SessionEvent) -> String {
    to_js_string(&Canonical(event))
}
