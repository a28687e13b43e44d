//! A conversation with one adapter: the hello handshake, one request at a time with the
//! adapter's `summarize` callbacks answered by the harness in between, and the failure
//! policy: any failure kills the child and the next request starts a fresh one.

use super::argv;
use super::child::AdapterChild;
use super::delta::Held;
use super::error::{AdapterFailure, FailureKind, Limit};
use super::record::{failure_line, record_line, Dir, Recording};
use super::watchdog::{Phase, Watch, Watched};
use super::wire::{
    AdapterMsg, Capabilities, ChatMessage, HarnessMsg, SummaryAnswer, ERROR_CODE_DESYNC,
    KNOWN_HOOKS, PROTOCOL_DELTAS, PROTOCOL_VERSION, PROTOCOL_VERSION_MAX,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Default per-request limit: the longest the adapter may stay silent after the
/// harness's last message of a request (the request, or the answer to one of its
/// `summarize` calls: the harness's own time between messages never counts). A real
/// release's longest silence is one pass between two messages, well under a second of
/// CPU; on a 2-core machine at load 30 a process gets about a fifteenth of a core, so a
/// 1-second silence stretches to some 15 s: 60 s leaves four times that.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// Default start-up limit: from the start of a child to its `hello`. A cold venv import
/// of a Hermes release is the slow part (seconds of CPU and disk on an idle machine;
/// tens of seconds at load 10–30, where 30 s lost cases): 120 s, twice the per-request
/// limit, paid once per child.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 120_000;
/// Longest limit a command line or a scenario file may ask for, milliseconds.
pub const ADAPTER_TIMEOUT_MS_MAX: u64 = 3_600_000;
/// Most `summarize` calls one request may make (a loop in the adapter is a failure).
pub const SUMMARIZE_CALLS_MAX: u32 = 64;

/// How to run an adapter.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AdapterSpec {
    /// The command line as given to `--adapter` (split without a shell).
    pub command: String,
    /// The per-request limit ([`Limit::Request`]).
    pub timeout_ms: u64,
    /// The start-up limit ([`Limit::Startup`]).
    pub startup_timeout_ms: u64,
    /// The watchdog's bound (`None`: [`AdapterSpec::watchdog_bound_ms`] derives it).
    pub watchdog_ms: Option<u64>,
    /// Extra environment for the child (e.g. a temporary HERMES_HOME).
    pub env: Vec<(String, String)>,
    /// Where relative paths of the command were written (a scenario file's directory):
    /// see [`AdapterSpec::argv`]. `None`: the working directory (the command line).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
    /// `--record DIR`: every case's messages are written under it (see `record`).
    #[serde(skip)]
    pub record: Option<PathBuf>,
    /// The highest protocol version the harness offers (`--protocol`): 2 uses
    /// transcript deltas with an adapter that answers 2, 1 keeps every adapter on 1.
    /// Reports do not depend on it.
    #[serde(skip)]
    pub protocol_max: u32,
}

impl AdapterSpec {
    pub fn new(command: impl Into<String>, timeout_ms: u64) -> Self {
        AdapterSpec {
            command: command.into(),
            timeout_ms,
            startup_timeout_ms: DEFAULT_STARTUP_TIMEOUT_MS,
            watchdog_ms: None,
            env: Vec::new(),
            base_dir: None,
            record: None,
            protocol_max: PROTOCOL_VERSION_MAX,
        }
    }

    /// The same adapter, offered protocol versions up to `max` (1 or 2).
    pub fn offering_protocol(self, max: u32) -> Self {
        AdapterSpec {
            protocol_max: max,
            ..self
        }
    }

    /// The same adapter with start-up limit `ms`.
    pub fn with_startup_timeout_ms(self, ms: u64) -> Self {
        AdapterSpec {
            startup_timeout_ms: ms,
            ..self
        }
    }

    /// The same adapter watched with bound `ms` (`None`: the derived bound).
    pub fn with_watchdog_ms(self, ms: Option<u64>) -> Self {
        AdapterSpec {
            watchdog_ms: ms,
            ..self
        }
    }

    /// The watchdog's bound: as given, else twice the longer limit, so that a silent
    /// adapter ends in its timeout first and the watchdog catches only what the
    /// timeouts cannot (see `watchdog`).
    pub fn watchdog_bound_ms(&self) -> u64 {
        self.watchdog_ms
            .unwrap_or(2 * self.timeout_ms.max(self.startup_timeout_ms))
    }

