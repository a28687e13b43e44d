//! A conversation with one adapter: the hello handshake, one request at a time with the
//! adapter's `summarize` callbacks answered by the harness in between, and the failure
//! policy: any failure kills the child and the next request starts a fresh one.

use super::argv;
use super::child::AdapterChild;
use super::error::{AdapterFailure, FailureKind};
use super::record::{failure_line, record_line, Dir, Recording};
use super::wire::{
    AdapterMsg, Capabilities, ChatMessage, HarnessMsg, SummaryAnswer, KNOWN_HOOKS, PROTOCOL_VERSION,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Default per-request timeout (a Python adapter importing a large package on a busy
/// machine needs seconds for its hello).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Most `summarize` calls one request may make (a loop in the adapter is a failure).
pub const SUMMARIZE_CALLS_MAX: u32 = 64;

/// How to run an adapter.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AdapterSpec {
    /// The command line as given to `--adapter` (split without a shell).
    pub command: String,
    pub timeout_ms: u64,
    /// Extra environment for the child (e.g. a temporary HERMES_HOME).
    pub env: Vec<(String, String)>,
    /// Where relative paths of the command were written (a scenario file's directory):
    /// see [`AdapterSpec::argv`]. `None`: the working directory (the command line).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
    /// `--record DIR`: every case's messages are written under it (see `record`).
    #[serde(skip)]
    pub record: Option<PathBuf>,
}

impl AdapterSpec {
    pub fn new(command: impl Into<String>, timeout_ms: u64) -> Self {
        AdapterSpec {
            command: command.into(),
            timeout_ms,
            env: Vec::new(),
            base_dir: None,
            record: None,
        }
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
}

/// The harness side of `summarize`: answers from the fake summarizer, faults included.
pub trait SummaryService {
    fn answer(&mut self, call: &SummarizeCall) -> SummaryAnswer;
}

/// What the adapter replied to a request.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Reply {
    pub transcript: Option<Vec<ChatMessage>>,
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
        self.ensure_started()?;
        let msg = build(self.next_id);
        self.next_id += 1;
        let outcome = self.exchange(&msg, summaries);
        outcome.map_err(|kind| self.fail(&msg, kind))
    }

    fn ensure_started(&mut self) -> Result<(), AdapterFailure> {
        if self.child.is_some() {
            return Ok(());
        }
        let hello = HarnessMsg::Hello {
            id: 0,
            protocol: PROTOCOL_VERSION,
        };
        let child = AdapterChild::spawn(&self.argv, &self.spec.env, self.stderr_dir.as_deref())
            .map_err(|kind| self.fail(&hello, kind))?;
        self.child = Some(child);
        self.hello_lines.clear();
        match self.handshake(&hello) {
            Ok(info) => {
                self.info = Some(info);
                Ok(())
            }
            Err(kind) => Err(self.fail(&hello, kind)),
        }
    }

    fn handshake(&mut self, hello: &HarnessMsg) -> Result<AdapterInfo, FailureKind> {
        let deadline = self.deadline();
        self.send_logged(hello, true)?;
        match self.read_logged(deadline, 0, true)? {
            AdapterMsg::Hello {
                protocol,
                name,
                version,
                capabilities,
                ..
            } => {
                if protocol != PROTOCOL_VERSION {
                    return Err(FailureKind::Protocol(format!(
                        "adapter speaks protocol {protocol}, the harness {PROTOCOL_VERSION}"
                    )));
                }
                let policies = super::policies::parse(&capabilities.policies)
                    .map_err(FailureKind::BadPolicy)?;
                check_hooks(&capabilities)?;
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
        msg: &HarnessMsg,
        summaries: &mut dyn SummaryService,
    ) -> Result<Reply, FailureKind> {
        let deadline = self.deadline();
        let id = msg.id();
        self.send(msg)?;
        let mut calls = 0u32;
        loop {
            match self.read(deadline, id)? {
                AdapterMsg::Summarize {
                    call,
                    prompt,
                    messages,
                    max_tokens,
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
                    });
                    self.send(&HarnessMsg::Summary { id, call, answer })?;
                    calls += 1;
                }
                AdapterMsg::Result {
                    transcript,
                    value,
                    labels,
                    ..
                } => {
                    return Ok(Reply {
                        transcript,
                        value,
                        labels,
                        summarize_calls: calls,
                    })
                }
                AdapterMsg::Error { message, .. } => {
                    return Err(FailureKind::AdapterError(message))
                }
                AdapterMsg::Hello { .. } => {
                    return Err(FailureKind::Protocol("hello in reply to a request".into()))
                }
            }
        }
    }

    fn deadline(&self) -> Instant {
        Instant::now() + Duration::from_millis(self.spec.timeout_ms)
    }

    fn send(&mut self, msg: &HarnessMsg) -> Result<(), FailureKind> {
        self.send_logged(msg, false)
    }

    fn send_logged(&mut self, msg: &HarnessMsg, hello: bool) -> Result<(), FailureKind> {
        let line = serde_json::to_string(msg)
            .map_err(|e| FailureKind::Protocol(format!("cannot encode request: {e}")))?;
        self.log(|| record_line(Dir::ToAdapter, &line, true), hello);
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

    /// The next adapter message of request `id`, checked for JSON, protocol and id.
    fn read(&mut self, deadline: Instant, id: u64) -> Result<AdapterMsg, FailureKind> {
        self.read_logged(deadline, id, false)
    }

    fn read_logged(
        &mut self,
        deadline: Instant,
        id: u64,
        hello: bool,
    ) -> Result<AdapterMsg, FailureKind> {
        let timeout_ms = self.spec.timeout_ms;
        let child = self.child.as_mut().ok_or(FailureKind::Exited {
            status: "not running".into(),
        })?;
        let line = child.recv(deadline, timeout_ms)?;
        let parsed = serde_json::from_str::<Value>(&line);
        let is_json = parsed.is_ok();
        self.log(|| record_line(Dir::FromAdapter, &line, is_json), hello);
        let value: Value =
            parsed.map_err(|e| FailureKind::InvalidJson(format!("{e}: {}", excerpt(&line))))?;
        let msg: AdapterMsg = serde_json::from_value(value)
            .map_err(|e| FailureKind::Protocol(format!("{e}: {}", excerpt(&line))))?;
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
