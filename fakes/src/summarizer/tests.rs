use super::*;
use crate::rng::{case_seed, stream, Stream};

/// Cases each property test draws.
const CASES: u32 = 200;
/// Calls each case makes.
const CALLS: u32 = 60;

fn facts(range: std::ops::Range<u32>) -> Vec<FactId> {
    range.map(FactId).collect()
}

fn summarizer(config: SummarizerConfig, seed: u64) -> Summarizer {
    Summarizer::new(config, stream(seed, Stream::Summarizer))
}

fn drawn_config(case: u32) -> SummarizerConfig {
    SummarizerConfig::draw(&mut stream(case_seed(11, case), Stream::Params))
}

fn without_faults(config: SummarizerConfig) -> SummarizerConfig {
    SummarizerConfig {
        error_per_mille: 0,
        empty_per_mille: 0,
        length_per_mille: 0,
        expansion_per_mille: 0,
        ..config
    }
}

/// Drives one case through `CALLS` summarize calls on a growing input, yielding each
/// (previous, input facts, input tokens, call).
fn drive(
    config: SummarizerConfig,
    seed: u64,
    mut check: impl FnMut(&SummarizerConfig, &RollingSummary, &[FactId], u32, &SummaryCall),
) {
    let mut s = summarizer(config, seed);
    let mut prev = RollingSummary::default();
    let mut inputs = stream(seed, Stream::Shape);
    let mut next_fact = 0;
    for _ in 0..CALLS {
        let n = between(&mut inputs, 0, 6);
        let input = facts(next_fact..next_fact + n);
        next_fact += n;
        let input_tokens = between(&mut inputs, 0, 20_000);
        let call = s.summarize(&prev, &input, input_tokens);
        check(&s.config, &prev, &input, input_tokens, &call);
        if let Ok(next) = &call.result {
            prev = next.clone();
        }
    }
}

#[test]
fn drawn_configs_stay_in_their_ranges_and_switch_faults_per_case() {
    let mut fault_on = [0u32; 4];
    let mut lossy = 0;
    for case in 0..CASES {
        let c = drawn_config(case);
        assert!((100..=400).contains(&c.ratio_per_mille), "{c:?}");
        assert!((1_500..=4_000).contains(&c.max_tokens), "{c:?}");
        assert!((300..=600).contains(&c.condense_per_mille), "{c:?}");
        assert!(c.min_tokens < c.max_tokens && (32..=128).contains(&c.min_tokens));
        assert!(c.retention_per_mille <= 1000 && c.tokens_per_s > 0);
        let rates = [
            c.error_per_mille,
            c.empty_per_mille,
            c.length_per_mille,
            c.expansion_per_mille,
        ];
        for (on, rate) in fault_on.iter_mut().zip(rates) {
            assert!(rate <= 80, "{c:?}");
            *on += (rate > 0) as u32;
        }
        lossy += (c.retention_per_mille < 1000) as u32;
    }
    for on in fault_on {
        assert!(
            on > CASES / 5 && on < CASES * 4 / 5,
            "swarm switch {on}/{CASES}"
        );
    }
    assert!(
        lossy > 0 && lossy < CASES / 2,
        "lossy retention in {lossy} cases"
    );
}

#[test]
fn reliable_has_no_faults_and_the_documented_sizes() {
    let c = SummarizerConfig::reliable();
    assert!(c.fault_free());
    assert_eq!(
        (c.ratio_per_mille, c.retention_per_mille, c.max_tokens),
        (200, 1000, 4_000)
    );
}

#[test]
fn success_grows_by_at_most_ratio_times_input_and_stays_clamped() {
    for case in 0..CASES {
        drive(
            without_faults(drawn_config(case)),
            case as u64,
            |c, prev, _, input, call| {
                let next = call.result.as_ref().expect("no faults");
                assert!(!call.expanded);
                assert!(next.tokens >= c.min_tokens && next.tokens <= c.max_tokens);
                if prev.tokens >= c.min_tokens {
                    let bound = prev.tokens as u64 + input as u64 * c.ratio_per_mille as u64 / 1000;
                    assert!(next.tokens as u64 <= bound, "{prev:?} +{input} -> {next:?}");
                }
            },
        );
    }
}

