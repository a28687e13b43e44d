//! One micro-compaction pass (plus the pre-send repair) on a fixed transcript of 200 and
//! 2,000 messages.

use compactsim_fakes::rng::{stream, Stream};
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
use compactsim_harness::stories::ScriptBuilder;
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::compactor::micro::{MicroCompactor, MicroConfig};
use compactsim_hermes::compactor::repair::repair;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::hint::black_box;

/// Transcript lengths the bench measures.
const MESSAGES: [usize; 2] = [200, 2_000];

fn micro_pass(c: &mut Criterion) {
    let config = MicroConfig::with_tail_budget(20_000);
    let mut group = c.benchmark_group("micro_pass");
    for messages in MESSAGES {
        let (msgs, builder) = ScriptBuilder::transcript(messages);
        group.bench_function(BenchmarkId::from_parameter(messages), |bench| {
            bench.iter_batched(
                || {
                    let summarizer = Summarizer::new(
                        SummarizerConfig::reliable(),
                        stream(1, Stream::Summarizer),
                    );
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
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, micro_pass);
criterion_main!(benches);
