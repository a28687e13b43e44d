//! The misbehaving adapter fixtures (adapters/reference/fixtures/) driven through the
//! external module: each ends in its typed failure, within its timeout, with a message
//! naming the command, the request and the adapter's last stderr line; the session
//! restarts the child afterwards. And the reference adapter answers a pass, and its batch
//! pass keeps a micro marker of its tail.

use compactsim_harness::external::wire::{
    ChatMessage, HarnessMsg, PassInput, SummaryAnswer, Trigger,
};
use compactsim_harness::external::{AdapterSpec, Session, SummarizeCall, SummaryService};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Per-request limit of the fixtures (their hello has the default start-up limit).
const FIXTURE_TIMEOUT_MS: u64 = 5_000;
/// Bound on a failing request beyond its timeout (kill, reap, stderr drain). Far from
/// the timeout, so machine load cannot flake it; what it proves is that the request
/// ends (never a hang), while the lower bound of the hang proves the timeout fired.
const SLACK_MS: u64 = 30_000;

fn adapter(rel: &str) -> String {
    format!("python3 {}/../adapters/{rel}", env!("CARGO_MANIFEST_DIR"))
}

struct Canned;

impl SummaryService for Canned {
    fn answer(&mut self, call: &SummarizeCall) -> SummaryAnswer {
        let n = call.prompt.as_deref().map_or(0, str::len);
        SummaryAnswer::Ok {
            text: "x".repeat(n / 4),
            finish_reason: "stop".into(),
        }
    }
}

/// An empty micro pass request, id `id`.
pub(crate) fn micro(id: u64) -> HarnessMsg {
    HarnessMsg::MicroPass {
        id,
        input: PassInput {
            turn: 1,
            transcript: Vec::new(),
            context_window_tokens: 128_000,
            now_ms: 0,
            config: BTreeMap::new(),
        },
    }
}

fn expect_failure(fixture: &str, kind: &str, stderr_needle: &str) {
    let command = adapter(&format!("reference/fixtures/{fixture}.py"));
    let mut s = Session::new(AdapterSpec::new(command.clone(), FIXTURE_TIMEOUT_MS)).unwrap();
    // Every fixture answers its hello; the clock measures the request alone.
    s.info().unwrap_or_else(|e| panic!("{fixture}: hello: {e}"));
    let started = Instant::now();
    let err = s.request(micro, &mut Canned).unwrap_err();
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(FIXTURE_TIMEOUT_MS + SLACK_MS),
        "{fixture}: {took:?}"
    );
    assert_eq!(err.kind.name(), kind, "{fixture}: {err}");
    if kind == "timeout" {
        // The harness waited the whole timeout: not an early failure of another kind.
        assert!(
            took >= Duration::from_millis(FIXTURE_TIMEOUT_MS),
            "{fixture}: {took:?}"
        );
        let want = format!(
            "no message from the adapter within {FIXTURE_TIMEOUT_MS} ms, the per-request \
             limit (killed); --adapter-timeout-ms MS"
        );
        assert!(err.to_string().contains(&want), "{fixture}: {err}");
    }
    let msg = err.to_string();
    assert!(msg.contains(&command), "{msg}");
    assert!(msg.contains("request 1 (micro_pass turn 1)"), "{msg}");
    assert!(msg.contains(stderr_needle), "{fixture}: {msg}");
    // The session starts a fresh child for the next request (which fails the same way).
    let again = s.request(micro, &mut Canned).unwrap_err();
    assert_eq!(again.kind.name(), kind);
    assert!(again.request.contains("request 2"), "{again}");
}

#[test]
fn crash_is_an_exit_with_the_traceback() {
    expect_failure("crash", "exited", "RuntimeError: fixture crash");
}

#[test]
fn hang_is_a_timeout() {
    expect_failure("hang", "timeout", "fixture hang: sleeping forever");
}

