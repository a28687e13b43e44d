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
#[derive(Debug, Default)]
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
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::MsgId;

    fn valid() -> Vec<Message> {
        vec![
            system(0),
            user(1),
            calling(2, &[1, 2]),
            tool(3, 1),
            tool(4, 2),
            reply(5),
            user(6),
            micro_marker(7, &[1]),
            user(8),
        ]
    }

    /// Runs the checker on `after` and returns the witness; asserts it names only `rule`.
    fn only(rule: ApiRule, after: &[Message]) -> Witness {
        let ev = repair_event(1);
        let w = ApiValid::default()
            .observe(&transition(&ev, &valid(), after))
            .unwrap_or_else(|| panic!("{} must fire", rule.label()));
        let w = readable(w);
        assert!(w.facts[0].ends_with(&rule.label()), "{:?}", w.facts);
        assert!(w.facts[1].starts_with(&rule.label()));
        assert!(w.rows.iter().all(|r| r.note.contains(&rule.label())));
        w
    }

    #[test]
    fn quiet_on_a_valid_transcript_with_and_without_system() {
        let mut inv = ApiValid::default();
        let ev = absorbed(1, &[]);
        assert!(inv.observe(&transition(&ev, &[], &valid())).is_none());
        assert!(inv.observe(&transition(&ev, &[], &valid()[1..])).is_none());
    }

    #[test]
    fn rule_1_tool_result_for_a_call_of_an_older_assistant() {
        let mut after = valid();
        after.insert(6, tool(9, 1));
        let w = only(ApiRule::ToolResultMatchesCall, &after);
        assert_eq!(witness_ids(&w), vec![9, 5]);
        assert_eq!(w.rows[0].index, 6);
    }

    #[test]
    fn rule_1_stray_tool_row_after_a_user_row() {
        let mut after = valid();
        after.insert(7, tool(9, 1));
        let w = only(ApiRule::ToolResultMatchesCall, &after);
        assert_eq!(witness_ids(&w), vec![9]);
    }

    #[test]
    fn rule_2_call_without_a_result() {
        let mut after = valid();
        after.remove(4);
        let w = only(ApiRule::CallAnswered, &after);
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(2), 2));
        assert!(w.facts[1].contains("call_2"));
    }

    #[test]
    fn rule_3_two_consecutive_user_rows() {
        let mut after = valid();
        after.remove(7);
        let w = only(ApiRule::NoConsecutiveUser, &after);
        assert_eq!(witness_ids(&w), vec![6, 8]);
    }

    #[test]
    fn rule_4_summary_marker_as_first_visible_row() {
        let mut after = valid();
        after[1] = micro_marker(9, &[1]);
        let w = only(ApiRule::FirstVisibleUser, &after);
        assert_eq!((w.rows[0].id, w.rows[0].index), (MsgId(9), 1));
    }

    #[test]
    fn rule_5_no_user_row() {
        let after = vec![system(0), micro_marker(1, &[1])];
        let ev = repair_event(1);
        let w = ApiValid::default()
            .observe(&transition(&ev, &[], &after))
            .expect("zero users fires");
        assert!(w
            .facts
            .iter()
            .any(|f| f.starts_with(&ApiRule::HasUser.label())));
        assert!(w
            .facts
            .iter()
            .any(|f| f.starts_with(&ApiRule::FirstVisibleUser.label())));
        assert_eq!(w.facts.len(), 3);
    }

    #[test]
    fn rule_6_truncated_arguments() {
        let mut after = valid();
        let mut calls = after[2].tool_calls.to_vec();
        calls[1].arguments = "{\"cmd\":\"l".into();
        after[2].set_tool_calls(calls);
        let w = only(ApiRule::ArgumentsJson, &after);
        assert_eq!(witness_ids(&w), vec![2]);
        assert!(w.facts[1].contains("call_2"));
    }

    #[test]
    fn rule_6_rechecks_a_row_whose_calls_were_rewritten() {
        let mut inv = ApiValid::default();
        let ev = repair_event(1);
        let good = valid();
        assert!(inv.observe(&transition(&ev, &[], &good)).is_none());
        let mut bad = good.clone();
        let mut calls = bad[2].tool_calls.to_vec();
        calls[0].arguments = "not json".into();
        bad[2].set_tool_calls(calls);
        assert!(inv.observe(&transition(&ev, &good, &bad)).is_some());
    }

    #[test]
    fn appends_are_not_judged() {
        let mut after = valid();
        after.push(user(9));
        let mut inv = ApiValid::default();
        let ev = append_event(2);
        assert!(!inv.checks(&ev));
        assert!(inv.observe(&transition(&ev, &valid(), &after)).is_none());
        let ev = restart_event(2);
        assert!(inv.observe(&transition(&ev, &valid(), &after)).is_some());
        let empty: Vec<Message> = Vec::new();
        let t = Transition::new(3, &ev, &empty, &empty, &[]);
        assert!(
            inv.observe(&t).is_none(),
            "a restart that reloaded the (empty) list is no request"
        );
    }

    #[test]
    fn a_request_is_judged_on_before_and_resumed_scans_match_full_ones() {
        let mut buf = valid();
        let mut inv = ApiValid::default();
        let call = call_event(1, Some(10), None);
        let n = buf.len();
        buf.push(reply(9));
        let t = Transition::new(0, &call, &buf[..n], &buf, &[]);
        assert!(
            inv.observe(&t).is_none(),
            "valid request, response appended"
        );
        for id in [10, 11] {
            let n = buf.len();
            buf.push(user(id));
            let ev = append_event(2);
            let t = Transition::new(1, &ev, &buf[..n], &buf, &[]);
            assert!(inv.observe(&t).is_none(), "appends are not judged");
        }
        let t = Transition::new(3, &call, &buf, &buf, &[]);
        let resumed = inv.observe(&t).expect("consecutive users in the request");
        let full = ApiValid::default()
            .observe(&t)
            .expect("same without a prefix");
        assert_eq!(resumed, full);
        assert_eq!(witness_ids(&resumed), vec![10, 11]);
        for ev in [
            reset_event(3),
            failed_event(3, false, 0),
            rotation_event(3, 0),
        ] {
            assert!(!inv.checks(&ev), "{ev:?} is not a request");
        }
    }

    #[test]
    fn a_pass_passes_over_the_valid_rows_after_its_window_and_matches_a_full_scan() {
        let before = vec![
            user(0),
            calling(1, &[1]),
            tool(2, 1),
            reply(3),
            user(4),
            calling(5, &[5, 6]),
            tool(6, 5),
            tool(7, 6),
            user(8),
            reply(9),
        ];
        let repair = repair_event(1);
        let pass = absorbed(2, &[1, 2, 3]);
        // Appended after the check (not judged): `tail` rows, then the pass drops 1..=3.
        for (tail, breaks) in [
            (vec![user(10), calling(11, &[11]), tool(12, 11)], false),
            (vec![user(10), user(13)], true),
            (vec![tool(14, 5)], true),
            (vec![], false),
        ] {
            let mut inv = ApiValid::default();
            assert!(inv
                .observe(&Transition::new(0, &repair, &before, &before, &[]))
                .is_none());
            let mut longer = before.clone();
            longer.extend(tail.iter().cloned());
            if !tail.is_empty() {
                let append = append_event(2);
                let t = Transition::new(1, &append, &longer[..before.len()], &longer, &[]);
                assert!(inv.observe(&t).is_none());
            }
            let mut after = longer.clone();
            after.splice(1..4, [micro_marker(20, &[1])]);
            let t = Transition::new(2, &pass, &longer, &after, &[]);
            let scan = inv.valid_prefix.clone().expect("the list was valid");
            let skip = skip_after_window(&t, &scan).expect("a user row after the window");
            assert_eq!((skip.stop, skip.resume_at), (2, 8));
            assert_eq!(skip.users, 3);
            let passed = inv.observe(&t);
            let full = ApiValid::default().observe(&t);
            assert_eq!(passed.is_some(), breaks, "{tail:?}");
            assert_eq!(passed, full, "{tail:?}");
            // The state carried over makes the next check match a full one too.
            if !breaks {
                let mut next = after.clone();
                next.push(tool(15, 11));
                let t = Transition::new(3, &repair, &after, &next, &[]);
                assert_eq!(inv.observe(&t), ApiValid::default().observe(&t), "{tail:?}");
            }
        }
    }

    #[test]
    fn a_skip_that_resumes_right_after_its_stop_row_ends() {
        // The first user row after the window is the last row checked before: the scan
        // resumes right after it, where it would have gone anyway.
        let before = vec![user(0), calling(1, &[1]), tool(2, 1), reply(3), user(4)];
        let after = vec![user(0), micro_marker(20, &[1]), user(4)];
        let mut inv = ApiValid::default();
        let repair = repair_event(1);
        assert!(inv
            .observe(&Transition::new(0, &repair, &before, &before, &[]))
            .is_none());
        let pass = absorbed(2, &[1, 2, 3]);
        let t = Transition::new(1, &pass, &before, &after, &[]);
        let skip = skip_after_window(&t, inv.valid_prefix.as_ref().unwrap()).unwrap();
        assert_eq!((skip.stop, skip.resume_at), (2, 3));
        assert!(inv.observe(&t).is_none());
        assert_eq!(
            inv.valid_prefix.as_ref().map(|s| (s.len, s.users)),
            Some((3, 2))
        );
    }

    #[test]
    fn a_pass_resumes_at_the_last_user_row_before_its_window_and_matches_a_full_scan() {
        let before = vec![
            user(0),
            reply(1),
            user(2),
            calling(3, &[3]),
            tool(4, 3),
            reply(5),
            user(6),
            reply(7),
        ];
        // The pass drops the exchange 3..=5: users 2 and 6 meet.
        let after = vec![user(0), reply(1), user(2), user(6), reply(7)];
        let repair = repair_event(1);
        let pass = absorbed(1, &[3, 4, 5]);
        let mut inv = ApiValid::default();
        assert!(inv
            .observe(&Transition::new(0, &repair, &before, &before, &[]))
            .is_none());
        let t = Transition::new(1, &pass, &before, &after, &[]);
        assert_eq!(t.delta.prefix_rows, 3);
        let resumed = inv.observe(&t).expect("consecutive users after the pass");
        let full = ApiValid::default().observe(&t).expect("same from scratch");
        assert_eq!(resumed, full);
        assert_eq!(witness_ids(&resumed), vec![2, 6]);
        // A valid pass resumes and stays quiet; the next one still sees the whole list.
        let good = vec![user(0), reply(1), user(2), reply(7)];
        let mut inv = ApiValid::default();
        inv.observe(&Transition::new(0, &repair, &before, &before, &[]));
        assert!(inv
            .observe(&Transition::new(1, &pass, &before, &good, &[]))
            .is_none());
        // Rows appended since the last check are checked from the resume point too.
        let mut longer = good.clone();
        longer.extend([user(20), user(21)]);
        let append = append_event(2);
        let n = good.len();
        assert!(inv
            .observe(&Transition::new(2, &append, &longer[..n], &longer, &[]))
            .is_none());
        let mut passed = longer.clone();
        passed.remove(3);
        let t = Transition::new(3, &pass, &longer, &passed, &[]);
        let resumed = inv.observe(&t).expect("consecutive users 2, 20");
        assert_eq!(resumed, ApiValid::default().observe(&t).unwrap());
        assert_eq!(witness_ids(&resumed), vec![2, 20]);
        let bad = vec![reply(1), user(2), reply(7)];
        let w = inv
            .observe(&Transition::new(2, &pass, &good, &bad, &[]))
            .expect("first visible row is no longer a user row");
        assert!(w.facts[0].contains(&ApiRule::FirstVisibleUser.label()));
    }
}
