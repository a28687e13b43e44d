//! One batch compression (`compress()`, 0.19.0 defaults on a 128K window) on a fixed
//! transcript of 200 and 2,000 messages; the pass commits a summary.

use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::{stream, Stream};
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
use compactsim_harness::stories::ScriptBuilder;
use compactsim_hermes::compactor::batch::{compress, BatchConfig, BatchOutcome, BatchState};
use compactsim_model::Message;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::hint::black_box;

/// Transcript lengths the bench measures.
const MESSAGES: [usize; 2] = [200, 2_000];

/// One first compression of `msgs` with a reliable summarizer.
fn compress_once(msgs: &mut Vec<Message>, ids: &mut IdAlloc, config: &BatchConfig) -> BatchOutcome {
    let mut summarizer =
        Summarizer::new(SummarizerConfig::reliable(), stream(1, Stream::Summarizer));
    let mut state = BatchState::default();
    compress(msgs, config, &mut state, &mut summarizer, ids, 0, false)
}

fn batch_pass(c: &mut Criterion) {
    let config = BatchConfig::default();
    let mut group = c.benchmark_group("batch_pass");
    for messages in MESSAGES {
        let (msgs, builder) = ScriptBuilder::transcript(messages);
        let mut probe = (msgs.clone(), builder.ids.clone());
        let out = compress_once(&mut probe.0, &mut probe.1, &config);
        assert!(out.committed(), "the measured pass must commit: {out:?}");
        group.bench_function(BenchmarkId::from_parameter(messages), |bench| {
            bench.iter_batched(
                || (msgs.clone(), builder.ids.clone()),
                |(mut m, mut ids)| {
                    let out = compress_once(&mut m, &mut ids, &config);
                    black_box((out, m))
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, batch_pass);
criterion_main!(benches);
