//! Random logs written to the SQLite backend read back event for event and byte for byte, and
//! the rows keep schema 17's bounds. (That the JSONL store reads the same logs back the same
//! is checked where both stores are at hand, in the `dsh` binary's suite.)

use dsh_persistence::SessionPersistence;
use dsh_session::SessionHeader;
use dsh_session::repair::interrupted_turn_closers;
use dsh_test_support::plans::{Plan, config, events_of, plan};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::support::{physical_rows, store, texts};

const ID: &str = "differential";

async fn write(store: &dyn SessionPersistence, plan: &Plan) {
    store
        .create(SessionHeader::new(ID, 1_795_976_398_536).with_cwd("/srv/dsh-demo"))
        .await
        .unwrap();
    for batch in events_of(plan) {
        store.append(ID, batch).await.unwrap();
    }
}

fn run(
    body: impl std::future::Future<Output = Result<(), TestCaseError>>,
) -> Result<(), TestCaseError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(body)
}

proptest! {
    #![proptest_config(config(40))]

    #[test]
    fn a_random_log_loads_as_written(plan in plan(1..6)) {
        run(async move {
            let dir = tempfile::tempdir().unwrap();
            let database = dir.path().join("sessions.sqlite");
            write(store(&database).as_ref(), &plan).await;

            let events = events_of(&plan).concat();
            let sqlite = store(&database);
            let from_sqlite = sqlite.read_from(ID, 0).await.unwrap();
            prop_assert_eq!(texts(&from_sqlite), texts(&events));

            let mut balanced = events.clone();
            balanced.extend(interrupted_turn_closers(&events));
            let inspected = sqlite.inspect(ID).await.unwrap();
            prop_assert_eq!(texts(&inspected.events), texts(&balanced));

            // A seek from any seq gives the suffix.
            for from in [1, events.len() / 2, events.len().saturating_sub(1)] {
                let suffix = sqlite.read_from(ID, from as u64).await.unwrap();
                prop_assert_eq!(texts(&suffix), texts(events.get(from..).unwrap_or_default()));
            }

            // Packed rows hold 3..=1024 members and at most 1 MiB of data each.
            for row in physical_rows(&database, ID) {
                if row.ignorable == Some(0) {
                    prop_assert!((3..=1024).contains(&row.members), "{row:?}");
                    prop_assert!(row.data_bytes <= 1_048_576, "{row:?}");
                }
            }
            Ok(())
        })?;
    }
}
