//! What a summarize prompt quotes of a transcript's texts (`quoted_chars_total`, the
//! harness side of every `summarize` call of an external compactor), on transcripts of
//! 200 and 2,000 messages: the prompt quotes the middle half of the rows whole and cuts
//! every tenth row to its head and tail, the adapter's usual shapes.

use compactsim_harness::external::quotes::quoted_chars_total;
use compactsim_harness::stories::ScriptBuilder;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;

/// Transcript lengths the bench measures.
const MESSAGES: [usize; 2] = [200, 2_000];
/// Bytes an adapter keeps of each end of a row it cuts.
const CUT_END_BYTES: usize = 60;

fn quoted_chars(c: &mut Criterion) {
    let mut group = c.benchmark_group("quoted_chars");
    for messages in MESSAGES {
        let (msgs, _) = ScriptBuilder::transcript(messages);
        let texts: Vec<String> = msgs
            .iter()
            .flat_map(|m| m.content.segments.iter())
            .map(|s| s.materialize())
            .collect();
        let mut prompt = String::from("Summarize the conversation below.\n\n");
        for (i, text) in texts.iter().enumerate().skip(texts.len() / 4) {
            if i > 3 * texts.len() / 4 {
                break;
            }
            if i % 10 == 0 && text.len() > 2 * CUT_END_BYTES {
                prompt.push_str(&text[..CUT_END_BYTES]);
                prompt.push_str(" [...] ");
                prompt.push_str(&text[text.len() - CUT_END_BYTES..]);
            } else {
                prompt.push_str(text);
            }
            prompt.push_str("\n\n");
        }
        group.bench_function(BenchmarkId::from_parameter(messages), |bench| {
            bench.iter(|| black_box(quoted_chars_total(black_box(&prompt), &texts)))
        });
    }
    group.finish();
}

criterion_group!(benches, quoted_chars);
criterion_main!(benches);