    /// The same adapter, every case's messages recorded under `dir`.
    pub fn recording_to(self, dir: Option<PathBuf>) -> Self {
        AdapterSpec {
            record: dir,
            ..self
        }
    }

    /// The same adapter, its relative paths written in `dir` (see [`AdapterSpec::argv`]).
    pub fn written_in(self, dir: PathBuf) -> Self {
        AdapterSpec {
            base_dir: Some(dir),
            ..self
        }
    }

    /// The command split into words (without a shell). With a base directory, each
    /// relative word that names an existing file or directory under it, or under one of
    /// its ancestors (nearest first), becomes that path: a scenario under
    /// `scenarios/hermes/` names `target/hermes-venvs/...` as the repository sees it and
    /// runs from any working directory. Other words are left as written (relative to the
    /// working directory).
    pub fn argv(&self) -> Result<Vec<String>, argv::ArgvError> {
        let words = argv::split(&self.command)?;
        let Some(base) = &self.base_dir else {
            return Ok(words);
        };
        Ok(words.into_iter().map(|w| resolve(base, w)).collect())
    }
}

/// `word` under the nearest of `base` and its ancestors where it exists, else `word`.
fn resolve(base: &Path, word: String) -> String {
    let path = Path::new(&word);
    if word.is_empty() || path.is_absolute() || word.starts_with('-') {
        return word;
    }
    base.ancestors()
        .take(RESOLVE_ANCESTORS_MAX)
        .map(|dir| dir.join(path))
        .find(|p| p.exists())
        .map_or(word, |p| p.to_string_lossy().into_owned())
}

/// Directories [`AdapterSpec::argv`] tries for a relative word, the base included.
const RESOLVE_ANCESTORS_MAX: usize = 16;

/// A `summarize` call from the adapter, for the harness to answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummarizeCall {
    pub prompt: Option<String>,
    pub messages: Option<Vec<ChatMessage>>,
    pub max_tokens: Option<u32>,
    pub purpose: Option<super::wire::Purpose>,
}

/// The harness side of `summarize`: answers from the fake summarizer, faults included.
pub trait SummaryService {
    fn answer(&mut self, call: &SummarizeCall) -> SummaryAnswer;
}

/// What the adapter replied to a request.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Reply {
    /// Shared with the transcript the session keeps for protocol 2 (not copied).
    pub transcript: Option<std::sync::Arc<Vec<ChatMessage>>>,
    pub value: Option<Value>,
    pub labels: BTreeMap<String, Value>,
    /// How many `summarize` calls the harness answered during the request.
    pub summarize_calls: u32,
}

/// What the adapter said in its hello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterInfo {
    pub name: String,
    pub version: String,
    pub capabilities: Capabilities,
    /// `capabilities.policies`, checked.
    pub policies: compactsim_invariants::Policies,
    /// The protocol version the conversation speaks (the one the adapter answered).
    pub protocol: u32,
}

/// One adapter, restarted after each failure.
pub struct Session {
    spec: AdapterSpec,
    argv: Vec<String>,
    child: Option<AdapterChild>,
    info: Option<AdapterInfo>,
    next_id: u64,
    /// Where the children's stderr files are kept (`None`: temporary files).
    stderr_dir: Option<PathBuf>,
    /// The record file of the case being served (`--record`).
    record: Option<Recording>,
    /// The record lines of the running child's hello exchange (each case's record file
    /// starts with them).
    hello_lines: Vec<String>,
    /// Protocol 2: the transcript the running child holds (empty after hello and
    /// `restart`; a pass request's, then its result's).
    held: Held,
    /// The exchange in flight, under the stall watchdog (`None` between requests).
    watch: Option<Watch>,
    /// Environment the children started for the current case get besides the spec's
    /// (the gateway store's durable directory, `store::link`).
    case_env: Vec<(String, String)>,
}

/// A position in a child's stderr: which child, how many bytes it had written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StderrMark {
    serial: u64,
    len: u64,
}

impl Session {
    /// Checks the command line; the child starts on the first request.
    pub fn new(spec: AdapterSpec) -> Result<Self, AdapterFailure> {
        let argv = spec.argv().map_err(|e| AdapterFailure {
            command: spec.command.clone(),
            request: "start".into(),
            kind: FailureKind::Spawn(e.to_string()),
            stderr_tail: Vec::new(),
        })?;
        Ok(Session {
            spec,
            argv,
            child: None,
            info: None,
            next_id: 1,
            stderr_dir: None,
            record: None,
            hello_lines: Vec::new(),
            held: Held::default(),
            watch: None,
            case_env: Vec::new(),
        })
    }

