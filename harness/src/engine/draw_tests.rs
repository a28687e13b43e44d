use super::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const STRATEGIES: [&str; 4] = ["micro", "batch", "both", "gateway"];
const CASES: u32 = 400;

/// Every knob each strategy's cases drew, with its value.
fn drawn(strategy: &str) -> Vec<(Knob, u64)> {
    let mut all = Vec::new();
    for case in 0..CASES {
        let spec = CaseSpec::drawn(case, strategy);
        all.extend(drawn_by(|| {
            draw(&spec);
        }));
    }
    all
}

#[test]
fn every_knob_drawn_is_a_row_of_the_table_and_within_its_range() {
    let mut seen = BTreeSet::new();
    for strategy in STRATEGIES {
        for (knob, value) in drawn(strategy) {
            assert!(
                KNOBS.contains(&knob),
                "{strategy}: `{}` drawn outside the table",
                knob.name
            );
            assert!(
                knob.range.contains(value),
                "{strategy}: `{}` = {value}, outside {:?}",
                knob.name,
                knob.range
            );
            seen.insert(knob.name);
        }
    }
    let unused: Vec<&str> = KNOBS
        .iter()
        .map(|k| k.name)
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(unused.is_empty(), "rows no case drew: {unused:?}");
}

#[test]
fn rows_are_unique_and_each_stream_is_one_block() {
    let names: BTreeSet<&str> = KNOBS.iter().map(|k| k.name).collect();
    assert_eq!(names.len(), KNOBS.len(), "a knob name twice");
    let mut streams: Vec<Stream> = KNOBS.iter().map(|k| k.stream).collect();
    streams.dedup();
    let distinct: BTreeSet<Stream> = streams.iter().copied().collect();
    assert_eq!(streams.len(), distinct.len(), "a stream's rows are split");
}

/// The streams each strategy's worlds read at run time: [`draw`] hands over exactly
/// these (a stream no world of the strategy reads is not opened), and only the rows of
/// the strategy's streams are drawn.
#[test]
fn the_one_entry_draws_only_what_its_strategy_uses() {
    for strategy in STRATEGIES {
        let agent_loop = strategy != "micro";
        let loop_restarts = matches!(strategy, "batch" | "both");
        let gateway = strategy == "gateway";
        for case in 0..50 {
            let spec = CaseSpec::drawn(case, strategy);
            let c = draw(&spec);
            assert_eq!(c.agent.is_some(), agent_loop, "{strategy}");
            assert_eq!(c.streams.provider.is_some(), agent_loop, "{strategy}");
            assert_eq!(
                c.streams.loop_restarts.is_some(),
                loop_restarts,
                "{strategy}"
            );
            assert_eq!(c.gateway.is_some(), gateway, "{strategy}");
            assert_eq!(c.streams.gateway.is_some(), gateway, "{strategy}");
            assert!(strategy == "both" || !c.marker_restart, "{strategy}");
            // The same case drawn twice is the same case.
            let again = draw(&spec);
            assert_eq!((&c.setup, &c.agent), (&again.setup, &again.agent));
            assert_eq!(c.gateway, again.gateway);
        }
        let streams: BTreeSet<Stream> = drawn(strategy).iter().map(|(k, _)| k.stream).collect();
        let agent_streams = [Stream::Provider, Stream::FaultMix];
        assert_eq!(
            agent_streams.iter().any(|s| streams.contains(s)),
            agent_loop,
            "{strategy}: {streams:?}"
        );
        assert_eq!(streams.contains(&Stream::Gateway), gateway, "{strategy}");
        if strategy == "micro" {
            // The micro world's draws are those of the case setup alone.
            let setup_streams = [
                Stream::Params,
                Stream::Swarm,
                Stream::Summarizer,
                Stream::SummarizerOverrun,
                Stream::Faults,
            ];
            assert!(
                streams.iter().all(|s| setup_streams.contains(s)),
                "{streams:?}"
            );
        }
    }
}

#[test]
#[should_panic(expected = "is not a row of draw::KNOBS")]
fn a_knob_outside_the_table_panics() {
    Draw::new(1).between("no.such.knob");
}

#[test]
#[should_panic(expected = "not Between")]
fn a_knob_drawn_as_another_kind_panics() {
    Draw::new(1).between("agent.in_place");
}

#[test]
fn a_value_outside_a_range_is_caught() {
    assert!(!row("gateway.chat").range.contains(0));
    assert!(!row("gateway.chat").range.contains(10_000));
    assert!(row("gateway.chat").range.contains(9_999));
    assert!(!row("restart_per_mille").range.contains(9));
    assert!(row("restart_per_mille").range.contains(0));
    assert!(!row("agent.in_place").range.contains(2));
    assert!(!row("family").range.contains(Family::ALL.len() as u64));
}

/// Source files that name a stream in code: this module (the knobs and the live
/// streams it hands over), the conversation's runtime draws (`Stream::Shape`, opened
/// where the turns are generated and re-generated for a recording), a fixed story (not a
/// drawn case) and test modules.
const NAMES_STREAMS: &[&str] = &[
    "engine/draw.rs",
    "engine/plan/source.rs",
    "engine/plan/record.rs",
    "stories.rs",
    "engine/draw_tests.rs",
    "agent_tests.rs",
    "external/tests.rs",
    "external/condense_tests.rs",
    "shapes/tests/mod.rs",
    "shapes/tests/contract.rs",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source dir") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_other_file_draws_from_a_stream_of_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut breaches = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&f).unwrap();
        // Test code may open any stream.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let names = code
            .lines()
            .any(|l| !l.trim_start().starts_with("//") && l.contains("Stream::"));
        if names && !NAMES_STREAMS.contains(&rel.as_str()) {
            breaches.push(rel);
        }
    }
    assert!(
        breaches.is_empty(),
        "draw a case-level knob through draw::KNOBS, not its own stream: {breaches:?}"
    );
}

const MARKER: &str = "<!-- knob table: generated from harness/src/engine/draw.rs -->";
const END: &str = "<!-- end of knob table -->";

#[test]
fn the_table_in_the_architecture_doc_is_the_one_drawn() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    let doc = std::fs::read_to_string(&path).expect("docs/architecture.md");
    let want = knob_table_markdown();
    let start = doc.find(MARKER).expect("the knob table's marker") + MARKER.len() + 1;
    let rest = &doc[start..];
    let len = [rest.find(END), rest.find("\n\n").map(|i| i + 1)]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    let got = &rest[..len];
    if got != want && std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{want}{}", &doc[..start], &rest[len..]);
        std::fs::write(&path, updated).expect("write docs/architecture.md");
        return;
    }
    assert!(
        got == want,
        "docs/architecture.md's knob table is stale; rerun with UPDATE_DOCS=1 or paste:\n{want}"
    );
}
