use crate::class::{classify, pure_append, unchanged, EventClass};
use crate::idset::IdMap;
use crate::json_valid::is_json;
use crate::{Invariant, InvariantInfo};
use compactsim_model::{CallId, Event, Message, Role, ToolCall, Transition, Witness};
use std::sync::Arc;

/// The transcript is one a strict provider accepts: rules 1–6 of hermes-domain §1.3.
///
/// Checked on `after` of every transition except appends: an append is the world's
/// input, which Hermes repairs before sending (two consecutive user rows are normal in
/// the live list until the pre-send repair merges them). Compaction passes, repairs,
/// restarts that changed the list and unknown event kinds are all checked. A provider call is checked on its
/// `before`, the request that was sent. Preflight decisions, failed turns, session
/// resets and rotations are not requests and are not checked (the next request is).
///
/// A list that passed every rule is remembered as a valid prefix for as long as later
/// transitions provably only append to it (or leave it alone, see `class.rs`); checking
/// its extension then resumes the scan where the prefix ended, with the same result as
/// a full scan (all six rules are local to the rows after a valid prefix, but rule 5's
/// count, which the scan carries).
#[derive(Clone, Debug, Default)]
pub struct ApiValid {
    /// Tool-call lists whose arguments already parsed, per row. Holding the `Arc` keeps
    /// the allocation alive, so pointer equality proves the list is unchanged.
    parsed_calls: IdMap<Arc<[ToolCall]>>,
    known_ids: Vec<CallId>,
    run_ids: Vec<CallId>,
    /// The scan state at the end of a valid prefix of the current list.
    valid_prefix: Option<Scan>,
}

/// Where a scan stopped: rows scanned, user rows seen, the nearest assistant and its
/// call ids.
#[derive(Clone, Debug, Default)]
struct Scan {
    len: usize,
    users: usize,
    known_from: Option<usize>,
    known_ids: Vec<CallId>,
}

pub const INFO: InvariantInfo = InvariantInfo {
    id: "api-valid",
    statement: "tool results match the nearest preceding assistant's calls, every call \
                answered, no two consecutive user rows, first visible row is user, \
                >= 1 user row, arguments parse as JSON",
    catches: &[
        "H-52160",
        "H-58753",
        "H-11762",
        "H-75345-A",
        "HERMES-0.19.0-B1",
    ],
    class: crate::InvariantClass::Universal,
};

/// The rules of hermes-domain §1.3, numbered as there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ApiRule {
    ToolResultMatchesCall = 1,
    CallAnswered = 2,
    NoConsecutiveUser = 3,
    FirstVisibleUser = 4,
    HasUser = 5,
    ArgumentsJson = 6,
}

const RULE_COUNT: usize = 6;

impl ApiRule {
    pub const fn name(self) -> &'static str {
        match self {
            ApiRule::ToolResultMatchesCall => "tool-result-matches-call",
            ApiRule::CallAnswered => "call-answered",
            ApiRule::NoConsecutiveUser => "no-consecutive-user",
            ApiRule::FirstVisibleUser => "first-visible-user",
            ApiRule::HasUser => "has-user",
            ApiRule::ArgumentsJson => "arguments-json",
        }
    }

    /// "rule N name", as witnesses spell it.
    pub fn label(self) -> String {
        format!("rule {} {}", self as u8, self.name())
    }
}

/// The first breach of one rule.
#[derive(Debug)]
struct Breach {
    fact: String,
    rows: Vec<(usize, String)>,
}

type Breaches = [Option<Breach>; RULE_COUNT];

fn note(found: &mut Breaches, rule: ApiRule, fact: String, rows: Vec<(usize, String)>) {
    let slot = &mut found[rule as usize - 1];
    if slot.is_none() {
        *slot = Some(Breach { fact, rows });
    }
}

fn rule_of(slot: usize) -> ApiRule {
    [
        ApiRule::ToolResultMatchesCall,
        ApiRule::CallAnswered,
        ApiRule::NoConsecutiveUser,
        ApiRule::FirstVisibleUser,
        ApiRule::HasUser,
        ApiRule::ArgumentsJson,
    ][slot]
}

impl ApiValid {
    /// Checks `rows`, resuming after a valid prefix when given one, and passing over the
    /// rows `skip` proves valid. Returns the breaches and the scan state at the end of
    /// `rows`.
    fn check(
        &mut self,
        rows: &[Message],
        resume: Option<Scan>,
        skip: Option<Skip>,
    ) -> (Breaches, Scan) {
        let mut found: Breaches = Default::default();
        let resume = resume.filter(|s| s.len > 0 && s.len <= rows.len());
        let mut scan = resume.unwrap_or_default();
        self.known_ids.clear();
        if scan.len == 0 {
            check_first_visible(rows, &mut found);
        } else {
            self.known_ids.extend_from_slice(&scan.known_ids);
        }
        let mut skip = skip;
        let mut i = scan.len;
        while i < rows.len() {
            if let Some(s) = skip.take_if(|s| i == s.stop + 1) {
                scan.users = s.users;
                scan.known_from = s.known_from;
                self.known_ids.clone_from(&s.known_ids);
                i = s.resume_at;
                continue;
            }
            self.check_row(rows, i, &mut scan, &mut found);
            i += 1;
        }
        if scan.users == 0 {
            let fact = format!("no user row among {} rows", rows.len());
            let at = rows
                .first()
                .map(|_| (0, "first row".to_string()))
                .into_iter()
                .collect();
            note(&mut found, ApiRule::HasUser, fact, at);
        }
        scan.len = rows.len();
        scan.known_ids.clone_from(&self.known_ids);
        (found, scan)
    }