#[test]
fn previous_facts_are_kept_and_full_retention_keeps_every_input_fact() {
    for case in 0..CASES {
        let config = drawn_config(case);
        let full = config.retention_per_mille == 1000;
        drive(config, case as u64, |_, prev, input, _, call| {
            if let Ok(next) = &call.result {
                assert!(next.facts.windows(2).all(|w| w[0] < w[1]), "sorted, unique");
                assert!(prev.facts.iter().all(|f| next.facts.contains(f)));
                if full {
                    assert!(input.iter().all(|f| next.facts.contains(f)));
                }
                let known = |f: &FactId| prev.facts.contains(f) || input.contains(f);
                assert!(next.facts.iter().all(known), "no invented facts");
            }
        });
    }
}

#[test]
fn lossy_retention_drops_about_its_share_of_input_facts() {
    let config = SummarizerConfig {
        retention_per_mille: 600,
        ..SummarizerConfig::reliable()
    };
    let mut s = summarizer(config, 5);
    let input = facts(0..5_000);
    let kept = s
        .summarize(&RollingSummary::default(), &input, 100)
        .result
        .unwrap()
        .facts
        .len();
    assert!(
        (2_700..=3_300).contains(&kept),
        "kept {kept} of 5000 at 600 ‰"
    );
}

#[test]
fn faults_never_fire_when_their_rate_is_zero() {
    for case in 0..CASES {
        let config = without_faults(drawn_config(case));
        drive(config, case as u64, |_, _, _, _, call| {
            assert!(call.result.is_ok() && !call.expanded);
        });
    }
}

#[test]
fn each_fault_fires_at_about_its_rate_and_alone() {
    let rates = [
        SummarizerConfig {
            error_per_mille: 50,
            ..SummarizerConfig::reliable()
        },
        SummarizerConfig {
            empty_per_mille: 50,
            ..SummarizerConfig::reliable()
        },
        SummarizerConfig {
            length_per_mille: 50,
            ..SummarizerConfig::reliable()
        },
        SummarizerConfig {
            expansion_per_mille: 50,
            ..SummarizerConfig::reliable()
        },
    ];
    for (which, config) in rates.into_iter().enumerate() {
        let mut s = summarizer(config, 77);
        let mut hits = 0;
        let mut classes = std::collections::BTreeSet::new();
        for _ in 0..10_000 {
            let call = s.summarize(&RollingSummary::default(), &[], 1_000);
            let hit = match (&call.result, call.expanded) {
                (Err(SummaryFailure::Error(class)), false) => {
                    classes.insert(format!("{class:?}"));
                    which == 0
                }
                (Err(SummaryFailure::Empty), false) => which == 1,
                (Err(SummaryFailure::Length), false) => which == 2,
                (Ok(_), true) => which == 3,
                (Ok(_), false) => false,
                (Err(_), true) => panic!("a failure is never marked expanded"),
            };
            let is_fault = call.result.is_err() || call.expanded;
            assert_eq!(hit, is_fault, "fault {which} only");
            hits += hit as u32;
        }
        assert!(
            (400..=600).contains(&hits),
            "fault {which}: {hits} of 10000 at 50 ‰"
        );
        if which == 0 {
            assert_eq!(classes.len(), 5, "every error class shows up: {classes:?}");
        }
    }
}

#[test]
fn expansion_really_expands_and_is_not_clamped() {
    let config = SummarizerConfig {
        expansion_per_mille: 1000,
        ..SummarizerConfig::reliable()
    };
    let mut s = summarizer(config.clone(), 3);
    let prev = RollingSummary {
        facts: facts(0..3),
        tokens: 3_900,
    };
    for input in [1, 10, 500, 5_000] {
        let call = s.summarize(&prev, &facts(3..5), input);
        let next = call.result.unwrap();
        assert!(call.expanded);
        assert!(
            next.tokens > prev.tokens + input,
            "{input} -> {}",
            next.tokens
        );
        assert!(next.tokens <= prev.tokens + 2 * input.max(1));
        assert_eq!(next.facts, facts(0..5));
    }
    let call = s.summarize(&prev, &[], 5_000);
    assert!(call.result.unwrap().tokens > config.max_tokens);
    let condensed = s.condense(&prev);
    assert!(condensed.expanded && condensed.result.unwrap().tokens > prev.tokens);
}

