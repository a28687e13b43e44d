//! The full oracle (every invariant of the catalogue) observing one micro-pass
//! transition of a fixed transcript of 200 and 2,000 messages. The oracle first sees
//! the transcript appended (untimed), as in a case; the timed step is the pass.

use compactsim::bugs::BugSet;
use compactsim::compactor::micro::{MicroCompactor, MicroConfig};
use compactsim::rng::{stream, Stream};
use compactsim::stories::ScriptBuilder;
use compactsim::summarizer::{Summarizer, SummarizerConfig};
use compactsim_invariants::{Oracle, OracleConfig};
use compactsim_model::{Event, Message, MicroOutcome, Transition};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::hint::black_box;

/// Transcript lengths the bench measures.
const MESSAGES: [usize; 2] = [200, 2_000];

/// The transcript before and after one micro pass (it absorbs an exchange, as in
/// the micro_pass bench), and the pass's event.
fn micro_transition(messages: usize) -> (Vec<Message>, Vec<Message>, Event) {
    let (before, mut builder) = ScriptBuilder::transcript(messages);
    let mut after = before.clone();
    let mut summarizer =
        Summarizer::new(SummarizerConfig::reliable(), stream(1, Stream::Summarizer));
    let mut micro = MicroCompactor::new(MicroConfig::with_tail_budget(20_000), BugSet::none());
    let pass = micro.pass(&mut after, 1, &mut summarizer, &mut builder.ids);
    assert_eq!(
        pass.outcome,
        MicroOutcome::Absorbed,
        "the measured pass must absorb"
    );
    (before, after, Event::MicroPass(pass))
}

/// A fresh oracle that has seen `rows` appended as turn 1.
fn primed_oracle(config: OracleConfig, rows: &[Message]) -> Oracle {
    let mut oracle = Oracle::new(config);
    let appended = Event::TurnAppended {
        turn: 1,
        appended: rows.len() as u32,
    };
    oracle.observe(&Transition::new(0, &appended, &[], rows, &[]));
    oracle
}

fn oracle_check(c: &mut Criterion) {
    let config = OracleConfig {
        protect_first_n: MicroConfig::with_tail_budget(20_000).protect_first_n,
        ..OracleConfig::default()
    };
    let mut group = c.benchmark_group("oracle_check");
    for messages in MESSAGES {
        let (before, after, event) = micro_transition(messages);
        group.bench_function(BenchmarkId::from_parameter(messages), |bench| {
            bench.iter_batched(
                || primed_oracle(config, &before),
                |mut oracle| {
                    let found = oracle.observe(&Transition::new(1, &event, &before, &after, &[]));
                    assert!(found.is_empty(), "{found:?}");
                    black_box(oracle)
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, oracle_check);
criterion_main!(benches);