    /// Rules 1, 2, 3 and 6 on row `i`.
    fn check_row(&mut self, rows: &[Message], i: usize, scan: &mut Scan, found: &mut Breaches) {
        let m = &rows[i];
        match m.role {
            Role::User => {
                scan.users += 1;
                scan.known_from = None;
                self.known_ids.clear();
                if i > 0 && rows[i - 1].role == Role::User {
                    let fact = format!("{} and {} are consecutive user rows", rows[i - 1].id, m.id);
                    let at = vec![
                        (i - 1, "first user row".into()),
                        (i, "second user row".into()),
                    ];
                    note(found, ApiRule::NoConsecutiveUser, fact, at);
                }
            }
            Role::System => {
                scan.known_from = None;
                self.known_ids.clear();
            }
            Role::Assistant => {
                scan.known_from = Some(i);
                self.known_ids.clear();
                self.known_ids.extend(m.tool_calls.iter().map(|c| c.id));
                self.known_ids.sort_unstable();
                if !m.tool_calls.is_empty() {
                    self.check_answered(rows, i, found);
                    self.check_arguments(m, i, found);
                }
            }
            Role::Tool => {
                let matched = m
                    .tool_call_id
                    .is_some_and(|c| self.known_ids.binary_search(&c).is_ok());
                if !matched {
                    orphan(rows, i, scan.known_from, found);
                }
            }
        }
    }

    /// Rule 2: every call of the assistant at `i` is answered in the tool run after it.
    fn check_answered(&mut self, rows: &[Message], i: usize, found: &mut Breaches) {
        self.run_ids.clear();
        let run = rows[i + 1..].iter().take_while(|m| m.role == Role::Tool);
        self.run_ids.extend(run.filter_map(|m| m.tool_call_id));
        self.run_ids.sort_unstable();
        let run_end = i + 1 + self.run_ids.len();
        let missing = rows[i]
            .tool_calls
            .iter()
            .find(|c| self.run_ids.binary_search(&c.id).is_err());
        if let Some(call) = missing {
            let fact = format!(
                "{} of {} has no result in the tool run after it (rows {}..{run_end})",
                call.id,
                rows[i].id,
                i + 1
            );
            note(
                found,
                ApiRule::CallAnswered,
                fact,
                vec![(i, format!("{} unanswered", call.id))],
            );
        }
    }

    /// Rule 6: every call's arguments parse as JSON (cached per unchanged call list).
    fn check_arguments(&mut self, m: &Message, i: usize, found: &mut Breaches) {
        if self
            .parsed_calls
            .get(m.id)
            .is_some_and(|seen| Arc::ptr_eq(seen, &m.tool_calls))
        {
            return;
        }
        // Generated arguments are JSON by construction (proven against the text by
        // `generated_arguments_are_json`); any other text is parsed.
        let bad = m
            .tool_calls
            .iter()
            .find(|c| !c.arguments.json_by_construction() && !is_json(&c.arguments));
        match bad {
            None => self.parsed_calls.insert(m.id, m.tool_calls.clone()),
            Some(call) => {
                let fact = format!(
                    "arguments of {} ({}, {} chars) are not valid JSON",
                    call.id,
                    call.name,
                    call.arguments.len()
                );
                note(
                    found,
                    ApiRule::ArgumentsJson,
                    fact,
                    vec![(i, format!("{} arguments", call.id))],
                );
            }
        }
    }
}

/// The scan state of a valid prefix of `before` carried to the last user row before the
/// changed window and inside that prefix, where the checks of `after` resume: rows up to there are the same in both
/// lists, and no rule looks past a user row backwards (the known calls reset there, and
/// a tool run ends there), so they are as valid in `after` as they were in `before`.
/// The rows from that user row on are checked again.
fn resume_before_window(t: &Transition<'_>, scan: Scan) -> Option<Scan> {
    // The scan may end before `before` does (rows appended since are not checked yet).
    if scan.len > t.before.len() {
        return None;
    }
    let same_until = t.delta.prefix_rows.min(scan.len);
    let user = t.before[..same_until]
        .iter()
        .rposition(|m| m.role == Role::User)
        .filter(|&u| u > 0)?;
    let users_from = t.before[user..scan.len]
        .iter()
        .filter(|m| m.role == Role::User)
        .count();
    Some(Scan {
        len: user,
        users: scan.users - users_from,
        known_from: None,
        known_ids: Vec::new(),
    })
}