#[test]
fn condense_keeps_facts_and_shrinks_to_the_floor() {
    let mut s = summarizer(SummarizerConfig::reliable(), 1);
    let c = s.config.clone();
    for tokens in [10, c.min_tokens, 100, 2_000, 9_000] {
        let summary = RollingSummary {
            facts: facts(4..40),
            tokens,
        };
        let call = s.condense(&summary);
        let out = call.result.unwrap();
        assert_eq!(out.facts, summary.facts);
        let room = tokens_to_spell(&summary.facts);
        assert!(
            out.tokens <= tokens.max(room),
            "condense never grows past the room its facts need: {tokens} -> {}",
            out.tokens
        );
        let shrunk = tokens * c.condense_per_mille / 1000;
        assert_eq!(out.tokens, shrunk.max(c.min_tokens).min(tokens).max(room));
    }
}

#[test]
fn every_summary_has_room_to_spell_the_facts_it_keeps() {
    use compactsim_model::content::chars_to_spell;
    use compactsim_model::tokens::chars_for_rough_tokens;
    use compactsim_model::ContentKind;
    let mut s = summarizer(SummarizerConfig::reliable(), 1);
    let max = s.config.max_tokens;
    // Far more facts than max_tokens can spell: the size follows the facts.
    let many = facts(0..2_000);
    let out = s
        .summarize(&RollingSummary::default(), &many, 100)
        .result
        .unwrap();
    assert_eq!(out.facts, many);
    assert!(out.tokens > max, "{} tokens", out.tokens);
    let chars = chars_for_rough_tokens(out.tokens);
    assert!(chars >= chars_to_spell(ContentKind::Summary, &out.facts));
    // A condensed summary of them cannot shrink below that room either.
    let condensed = s.condense(&out).result.unwrap();
    assert_eq!(condensed.tokens, tokens_to_spell(&many));
    // A few facts: the ratio decides, as before.
    let few = s
        .summarize(&RollingSummary::default(), &facts(0..3), 1_000)
        .result
        .unwrap();
    assert!(few.tokens > tokens_to_spell(&few.facts));
}

#[test]
fn condense_suffers_the_same_faults() {
    let config = SummarizerConfig {
        empty_per_mille: 1000,
        ..SummarizerConfig::reliable()
    };
    let mut s = summarizer(config, 2);
    let summary = RollingSummary {
        facts: facts(0..2),
        tokens: 2_000,
    };
    assert_eq!(s.condense(&summary).result, Err(SummaryFailure::Empty));
}

#[test]
fn same_seed_same_calls_different_seed_different_faults() {
    let config = SummarizerConfig {
        error_per_mille: 80,
        empty_per_mille: 80,
        length_per_mille: 80,
        expansion_per_mille: 80,
        retention_per_mille: 700,
        ..SummarizerConfig::reliable()
    };
    let run = |seed| {
        let mut calls = Vec::new();
        drive(config.clone(), seed, |_, _, _, _, call| {
            calls.push(call.clone())
        });
        calls
    };
    assert_eq!(run(9), run(9));
    assert_ne!(run(9), run(10));
}

#[test]
fn latency_grows_with_tokens_and_a_timeout_costs_the_timeout() {
    let s = summarizer(SummarizerConfig::reliable(), 0);
    let base = s.config.base_latency_ms as u64;
    assert_eq!(s.latency_ms(0, 0), base);
    assert!(s.latency_ms(10_000, 0) > base);
    assert!(s.latency_ms(0, 1_000) > s.latency_ms(1_000, 0));
    // 1,500 output tokens at 50 tokens/s: 30 virtual seconds on top of the base.
    assert_eq!(s.latency_ms(0, 1_500), base + 30_000);
    let mut s = summarizer(
        SummarizerConfig {
            error_per_mille: 1000,
            ..SummarizerConfig::reliable()
        },
        4,
    );
    let timeouts = (0..200)
        .map(|_| s.summarize(&RollingSummary::default(), &[], 100))
        .filter(|c| c.result == Err(SummaryFailure::Error(SummaryErrorClass::Timeout)))
        .inspect(|c| assert_eq!(c.latency_ms, TIMEOUT_LATENCY_MS))
        .count();
    assert!(timeouts > 0);
}

#[test]
fn a_success_latency_counts_prompt_and_output() {
    let mut s = summarizer(SummarizerConfig::reliable(), 0);
    let prev = RollingSummary {
        facts: vec![],
        tokens: 1_000,
    };
    let call = s.summarize(&prev, &[], 10_000);
    let out = call.result.as_ref().unwrap().tokens;
    assert_eq!(out, 3_000);
    assert_eq!(call.latency_ms, s.latency_ms(11_000, out));
}

