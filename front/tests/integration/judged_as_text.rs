//! Rows are judged as text (DESIGN "Judged as text"): the oracle reads a row's facts from
//! its segments, which is the fast path; it may do so because a segment spells the facts
//! it lists. This test runs cases of every default suite through a wrapper that, around
//! every pass, materializes each segment of the list it has not seen yet and checks the
//! fact names spelled in the bytes (the text path of `compactsim_invariants::text`):
//! - a segment with room for its facts spells exactly those facts;
//! - a segment without that room (a tiny generated row that still carries a fact) spells
//!   a subset of its facts, never another fact; the test prints how many such segments
//!   each suite writes;
//! - no summary body lacks that room: the fake summarizer sizes every summary to spell
//!   the facts it keeps (`summarizer::tokens_to_spell`), in process and as served to an
//!   external compactor, so the invariants that judge summaries (marker-contained,
//!   no-silent-drop) read from the text exactly what the segments list.

use compactsim::cli::args::{CaseParams, SEED_DEFAULT};
use compactsim_fakes::seam::{BatchReport, Compactor};
use compactsim_harness::engine::scramble::Labels;
use compactsim_harness::engine::{run_case_labels, Record};
use compactsim_harness::mutants::{Hooks, Wrapped};
use compactsim_hermes::compactor::reference::Reference;
use compactsim_invariants::text::{chars_to_spell, spelled_facts};
use compactsim_model::{Message, MicroPass};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// Cases per default suite (of 480; every shape family appears in the first 64).
const CASES: u32 = 64;

/// Segments seen, by (seed, chars, kind), and the first whose text disagrees.
#[derive(Default)]
struct Book {
    seen: BTreeSet<(u64, u32, u8)>,
    checked: u64,
    /// Segments that list more facts than their text has room to spell, by kind.
    crowded: BTreeMap<String, u64>,
    mismatch: Option<String>,
}

impl Book {
    fn check(&mut self, msgs: &[Message]) {
        for m in msgs {
            for s in m.content.segments.iter() {
                if !self.seen.insert((s.seed, s.chars, s.kind as u8)) {
                    continue;
                }
                self.checked += 1;
                let spelled = spelled_facts(&s.materialize());
                let room = s.chars >= chars_to_spell(s.kind, &s.facts);
                let agrees = if room {
                    spelled == s.facts
                } else {
                    // Too little room: the text spells some of the facts, never another.
                    spelled.iter().all(|f| s.facts.binary_search(f).is_ok())
                };
                if !room {
                    *self.crowded.entry(format!("{:?}", s.kind)).or_default() += 1;
                }
                if !agrees && self.mismatch.is_none() {
                    self.mismatch = Some(format!(
                        "{:?} segment of {} chars in {} lists {} facts, its text spells {}",
                        s.kind,
                        s.chars,
                        m.id,
                        s.facts.len(),
                        spelled.len()
                    ));
                }
            }
        }
    }
}

/// Checks every list a pass was given and every list it returned.
struct Checking(Arc<Mutex<Book>>);

impl Hooks for Checking {
    fn after_micro(&mut self, before: &[Message], msgs: &mut Vec<Message>, _: &MicroPass) {
        let mut book = self.0.lock().unwrap();
        book.check(before);
        book.check(msgs);
    }

    fn after_batch(&mut self, before: &[Message], msgs: &mut Vec<Message>, _: &BatchReport) {
        let mut book = self.0.lock().unwrap();
        book.check(before);
        book.check(msgs);
    }
}

#[test]
fn every_segment_the_default_suites_write_spells_exactly_its_facts() {
    for strategy in ["micro", "batch", "both"] {
        let suite = CaseParams::parse(SEED_DEFAULT, 25, strategy, &[])
            .unwrap()
            .suite(0, CASES);
        let book = Arc::new(Mutex::new(Book::default()));
        for case in 0..CASES {
            let shared = book.clone();
            let make = move |inner: Reference| -> Box<dyn Compactor> {
                Box::new(Wrapped {
                    inner: Box::new(inner),
                    hooks: Checking(shared.clone()),
                    name: "checking".into(),
                })
            };
            run_case_labels(
                &suite.spec(case),
                Record::default(),
                &make,
                Labels::AsReported,
            );
        }
        let book = book.lock().unwrap();
        println!(
            "{strategy}: {} segments checked; with more facts than room to spell them: {:?}",
            book.checked, book.crowded
        );
        assert!(
            book.checked > 1_000,
            "{strategy}: {} segments",
            book.checked
        );
        assert_eq!(book.mismatch, None, "{strategy}");
        assert_eq!(
            book.crowded.get("Summary"),
            None,
            "{strategy}: a summary lists facts its text has no room to spell"
        );
    }
}