/// Rows of `after` a scan may pass over: from the first user row after the changed
/// window to where the valid prefix of `before` ended, both inside that prefix. Those
/// rows equal, in order, rows of `before` that passed every rule, and no rule looks back
/// past a user row, so they pass again; the state at the end of the prefix (shifted
/// to `after`'s indices) and the user count (the prefix's, less the window's removed
/// users, plus its added ones) carry over.
#[derive(Debug)]
struct Skip {
    /// The first user row after the window (checked: rule 3 looks one row back).
    stop: usize,
    /// Where checking resumes: the end of the valid prefix, in `after`'s indices.
    resume_at: usize,
    users: usize,
    known_from: Option<usize>,
    known_ids: Vec<CallId>,
}

fn skip_after_window(t: &Transition<'_>, scan: &Scan) -> Option<Skip> {
    let (removed, added) = (t.delta.removed_range(), t.delta.added_range());
    if scan.len > t.before.len() || scan.len <= removed.end {
        return None;
    }
    // `after[i]` for `i >= added.end` is `before[i - added.end + removed.end]`.
    let to_after = |i: usize| i - removed.end + added.end;
    let stop = (added.end..to_after(scan.len)).find(|&i| t.after[i].role == Role::User)?;
    let users = |rows: &[Message]| rows.iter().filter(|m| m.role == Role::User).count();
    Some(Skip {
        stop,
        resume_at: to_after(scan.len),
        users: scan.users - users(&t.before[removed.clone()]) + users(&t.after[added.clone()]),
        known_from: scan.known_from.map(to_after),
        known_ids: scan.known_ids.clone(),
    })
}

/// Rule 4: after the optional system prompt the first visible row is a user row.
fn check_first_visible(rows: &[Message], found: &mut Breaches) {
    let start = usize::from(rows.first().is_some_and(|m| m.role == Role::System));
    if let Some(first) = rows.get(start).filter(|m| m.role != Role::User) {
        let fact = format!(
            "first row after the system prompt is {}",
            first.role.as_str()
        );
        note(
            found,
            ApiRule::FirstVisibleUser,
            fact,
            vec![(start, "first visible row".into())],
        );
    }
}

/// Rule 1: the tool row at `i` does not answer a call of the nearest preceding assistant.
fn orphan(rows: &[Message], i: usize, known_from: Option<usize>, found: &mut Breaches) {
    let answers = rows[i]
        .tool_call_id
        .map_or_else(|| "no call id".to_string(), |c| c.to_string());
    let mut at = vec![(i, format!("tool result for {answers}"))];
    let fact = match known_from {
        Some(a) => {
            at.push((a, "nearest preceding assistant".into()));
            format!(
                "{} answers {answers}, not a call of {}",
                rows[i].id, rows[a].id
            )
        }
        None => format!(
            "{} answers {answers} with no assistant before it",
            rows[i].id
        ),
    };
    note(found, ApiRule::ToolResultMatchesCall, fact, at);
}

impl Invariant for ApiValid {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        !matches!(
            classify(event),
            EventClass::Append
                | EventClass::Preflight(_)
                | EventClass::TurnFailed
                | EventClass::SessionReset
                | EventClass::Rotation
        )
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        // The remembered prefix belongs to `before`; it survives into `after` only if
        // the transition provably left it alone.
        let keeps = unchanged(t) || pure_append(t).is_some();
        // A restart that reloaded the very list is no request and changed nothing (the
        // list between two turns may be empty after a session reset).
        let reloaded = unchanged(t) && matches!(classify(t.event), EventClass::Restart);
        if !self.checks(t.event) || reloaded {
            if !keeps {
                self.valid_prefix = None;
            }
            return None;
        }
        let request = matches!(classify(t.event), EventClass::ProviderCall(_));
        let rows = if request { t.before } else { t.after };
        let side = if request { "before" } else { "after" };
        let (resume, skip) = if request || keeps {
            (self.valid_prefix.take(), None)
        } else {
            let prefix = self.valid_prefix.take();
            let skip = prefix.as_ref().and_then(|scan| skip_after_window(t, scan));
            (prefix.and_then(|scan| resume_before_window(t, scan)), skip)
        };
        let (found, scan) = self.check(rows, resume, skip);
        let valid = found.iter().all(Option::is_none);
        self.valid_prefix = (valid && (!request || keeps)).then_some(scan);
        let broken: Vec<String> = (0..RULE_COUNT)
            .filter(|&k| found[k].is_some())
            .map(|k| rule_of(k).label())
            .collect();
        if broken.is_empty() {
            return None;
        }
        let mut w = Witness::default().fact(format!(
            "transcript API-invalid {side} {}: {}",
            t.event.describe(),
            broken.join(", ")
        ));
        for (k, breach) in found.into_iter().enumerate() {
            let Some(breach) = breach else { continue };
            let label = rule_of(k).label();
            w = w.fact(format!("{label}: {}", breach.fact));
            for (i, what) in breach.rows {
                w = w.row(i, &rows[i], format!("{side}: {label}: {what}"));
            }
        }
        Some(w)
    }
}

#[cfg(test)]
mod tests;