/// Runs `CALLS` summarize calls against `s` on a fixed input sequence; returns them.
fn calls_of(mut s: Summarizer, seed: u64) -> (Vec<SummaryCall>, Vec<SummaryOutcome>) {
    let mut prev = RollingSummary::default();
    let mut inputs = stream(seed, Stream::Shape);
    let mut out = Vec::new();
    for i in 0..CALLS {
        let input = facts(i * 3..i * 3 + between(&mut inputs, 0, 3));
        let call = if i % 7 == 6 {
            s.condense(&prev)
        } else {
            s.summarize(&prev, &input, between(&mut inputs, 0, 5_000))
        };
        if let Ok(next) = &call.result {
            prev = next.clone();
        }
        out.push(call);
    }
    (out, s.log().to_vec())
}

#[test]
fn the_log_of_a_drawn_case_replayed_as_a_schedule_gives_the_same_calls() {
    let mut faulty_cases = 0;
    for case in 0..CASES / 4 {
        let config = drawn_config(case);
        let seed = case_seed(5, case);
        let (drawn, log) = calls_of(summarizer(config.clone(), seed), seed);
        assert_eq!(log.len(), CALLS as usize);
        faulty_cases += u32::from(log.iter().any(|o| !o.is_ok()));
        let scripted = summarizer(config, seed).with_schedule(Some(log.clone()));
        let (replayed, replay_log) = calls_of(scripted, seed);
        assert_eq!(replayed, drawn, "case {case}");
        assert_eq!(replay_log, log);
    }
    assert!(faulty_cases > 0, "no drawn case had a fault");
}

#[test]
fn a_schedule_decides_each_call_whatever_the_rates() {
    let schedule = [
        "error:timeout",
        "empty",
        "length",
        "expansion",
        "error:auth",
    ]
    .map(|n| SummaryOutcome::parse(n).unwrap());
    let mut s = summarizer(SummarizerConfig::reliable(), 3).with_schedule(Some(schedule.to_vec()));
    let prev = RollingSummary::default();
    let input = facts(0..2);
    let results: Vec<SummaryCall> = (0..7).map(|_| s.summarize(&prev, &input, 1_000)).collect();
    assert_eq!(
        results[0].result,
        Err(SummaryFailure::Error(SummaryErrorClass::Timeout))
    );
    assert_eq!(results[0].latency_ms, TIMEOUT_LATENCY_MS);
    assert_eq!(results[1].result, Err(SummaryFailure::Empty));
    assert_eq!(results[2].result, Err(SummaryFailure::Length));
    assert!(results[3].expanded && results[3].result.as_ref().unwrap().tokens > 1_000);
    assert_eq!(
        results[4].result,
        Err(SummaryFailure::Error(SummaryErrorClass::Auth))
    );
    for past_the_end in &results[5..] {
        assert!(past_the_end.result.is_ok() && !past_the_end.expanded);
    }
    let mut logged = schedule.to_vec();
    logged.extend([SummaryOutcome::Ok; 2]);
    assert_eq!(s.log(), logged.as_slice());
}

/// `max_tokens`: the calls of [`calls_of`], each asking for `cap` (condenses too).
fn capped_calls_of(
    mut s: Summarizer,
    seed: u64,
    cap: u32,
) -> (Vec<(RollingSummary, Vec<FactId>, SummaryCall)>, Summarizer) {
    let mut prev = RollingSummary::default();
    let mut inputs = stream(seed, Stream::Shape);
    let mut out = Vec::new();
    for i in 0..CALLS {
        let input = facts(i * 40..i * 40 + between(&mut inputs, 0, 40));
        let call = if i % 7 == 6 {
            s.condense_within(&prev, Some(cap))
        } else {
            s.summarize_within(&prev, &input, between(&mut inputs, 0, 20_000), Some(cap))
        };
        out.push((prev.clone(), input, call.clone()));
        if let Ok(next) = &call.result {
            prev = next.clone();
        }
    }
    (out, s)
}

fn overrun(seed: u64, per_mille: u32) -> (u32, SimRng) {
    (per_mille, stream(seed, Stream::SummarizerOverrun))
}