    /// Keeps the children's stderr in `dir` (`child-<n>.log`): the running child's
    /// temporary file is moved there (or, when it cannot be moved, the child is ended
    /// and the next request starts one that writes there).
    pub fn keep_stderr_in(&mut self, dir: &Path) {
        self.stderr_dir = Some(dir.to_path_buf());
        if let Some(child) = &mut self.child {
            let serial = child.serial;
            if !child.stderr.keep_in(dir, serial) {
                self.child = None;
                self.info = None;
            }
        }
    }

    /// Records the messages of the next requests into `rec` (the case's file), starting
    /// it with the running child's hello exchange; `None` stops recording.
    pub fn record_to(&mut self, rec: Option<Recording>) {
        self.record = rec;
        if let Some(r) = &mut self.record {
            for line in &self.hello_lines {
                r.write(line);
            }
        }
    }

    /// Where the running child's stderr is now (`None`: no child).
    pub fn stderr_mark(&self) -> Option<StderrMark> {
        self.child.as_ref().map(|c| StderrMark {
            serial: c.serial,
            len: c.stderr.len(),
        })
    }

    /// The last stderr lines the running child wrote since `mark` (all of them when
    /// the mark is of another child, or there was none).
    pub fn stderr_since(&self, mark: Option<StderrMark>) -> Vec<String> {
        let Some(child) = &self.child else {
            return Vec::new();
        };
        let from = match mark {
            Some(m) if m.serial == child.serial => m.len,
            _ => 0,
        };
        child.stderr.tail_since(from)
    }

    /// The path of the running child's stderr file, when it is kept.
    pub fn stderr_path(&self) -> Option<&Path> {
        self.child.as_ref().map(|c| c.stderr.path.as_path())
    }

    /// Keeps the record line `line()` builds where it is wanted (the recording, the hello
    /// lines); without either it is not built.
    fn log(&mut self, line: impl FnOnce() -> String, hello: bool) {
        if self.record.is_none() && !hello {
            return;
        }
        let line = line();
        if let Some(r) = &mut self.record {
            r.write(&line);
        }
        if hello {
            self.hello_lines.push(line);
        }
    }

    pub fn spec(&self) -> &AdapterSpec {
        &self.spec
    }

    /// Starts the child if needed and returns what it said in its hello.
    pub fn info(&mut self) -> Result<&AdapterInfo, AdapterFailure> {
        self.ensure_started()?;
        self.info
            .as_ref()
            .ok_or_else(|| unreachable_failure(&self.spec))
    }

    /// Request ids count from 1 again (a new case: its messages do not depend on what
    /// the worker ran before).
    pub fn reset_ids(&mut self) {
        self.next_id = 1;
    }

    /// Sends the request built from the next id and waits for its result.
    pub fn request(
        &mut self,
        build: impl FnOnce(u64) -> HarnessMsg,
        summaries: &mut dyn SummaryService,
    ) -> Result<Reply, AdapterFailure> {
        let mut msg = build(self.next_id);
        self.next_id += 1;
        let outcome = self.ensure_started().and_then(|()| {
            self.watch = Some(self.watched(&msg, self.spec.watchdog_bound_ms()));
            self.exchange(&mut msg, summaries)
                .map_err(|k| self.fail(&msg, k))
        });
        self.watch = None;
        outcome
    }

    /// Sets the environment the children started from now on get besides the spec's.
    pub fn set_case_env(&mut self, env: Vec<(String, String)>) {
        self.case_env = env;
    }

