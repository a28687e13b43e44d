//! Adapter failures. Every message names the adapter command, the request and the last
//! lines the adapter wrote to stderr, so a CI log alone says what went wrong.

use std::fmt;

/// What went wrong with the adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// The command could not be split or the program could not be started.
    Spawn(String),
    /// No message from the adapter within `limit` (the child is killed).
    Timeout { timeout_ms: u64, limit: Limit },
    /// The child exited (or closed stdout) before replying; `status` as the OS reports it.
    Exited { status: String },
    /// A line that is not JSON, or longer than the line limit.
    InvalidJson(String),
    /// Valid JSON that is not a protocol message, or a message out of place.
    Protocol(String),
    /// A reply to another request than the one in flight.
    WrongId { expected: u64, got: u64 },
    /// The adapter answered `error`.
    AdapterError(String),
    /// Protocol 2: the two sides hold different transcripts (a digest that does not
    /// match, a delta against rows the base does not have), found by the adapter (its
    /// `error` with code `desync`) or by the harness (a result's edits).
    Desync(String),
    /// The reply transcript cannot be a transcript (unknown role, bad tool call id).
    BadTranscript(String),
    /// The hello declares a policy the harness does not know, or bad parameters: bad
    /// input, refused before any case.
    BadPolicy(String),
    /// The adapter's hello asks for something the harness does not offer (an unknown
    /// hook): a configuration error, refused before any case where the command can.
    Config(String),
}

/// Which time limit an adapter hit: each is named in the failure with what raises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// From the start of the child to its `hello` (the cold import of its packages).
    Startup,
    /// From the harness's last message of a request (the request itself, or the answer
    /// to a `summarize` call) to the adapter's next message.
    Request,
}

impl Limit {
    /// The limit's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Limit::Startup => "start-up limit",
            Limit::Request => "per-request limit",
        }
    }

    /// What the harness waited for.
    fn waited_for(self) -> &'static str {
        match self {
            Limit::Startup => "no hello",
            Limit::Request => "no message from the adapter",
        }
    }

    /// The flag and the scenario key that raise the limit.
    pub fn raised_by(self) -> &'static str {
        match self {
            Limit::Startup => {
                "--adapter-startup-timeout-ms MS (a scenario file's startup_timeout_ms)"
            }
            Limit::Request => "--adapter-timeout-ms MS (a scenario file's timeout_ms)",
        }
    }
}

/// One adapter failure: what, for which command and request, with its stderr tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterFailure {
    pub command: String,
    pub request: String,
    pub kind: FailureKind,
    pub stderr_tail: Vec<String>,
}

impl FailureKind {
    /// A short stable name for reports and tests.
    pub fn name(&self) -> &'static str {
        match self {
            FailureKind::Spawn(_) => "spawn",
            FailureKind::Timeout { .. } => "timeout",
            FailureKind::Exited { .. } => "exited",
            FailureKind::InvalidJson(_) => "invalid-json",
            FailureKind::Protocol(_) => "protocol",
            FailureKind::WrongId { .. } => "wrong-id",
            FailureKind::AdapterError(_) => "adapter-error",
            FailureKind::Desync(_) => "desync",
            FailureKind::BadTranscript(_) => "bad-transcript",
            FailureKind::BadPolicy(_) => "bad-policy",
            FailureKind::Config(_) => "config",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureKind::Spawn(e) => write!(f, "could not start: {e}"),
            FailureKind::Timeout { timeout_ms, limit } => write!(
                f,
                "{} within {timeout_ms} ms, the {} (killed); {} raises it",
                limit.waited_for(),
                limit.name(),
                limit.raised_by()
            ),
            FailureKind::Exited { status } => write!(f, "exited before replying ({status})"),
            FailureKind::InvalidJson(e) => write!(f, "wrote a line that is not JSON: {e}"),
            FailureKind::Protocol(e) => write!(f, "protocol violation: {e}"),
            FailureKind::WrongId { expected, got } => {
                write!(
                    f,
                    "answered request {got} while request {expected} was in flight"
                )
            }
            FailureKind::AdapterError(e) => write!(f, "reported an error: {e}"),
            FailureKind::Desync(e) => write!(
                f,
                "desynchronised: the transcript it holds is not the harness's (refused): {e}"
            ),
            FailureKind::BadTranscript(e) => write!(f, "returned a bad transcript: {e}"),
            FailureKind::BadPolicy(e) => write!(f, "declared a bad policy in its hello: {e}"),
            FailureKind::Config(e) => write!(f, "refused: {e}"),
        }
    }
}

impl fmt::Display for AdapterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "adapter failure [{}]: `{}` at {}: {}",
            self.kind.name(),
            self.command,
            self.request,
            self.kind
        )?;
        if self.stderr_tail.is_empty() {
            write!(f, "; stderr: (empty)")
        } else {
            write!(f, "; last stderr lines:")?;
            for line in &self.stderr_tail {
                write!(f, "\n  | {line}")?;
            }
            Ok(())
        }
    }
}

impl std::error::Error for AdapterFailure {}