#[test]
fn an_answer_fits_the_max_tokens_it_was_asked_for_and_keeps_the_previous_facts() {
    let mut fitted = 0;
    for case in 0..CASES / 4 {
        let seed = case_seed(13, case);
        for cap in [1_024, 400, 96] {
            let (per_mille, rng) = overrun(seed, 20);
            let s = summarizer(drawn_config(case), seed).with_overrun(per_mille, rng);
            let (calls, s) = capped_calls_of(s, seed, cap);
            for (prev, _, call) in &calls {
                if let Ok(summary) = &call.result {
                    assert!(
                        summary.tokens <= cap,
                        "case {case}: {} > {cap}",
                        summary.tokens
                    );
                    assert!(tokens_to_spell(&summary.facts) <= summary.tokens);
                    let lost = missing(&prev.facts, &summary.facts);
                    assert!(lost.is_empty(), "case {case}: previous facts lost {lost:?}");
                }
            }
            fitted += s.cap_counts().fitted;
            assert_eq!(s.cap_counts().asked, CALLS as u64);
        }
    }
    assert!(fitted > 1_000, "the caps made answers shrink: {fitted}");
}

/// Facts of `small` missing from `large` (both ascending).
fn missing(small: &[FactId], large: &[FactId]) -> Vec<FactId> {
    small
        .iter()
        .filter(|f| large.binary_search(f).is_err())
        .copied()
        .collect()
}

#[test]
fn facts_dropped_to_fit_are_the_newest_input_facts_deterministically() {
    let previous = RollingSummary {
        facts: facts(1_000..1_100),
        tokens: 900,
    };
    let answer = RollingSummary {
        facts: facts(0..50)
            .into_iter()
            .chain(facts(1_000..1_100))
            .collect(),
        tokens: 3_000,
    };
    // 100 previous facts take 300 tokens; 400 leaves room for 33 more.
    let fitted = fit(&answer, &previous.facts, 400).unwrap();
    assert_eq!(fitted.tokens, 400);
    assert!(tokens_to_spell(&fitted.facts) <= 400);
    let want: Vec<FactId> = facts(0..33)
        .into_iter()
        .chain(facts(1_000..1_100))
        .collect();
    assert_eq!(
        fitted.facts, want,
        "previous kept, then the oldest input facts"
    );
    assert_eq!(fit(&answer, &previous.facts, 400), Some(fitted), "no draw");
    // Facts that fit: only the size shrinks.
    let small = fit(&answer, &previous.facts, 10_000).unwrap();
    assert_eq!((small.facts.len(), small.tokens), (150, 3_000));
    let shrunk = fit(&answer, &previous.facts, 500).unwrap();
    assert_eq!((shrunk.facts.len(), shrunk.tokens), (150, 500));
    // No room for the previous facts, or none at all: no answer fits.
    assert_eq!(fit(&answer, &previous.facts, 299), None);
    assert_eq!(fit(&answer, &[], 0), None);
    // Through the summarizer: a reliable one keeps the same facts on every seed.
    let kept = |seed| {
        let mut s = summarizer(SummarizerConfig::reliable(), seed);
        let call = s.summarize_within(&previous, &facts(0..50), 5_000, Some(400));
        assert_eq!(s.cap_counts().fitted, 1);
        assert_eq!(s.cap_counts().facts_dropped, 17);
        call.result.unwrap()
    };
    assert_eq!(kept(1).facts, want);
    assert_eq!(kept(2), kept(1));
    // A condense keeps every fact: no room below them is a `length` failure.
    let mut s = summarizer(SummarizerConfig::reliable(), 1);
    let condensed = s.condense_within(&previous, Some(350)).result.unwrap();
    assert_eq!(
        (condensed.facts, condensed.tokens),
        (previous.facts.clone(), 350)
    );
    let cut = s.condense_within(&previous, Some(200));
    assert_eq!(cut.result, Err(SummaryFailure::Length));
    assert_eq!(
        cut.latency_ms,
        s.latency_ms(900, 200),
        "generated up to the cap"
    );
    assert_eq!(s.cap_counts().no_room, 1);
}