    /// Kills the running child's process group now (a crash of the gateway process:
    /// nothing is announced); the next request starts a new child with a `hello`.
    pub fn kill_child(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill();
        }
        self.hello_lines.clear();
        self.held = Held::default();
    }

    /// Whether a request is in flight: a case that ended inside one (a panic unwound
    /// through it) leaves the adapter owing a reply or awaiting an answer, and the
    /// session must not serve another case.
    pub fn mid_request(&self) -> bool {
        self.watch.is_some()
    }

    /// The watchdog's view of exchange `msg` as it starts, watched with `bound_ms`.
    fn watched(&self, msg: &HarnessMsg, bound_ms: u64) -> Watch {
        Watch::start(Watched {
            case: super::record::current_case(),
            command: self.spec.command.clone(),
            request: msg.describe(),
            last_sent: String::new(),
            last_heard: String::new(),
            phase: Phase::AwaitingAdapter,
            pid: self.child.as_ref().map(AdapterChild::pid),
            stderr: self.child.as_ref().map(|c| c.stderr.clone()),
            progress_at: Instant::now(),
            bound_ms,
        })
    }

    fn ensure_started(&mut self) -> Result<(), AdapterFailure> {
        if self.child.is_some() {
            return Ok(());
        }
        let hello = HarnessMsg::Hello {
            id: 0,
            protocol: PROTOCOL_VERSION,
            protocols: if self.spec.protocol_max >= PROTOCOL_DELTAS {
                (PROTOCOL_VERSION..=self.spec.protocol_max.min(PROTOCOL_VERSION_MAX)).collect()
            } else {
                Vec::new()
            },
        };
        let env: Vec<(String, String)> = self
            .spec
            .env
            .iter()
            .chain(&self.case_env)
            .cloned()
            .collect();
        let child = AdapterChild::spawn(&self.argv, &env, self.stderr_dir.as_deref())
            .map_err(|kind| self.fail(&hello, kind))?;
        self.child = Some(child);
        self.hello_lines.clear();
        self.held = Held::default();
        // A cold start is slow, not stalled: a hello is watched with at least twice its
        // start-up limit, so the start-up timeout ends a silent one first.
        let bound_ms = (2 * self.spec.startup_timeout_ms).max(self.spec.watchdog_bound_ms());
        self.watch = Some(self.watched(&hello, bound_ms));
        let greeted = self.handshake(&hello);
        self.watch = None;
        match greeted {
            Ok(info) => {
                self.info = Some(info);
                Ok(())
            }
            Err(kind) => Err(self.fail(&hello, kind)),
        }
    }

    fn handshake(&mut self, hello: &HarnessMsg) -> Result<AdapterInfo, FailureKind> {
        self.send_logged(hello, true)?;
        match self.read_logged(0, true, Limit::Startup)? {
            AdapterMsg::Hello {
                protocol,
                name,
                version,
                capabilities,
                ..
            } => {
                let offered = PROTOCOL_VERSION..=self.spec.protocol_max.min(PROTOCOL_VERSION_MAX);
                if !offered.contains(&protocol) {
                    return Err(FailureKind::Protocol(format!(
                        "adapter speaks protocol {protocol}, the harness offered {}..={}",
                        offered.start(),
                        offered.end()
                    )));
                }
                let policies = super::policies::parse(&capabilities.policies)
                    .map_err(FailureKind::BadPolicy)?;
                check_hooks(&capabilities)?;
                super::store::check_capability(&capabilities).map_err(FailureKind::Protocol)?;
                if let Some(t) = capabilities.trigger {
                    t.check().map_err(FailureKind::Protocol)?;
                }
                capabilities
                    .trigger_passes()
                    .map_err(FailureKind::Protocol)?;
                Ok(AdapterInfo {
                    name,
                    version,
                    capabilities,
                    policies,
                    protocol,
                })
            }
            other => Err(FailureKind::Protocol(format!(
                "expected hello, got {}",
                kind_name(&other)
            ))),
        }
    }

    fn exchange(
        &mut self,
        msg: &mut HarnessMsg,
        summaries: &mut dyn SummaryService,
    ) -> Result<Reply, FailureKind> {
        let id = msg.id();
        self.send_request(msg)?;
        let mut calls = 0u32;
        loop {
            match self.read(id)? {
                AdapterMsg::Summarize {
                    call,
                    prompt,
                    messages,
                    max_tokens,
                    purpose,
                    ..
                } => {
                    if call != calls {
                        return Err(FailureKind::Protocol(format!(
                            "summarize call {call}, expected call {calls}"
                        )));
                    }
                    if calls >= SUMMARIZE_CALLS_MAX {
                        return Err(FailureKind::Protocol(format!(
                            "more than {SUMMARIZE_CALLS_MAX} summarize calls in one request"
                        )));
                    }
                    let answer = summaries.answer(&SummarizeCall {
                        prompt,
                        messages,
                        max_tokens,
                        purpose,
                    });
                    self.send(&HarnessMsg::Summary { id, call, answer })?;
                    calls += 1;
                }
                AdapterMsg::Result {
                    transcript,
                    edits,
                    digest,
                    value,
                    labels,
                    ..
                } => {
                    let transcript = self.result_transcript(msg, transcript, edits, digest)?;
                    return Ok(Reply {
                        transcript,
                        value,
                        labels,
                        summarize_calls: calls,
                    });
                }
                AdapterMsg::Error { message, code, .. } => {
                    return Err(match code.as_deref() {
                        Some(ERROR_CODE_DESYNC) => FailureKind::Desync(message),
                        _ => FailureKind::AdapterError(message),
                    })
                }
                AdapterMsg::Hello { .. } => {
                    return Err(FailureKind::Protocol("hello in reply to a request".into()))
                }
            }
        }
    }

    /// The protocol version of the running conversation.
    fn protocol(&self) -> u32 {
        self.info.as_ref().map_or(PROTOCOL_VERSION, |i| i.protocol)
    }

    /// Sends a request; under protocol 2 a pass carries edits against the transcript
    /// the child holds, which becomes the pass's, and `restart` empties it.
    fn send_request(&mut self, msg: &mut HarnessMsg) -> Result<(), FailureKind> {
        if self.protocol() < PROTOCOL_DELTAS {
            return self.send(msg);
        }
        match msg {
            HarnessMsg::MicroPass { .. } | HarnessMsg::BatchPass { .. } => {
                let (line, next) = super::delta::pass_line(msg, &self.held)
                    .map_err(|e| FailureKind::Protocol(format!("cannot encode request: {e}")))?;
                self.held = next;
                self.send_line(line, false)
            }
            HarnessMsg::Restart { .. } => {
                self.held = Held::default();
                self.send(msg)
            }
            _ => self.send(msg),
        }
    }

    /// The transcript of a result (see [`super::delta::result_rows`]).
    fn result_transcript(
        &mut self,
        msg: &HarnessMsg,
        transcript: Option<Vec<ChatMessage>>,
        edits: Option<Vec<super::delta::Edit>>,
        digest: Option<String>,
    ) -> Result<Option<std::sync::Arc<Vec<ChatMessage>>>, FailureKind> {
        let pass = matches!(
            msg,
            HarnessMsg::MicroPass { .. } | HarnessMsg::BatchPass { .. }
        );
        let deltas = pass && self.protocol() >= PROTOCOL_DELTAS;
        super::delta::result_rows(&mut self.held, deltas, transcript, edits, digest)
    }

    fn send(&mut self, msg: &HarnessMsg) -> Result<(), FailureKind> {
        self.send_logged(msg, false)
    }

    fn send_logged(&mut self, msg: &HarnessMsg, hello: bool) -> Result<(), FailureKind> {
        let line = serde_json::to_string(msg)
            .map_err(|e| FailureKind::Protocol(format!("cannot encode request: {e}")))?;
        self.send_line(line, hello)
    }

    fn send_line(&mut self, line: String, hello: bool) -> Result<(), FailureKind> {
        self.log(|| record_line(Dir::ToAdapter, &line, true), hello);
        if let Some(w) = &self.watch {
            w.sent(&line);
        }
        match self.child.as_mut() {
            Some(child) => {
                child.send(line);
                Ok(())
            }
            None => Err(FailureKind::Exited {
                status: "not running".into(),
            }),
        }
    }

    /// The next adapter message of request `id`, checked for JSON, protocol and id,
    /// within the per-request limit from now (the harness's last message).
    fn read(&mut self, id: u64) -> Result<AdapterMsg, FailureKind> {
        self.read_logged(id, false, Limit::Request)
    }

    fn read_logged(
        &mut self,
        id: u64,
        hello: bool,
        limit: Limit,
    ) -> Result<AdapterMsg, FailureKind> {
        let timeout_ms = match limit {
            Limit::Startup => self.spec.startup_timeout_ms,
            Limit::Request => self.spec.timeout_ms,
        };
        let child = self.child.as_mut().ok_or(FailureKind::Exited {
            status: "not running".into(),
        })?;
        if let Some(w) = &self.watch {
            w.child(child.pid(), child.stderr.clone());
        }
        let line = child.recv(timeout_ms, limit)?;
        if let Some(w) = &self.watch {
            w.heard(&line);
        }
        // One parse for a well-formed message; a line that is not one is parsed again
        // only to tell bad JSON from a bad message.
        let msg = match super::wire_read::adapter_msg(&line) {
            Ok(msg) => {
                self.log(|| record_line(Dir::FromAdapter, &line, true), hello);
                msg
            }
            Err(_) => {
                let parsed = serde_json::from_str::<Value>(&line);
                let is_json = parsed.is_ok();
                self.log(|| record_line(Dir::FromAdapter, &line, is_json), hello);
                let value: Value = parsed
                    .map_err(|e| FailureKind::InvalidJson(format!("{e}: {}", excerpt(&line))))?;
                let e = serde_json::from_value::<AdapterMsg>(value)
                    .err()
                    .map_or_else(|| "unreadable message".to_string(), |e| e.to_string());
                return Err(FailureKind::Protocol(format!("{e}: {}", excerpt(&line))));
            }
        };
        if msg.id() != id {
            return Err(FailureKind::WrongId {
                expected: id,
                got: msg.id(),
            });
        }
        Ok(msg)
    }

    /// Kills the child and describes the failure with its stderr tail.
    fn fail(&mut self, msg: &HarnessMsg, kind: FailureKind) -> AdapterFailure {
        let stderr_tail = match self.child.take() {
            Some(mut child) => child.kill_with_tail(),
            None => Vec::new(),
        };
        self.info = None;
        self.hello_lines.clear();
        self.held = Held::default();
        let request = msg.describe();
        let mut message = kind.to_string();
        for line in &stderr_tail {
            message.push_str("\n  | ");
            message.push_str(line);
        }
        self.log(|| failure_line(kind.name(), &request, &message), false);
        if let Some(r) = &mut self.record {
            r.flush();
        }
        AdapterFailure {
            command: self.spec.command.clone(),
            request,
            kind,
            stderr_tail,
        }
    }
}

