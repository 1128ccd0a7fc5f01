//! Range selection never separates a tool pair, and keeps exactly the nodes after its cut.

use dsh_compaction::{PricedNode, ToolPairing, select_compactable_range};
use proptest::prelude::*;

/// One indivisible unit of a surface: a plain node, or an assistant message with its
/// calls followed by their results (plain nodes may sit between results).
#[derive(Debug, Clone)]
enum Unit {
    Plain,
    Step { calls: usize, between: Vec<bool> },
}

fn unit() -> impl Strategy<Value = Unit> {
    prop_oneof![
        Just(Unit::Plain),
        (1usize..=3)
            .prop_flat_map(|calls| (Just(calls), prop::collection::vec(any::<bool>(), calls)))
            .prop_map(|(calls, between)| Unit::Step { calls, between }),
    ]
}

/// A surface: per node its delta, its price and the unit it belongs to.
fn surface() -> impl Strategy<Value = (Vec<i64>, Vec<u64>, Vec<usize>, Vec<u64>)> {
    prop::collection::vec(unit(), 0..12).prop_flat_map(|units| {
        let mut deltas = Vec::new();
        let mut owner = Vec::new();
        for (index, unit) in units.iter().enumerate() {
            match unit {
                Unit::Plain => {
                    deltas.push(0);
                    owner.push(index);
                }
                Unit::Step { calls, between } => {
                    deltas.push(i64::try_from(*calls).unwrap());
                    owner.push(index);
                    for &plain in between {
                        if plain {
                            deltas.push(0);
                            owner.push(index);
                        }
                        deltas.push(-1);
                        owner.push(index);
                    }
                }
            }
        }
        let n = deltas.len();
        // Distinct seqs in any order: surface order is not seq order after replacements.
        let seqs = Just((0..n as u64).map(|i| i * 3 + 1).collect::<Vec<_>>()).prop_shuffle();
        (
            Just(deltas),
            prop::collection::vec(0u64..50, n),
            Just(owner),
            seqs,
        )
    })
}

proptest! {
    #[test]
    fn the_cut_never_splits_a_pair((deltas, prices, owner, seqs) in surface(), retain in 0u64..400) {
        let n = seqs.len();
        let pairing = ToolPairing::from_deltas(&seqs, |seq| {
            seqs.iter().position(|s| *s == seq).map(|i| deltas[i])
        }).unwrap();
        let priced: Vec<PricedNode> = seqs
            .iter()
            .zip(&prices)
            .map(|(&seq, &tokens)| PricedNode { seq, tokens })
            .collect();
        let suffix = |cut: usize| prices[cut..].iter().sum::<u64>();
        let chosen = select_compactable_range(&priced, &seqs, &pairing, retain).unwrap();
        match chosen {
            Some(range) => {
                let cut = range.keep_from;
                prop_assert!(cut >= 1 && cut < n);
                // No unit straddles the cut.
                prop_assert_ne!(owner[cut - 1], owner[cut]);
                // Head-anchored span; the retained tail is exactly the nodes after the cut.
                prop_assert_eq!(range.span.start, seqs[0]);
                prop_assert_eq!(range.span.end, seqs[cut - 1]);
                let shadowed = &seqs[..cut];
                let retained = &seqs[cut..];
                prop_assert_eq!([shadowed, retained].concat(), seqs.clone());
                prop_assert!(suffix(cut) >= retain);
                // The cut is the latest balanced one that still retains enough.
                for later in cut + 1..n {
                    if owner[later - 1] != owner[later] {
                        prop_assert!(suffix(later) < retain);
                    }
                }
            }
            None => {
                for cut in 1..n {
                    if owner[cut - 1] != owner[cut] {
                        prop_assert!(suffix(cut) < retain);
                    }
                }
            }
        }
    }
}