/// A child silent before its hello hits the start-up limit, and the failure names that
/// limit and the flag that raises it (not the per-request one).
#[test]
fn a_slow_start_hits_the_startup_limit_naming_its_flag() {
    let command = adapter("reference/fixtures/slow_start.py");
    let spec = AdapterSpec::new(command.clone(), 600_000).with_startup_timeout_ms(1_000);
    let err = Session::new(spec)
        .unwrap()
        .request(micro, &mut Canned)
        .unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.kind.name(), "timeout", "{msg}");
    assert_eq!(err.request, "request 0 (hello)", "{msg}");
    for want in [
        "no hello within 1000 ms, the start-up limit (killed)",
        "--adapter-startup-timeout-ms MS (a scenario file's startup_timeout_ms) raises it",
        command.as_str(),
    ] {
        assert!(msg.contains(want), "{want:?} missing: {msg}");
    }
}

/// A start slower than the per-request limit but within the start-up limit greets; the
/// request it then never answers hits the per-request limit, named with its flag.
#[test]
fn a_slow_start_within_its_limit_greets_and_the_request_limit_is_named() {
    let command = format!("{} 2", adapter("reference/fixtures/slow_start.py"));
    let spec = AdapterSpec::new(command, 1_000).with_startup_timeout_ms(600_000);
    let mut s = Session::new(spec).unwrap();
    let err = s.request(micro, &mut Canned).unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.kind.name(), "timeout", "{msg}");
    assert_eq!(err.request, "request 1 (micro_pass turn 1)", "{msg}");
    for want in [
        "no message from the adapter within 1000 ms, the per-request limit (killed)",
        "--adapter-timeout-ms MS (a scenario file's timeout_ms) raises it",
        "fixture slow_start: never answering the pass",
    ] {
        assert!(msg.contains(want), "{want:?} missing: {msg}");
    }
}

/// Answers nothing: the harness side of a case that ends (panics) while serving a
/// summarize call.
struct Panicking;

impl SummaryService for Panicking {
    fn answer(&mut self, _call: &SummarizeCall) -> SummaryAnswer {
        panic!("the summary service failed")
    }
}

/// A case that ends inside a request (a panic unwinding through a summarize call) leaves
/// the session mid-request: its child awaits an answer, so the pool must not hand it to
/// the next case (which would send `restart` into the pending call).
#[test]
fn a_request_cut_short_by_a_panic_leaves_the_session_mid_request() {
    let command = adapter("reference/fixtures/stall.py");
    let mut s = Session::new(AdapterSpec::new(command, 600_000)).unwrap();
    assert!(!s.mid_request());
    let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.request(micro, &mut Panicking)
    }));
    assert!(cut.is_err(), "the summary service panicked");
    assert!(s.mid_request());
}

#[test]
fn garbage_is_invalid_json() {
    expect_failure("garbage", "invalid-json", "fixture garbage");
}

#[test]
fn exit_early_is_an_exit() {
    expect_failure("exit_early", "exited", "fixture exit_early: leaving");
}

/// A child that lives on with its stdin closed would never answer: the answer that
/// cannot be written fails the request at once, naming the process, not at the limit.
#[test]
fn a_child_that_closes_its_stdin_fails_at_once_naming_it() {
    expect_failure("closes_stdin", "protocol", "fixture closes_stdin");
}

#[test]
fn unknown_message_is_a_protocol_violation() {
    expect_failure("violation", "protocol", "fixture violation");
}

#[test]
fn wrong_id_is_named() {
    expect_failure("wrong_id", "wrong-id", "answering id 1 + 7");
}

#[test]
fn a_program_that_does_not_exist_is_a_spawn_failure() {
    let mut s = Session::new(AdapterSpec::new("/nonexistent/adapter --x", 1_000)).unwrap();
    let err = s.request(micro, &mut Canned).unwrap_err();
    assert_eq!(err.kind.name(), "spawn");
    assert!(
        err.to_string().contains("/nonexistent/adapter --x"),
        "{err}"
    );
}