/// Refuses a hello whose `capabilities.hooks` names a hook the harness never sends.
fn check_hooks(capabilities: &Capabilities) -> Result<(), FailureKind> {
    match capabilities
        .hooks
        .iter()
        .find(|h| !KNOWN_HOOKS.contains(&h.as_str()))
    {
        None => Ok(()),
        Some(unknown) => Err(FailureKind::Config(format!(
            "its hello lists hook {unknown:?} in capabilities.hooks, which the harness never \
             sends; the known hooks are {}",
            KNOWN_HOOKS.join(", ")
        ))),
    }
}

/// Longest excerpt of a bad line quoted in a message.
const EXCERPT_CHARS: usize = 120;

fn excerpt(line: &str) -> String {
    let cut: String = line.chars().take(EXCERPT_CHARS).collect();
    if cut.len() < line.len() {
        format!("{cut:?}…")
    } else {
        format!("{cut:?}")
    }
}

fn kind_name(msg: &AdapterMsg) -> &'static str {
    match msg {
        AdapterMsg::Hello { .. } => "hello",
        AdapterMsg::Summarize { .. } => "summarize",
        AdapterMsg::Result { .. } => "result",
        AdapterMsg::Error { .. } => "error",
    }
}

fn unreachable_failure(spec: &AdapterSpec) -> AdapterFailure {
    AdapterFailure {
        command: spec.command.clone(),
        request: "hello".into(),
        kind: FailureKind::Protocol("no hello recorded".into()),
        stderr_tail: Vec::new(),
    }
}

#[cfg(test)]
mod resolve_tests {
    use super::AdapterSpec;
    use std::path::Path;

    #[test]
    fn relative_words_resolve_under_the_scenario_directory_or_its_ancestors() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let scenarios = repo.join("scenarios/hermes");
        let spec = AdapterSpec::new(
            "python3 -u adapters/reference/compactor.py no/such/file.py /abs/x",
            1,
        )
        .written_in(scenarios);
        let want = repo.join("adapters/reference/compactor.py");
        assert_eq!(
            spec.argv().unwrap(),
            vec![
                "python3".to_string(),
                "-u".into(),
                want.to_string_lossy().into_owned(),
                "no/such/file.py".into(),
                "/abs/x".into(),
            ]
        );
        let plain = AdapterSpec::new("python3 adapters/reference/compactor.py", 1);
        assert_eq!(
            plain.argv().unwrap()[1],
            "adapters/reference/compactor.py",
            "the command line stays relative to the working directory"
        );
    }
}
