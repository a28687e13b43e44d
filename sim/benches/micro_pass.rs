//! One micro-compaction pass (plus the pre-send repair) on a 200-message transcript.

use compactsim::bugs::BugSet;
use compactsim::compactor::micro::{MicroCompactor, MicroConfig};
use compactsim::compactor::repair::repair;
use compactsim::rng::{stream, Stream};
use compactsim::stories::ScriptBuilder;
use compactsim::summarizer::{Summarizer, SummarizerConfig};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;

/// Transcript length the bench measures.
const MESSAGES: usize = 200;

fn transcript() -> (Vec<compactsim_model::Message>, ScriptBuilder) {
    let mut b = ScriptBuilder {
        ids: Default::default(),
    };
    let mut msgs = Vec::new();
    while msgs.len() < MESSAGES {
        msgs.extend(b.turn(400, 3_000, 600));
    }
    msgs.truncate(MESSAGES - MESSAGES % 4);
    (msgs, b)
}

fn micro_pass(c: &mut Criterion) {
    let (msgs, builder) = transcript();
    let config = MicroConfig::with_tail_budget(20_000);
    c.bench_function("micro_pass_200_messages", |bench| {
        bench.iter_batched(
            || {
                let summarizer =
                    Summarizer::new(SummarizerConfig::reliable(), stream(1, Stream::Summarizer));
                (
                    msgs.clone(),
                    builder.ids.clone(),
                    MicroCompactor::new(config, BugSet::none()),
                    summarizer,
                )
            },
            |(mut m, mut ids, mut micro, mut summarizer)| {
                let ev = micro.pass(&mut m, 1, &mut summarizer, &mut ids);
                repair(&mut m);
                black_box((ev, m))
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, micro_pass);
criterion_main!(benches);
