//! The full oracle (every invariant of the catalogue) observing one micro-pass
//! transition of a fixed transcript of 200 and 2,000 messages. The oracle first sees
//! the transcript appended (untimed), as in a case; the timed step is the pass.

use compactsim_fakes::rng::{stream, Stream};
use compactsim_fakes::summarizer::served::Serving;
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
use compactsim_harness::stories::ScriptBuilder;
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::compactor::micro::{MicroCompactor, MicroConfig};
use compactsim_invariants::{Oracle, OracleConfig};
use compactsim_model::{Event, Message, MicroOutcome, ServedCall, Transition};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::hint::black_box;

/// Transcript lengths the bench measures.
const MESSAGES: [usize; 2] = [200, 2_000];

/// One observed micro pass: the transcript before and after, the pass's event and the
/// summarizer calls the harness served during it (as the engine records them).
type Observed = (Vec<Message>, Vec<Message>, Event, Vec<ServedCall>);

/// One micro pass over a fixed transcript (it absorbs an exchange, as in the
/// micro_pass bench).
fn micro_transition(messages: usize) -> Observed {
    let (before, mut builder) = ScriptBuilder::transcript(messages);
    let mut after = before.clone();
    let mut summarizer =
        Summarizer::new(SummarizerConfig::reliable(), stream(1, Stream::Summarizer));
    let mut micro = MicroCompactor::new(MicroConfig::with_tail_budget(20_000), BugSet::none());
    let mut serving = Serving::new(&mut summarizer);
    let pass = micro.pass(&mut after, 1, &mut serving, &mut builder.ids);
    let served = serving.into_calls();
    assert_eq!(
        pass.outcome,
        MicroOutcome::Absorbed,
        "the measured pass must absorb"
    );
    (before, after, Event::MicroPass(pass), served)
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
        let (before, after, event, served) = micro_transition(messages);
        group.bench_function(BenchmarkId::from_parameter(messages), |bench| {
            bench.iter_batched(
                || primed_oracle(config, &before),
                |mut oracle| {
                    let step = Transition::new(1, &event, &before, &after, &served);
                    let found = oracle.observe(&step);
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