#[test]
fn a_program_that_is_not_an_adapter_fails_its_hello() {
    // `cat` echoes the hello back: a harness message, not an adapter message.
    let mut s = Session::new(AdapterSpec::new("cat", 2_000)).unwrap();
    let err = s.request(micro, &mut Canned).unwrap_err();
    assert_eq!(err.kind.name(), "protocol", "{err}");
    assert!(err.request.contains("hello"), "{err}");
}

#[test]
fn the_reference_adapter_says_hello_and_answers_a_pass() {
    let mut s = Session::new(AdapterSpec::new(adapter("reference/compactor.py"), 10_000)).unwrap();
    let info = s.info().unwrap().clone();
    assert_eq!(info.name, "compactsim-reference-py");
    assert!(info.capabilities.micro_pass && info.capabilities.batch_pass);
    let reply = s.request(micro, &mut Canned).unwrap();
    assert_eq!(reply.transcript.as_deref(), Some(&Vec::new()));
    assert_eq!(reply.labels["outcome"], "no_exchange");
}

fn chat(id: u32, role: &str, content: &str) -> ChatMessage {
    ChatMessage::plain(role, content, Some(id))
}

/// A batch pass whose tail (the last 3 rows: tail budget 1 token, floor 3) starts with a
/// micro marker; the head is the system row and u1, the window a1..u3.
fn batch_with_a_micro_marker_in_the_tail(id: u64) -> HarnessMsg {
    let mut marker = chat(7, "assistant", "rolling summary of a3 FACT-000092");
    marker.compressed_summary = Some(true);
    marker.micro_compact_marker = Some(true);
    let mut transcript = vec![chat(1, "system", "you are an agent")];
    for (n, text) in [(2, "u1"), (3, "a1"), (4, "u2"), (5, "a2"), (6, "u3")] {
        let role = if n % 2 == 0 { "user" } else { "assistant" };
        transcript.push(chat(n, role, &format!("{text}: some words of the turn")));
    }
    transcript.push(marker);
    transcript.push(chat(8, "user", "u4: the newest question"));
    transcript.push(chat(9, "assistant", "a4: the newest answer"));
    let config = [
        ("protect_first_n", 1),
        ("protect_last_n", 3),
        ("tail_budget_tokens", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
    .collect();
    HarnessMsg::BatchPass {
        id,
        trigger: Trigger::PostResponse,
        force: false,
        input: PassInput {
            turn: 5,
            transcript,
            context_window_tokens: 128_000,
            now_ms: 0,
            config,
        },
    }
}

#[test]
fn the_reference_adapters_batch_pass_keeps_a_micro_marker_of_its_tail() {
    // The marker's body is not in the batch prompt (it is no input of this summary), so
    // dropping it would lose its facts (seed 2 case 15 of `--strategy both`:
    // marker-contained).
    let mut s = Session::new(AdapterSpec::new(adapter("reference/compactor.py"), 10_000)).unwrap();
    let reply = s
        .request(batch_with_a_micro_marker_in_the_tail, &mut Canned)
        .unwrap();
    assert_eq!(reply.labels["outcome"], "compacted", "{:?}", reply.labels);
    assert_eq!(reply.summarize_calls, 1);
    let out = reply.transcript.expect("a transcript");
    let kept: Vec<Option<u32>> = out.iter().map(|m| m.compactsim_id).collect();
    let marker = out.iter().find(|m| m.compactsim_id == Some(7));
    assert!(
        marker.is_some_and(|m| m.micro_compact_marker == Some(true)),
        "the micro marker left the tail: {kept:?}"
    );
    for gone in [3, 4, 5, 6] {
        assert!(
            !kept.contains(&Some(gone)),
            "m{gone} was in the window: {kept:?}"
        );
    }
}