#[test]
fn overruns_fire_at_their_rate_from_their_own_stream() {
    let (mut must_shrink, mut overruns) = (0u64, 0u64);
    for case in 0..CASES {
        let seed = case_seed(17, case);
        let (per_mille, rng) = overrun(seed, 20);
        let config = without_faults(drawn_config(case));
        let s = summarizer(config, seed).with_overrun(per_mille, rng);
        let (calls, s) = capped_calls_of(s, seed, 256);
        let counts = s.cap_counts();
        must_shrink += counts.fitted + counts.overrun;
        overruns += counts.overrun;
        let lengths = calls
            .iter()
            .filter(|(_, _, c)| c.result == Err(SummaryFailure::Length))
            .count() as u64;
        assert_eq!(lengths, counts.overrun + counts.no_room, "case {case}");
        let logged = s
            .log()
            .iter()
            .filter(|o| **o == SummaryOutcome::Length)
            .count();
        assert_eq!(
            logged as u64, counts.overrun,
            "an overrun is logged as length"
        );
    }
    let per_mille = overruns * 1000 / must_shrink;
    assert!(must_shrink > 5_000, "{must_shrink}");
    assert!(
        (12..=28).contains(&per_mille),
        "{overruns} of {must_shrink}"
    );
    // Rate 0, or no overrun stream: never.
    let seed = case_seed(17, 0);
    let (_, rng) = overrun(seed, 0);
    let none = summarizer(drawn_config(0), seed).with_overrun(0, rng);
    assert_eq!(capped_calls_of(none, seed, 256).1.cap_counts().overrun, 0);
    let plain = summarizer(drawn_config(0), seed);
    assert_eq!(capped_calls_of(plain, seed, 256).1.cap_counts().overrun, 0);
}

/// The overrun stream is the case's own: with it, the Summarizer stream's draws are
/// where they were (every call that did not overrun answers as without it), an uncapped
/// call is the call it always was, and the stream is none of the older ones.
#[test]
fn overruns_move_no_draw_of_another_stream() {
    for case in 0..CASES / 4 {
        let seed = case_seed(19, case);
        let config = drawn_config(case);
        let (per_mille, rng) = overrun(seed, 30);
        let never = summarizer(config.clone(), seed);
        let sometimes = summarizer(config.clone(), seed).with_overrun(per_mille, rng);
        let (a, _) = capped_calls_of(never, seed, 256);
        let (b, s) = capped_calls_of(sometimes, seed, 256);
        // Same calls up to the first overrun (after it the previous summary differs).
        let first = b
            .iter()
            .position(|(_, _, c)| c.result == Err(SummaryFailure::Length))
            .unwrap_or(b.len());
        assert_eq!(a[..first], b[..first], "case {case}");
        let (per_mille, rng) = overrun(seed, 30);
        let uncapped = summarizer(config.clone(), seed).with_overrun(per_mille, rng);
        assert_eq!(
            calls_of(uncapped, seed),
            calls_of(summarizer(config, seed), seed),
            "no cap, no overrun draw"
        );
        assert!(s.cap_counts().asked > 0);
    }
    let all = [
        Stream::Params,
        Stream::Shape,
        Stream::Summarizer,
        Stream::Provider,
        Stream::Gateway,
        Stream::Faults,
        Stream::Swarm,
        Stream::FaultMix,
        Stream::GatewayStop,
        Stream::GatewayHygiene,
        Stream::OpeningPaste,
        Stream::LoopRestarts,
        Stream::SummaryStorm,
        Stream::MarkerRestart,
    ];
    let first = |s| crate::rng::next_seed(&mut stream(case_seed(19, 0), s));
    for older in all {
        assert_ne!(first(Stream::SummarizerOverrun), first(older), "{older:?}");
    }
}

#[test]
fn a_capped_case_replays_from_its_log_overruns_included() {
    let mut overran = 0;
    for case in 0..CASES / 4 {
        let seed = case_seed(23, case);
        let config = drawn_config(case);
        let (per_mille, rng) = overrun(seed, 30);
        let drawn = summarizer(config.clone(), seed).with_overrun(per_mille, rng);
        let (calls, s) = capped_calls_of(drawn, seed, 200);
        overran += s.cap_counts().overrun;
        let scripted = summarizer(config, seed).with_schedule(Some(s.log().to_vec()));
        let (replayed, r) = capped_calls_of(scripted, seed, 200);
        assert_eq!(replayed, calls, "case {case}");
        assert_eq!(r.log(), s.log());
        assert_eq!(
            r.cap_counts().overrun,
            0,
            "a schedule decides, nothing is drawn"
        );
    }
    assert!(overran > 0);
}
