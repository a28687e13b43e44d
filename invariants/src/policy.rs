//! Two classes of invariant. A *universal* invariant holds for every compactor: an
//! API-valid transcript, user text never lost or rewritten, nothing dropped without a
//! summary that saw it, bounded compaction, no infinite loop, … A *policy* holds only
//! for a compactor that declares it (an adapter in its `hello`, `capabilities.policies`;
//! the Rust reference model declares every Hermes policy): a policy invariant, or a
//! policy rule inside a universal invariant, runs only when its policy is declared,
//! with the declared parameters.

use crate::marker_template::MarkerTemplate;
use crate::no_infinite_loop::{COOLDOWN_CONNECTION_DROPPED_MS, COOLDOWN_MIN_MS};

/// Which compactors an invariant holds for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvariantClass {
    /// Every compactor.
    Universal,
    /// Only a compactor that declares the named policy ([`POLICIES`]).
    Policy(&'static str),
}

impl InvariantClass {
    /// `universal`, or `policy:<name>`.
    pub fn label(self) -> String {
        match self {
            InvariantClass::Universal => "universal".to_string(),
            InvariantClass::Policy(p) => format!("policy:{p}"),
        }
    }
}

/// `protect_first_n`: the protected head of N non-system rows.
pub const PROTECT_FIRST_N: &str = "protect_first_n";
/// `newest_reply_verbatim`: a batch pass keeps the newest visible reply verbatim.
pub const NEWEST_REPLY_VERBATIM: &str = "newest_reply_verbatim";
/// `failure_cooldown`: after a failed summary, automatic compaction waits.
pub const FAILURE_COOLDOWN: &str = "failure_cooldown";
/// `absorb_exchanges`: a micro pass absorbs the oldest exchange, one at a time.
pub const ABSORB_EXCHANGES: &str = "absorb_exchanges";
/// `static_fallback`: a batch pass whose summarizer calls all failed (or that made none)
/// may still drop its window behind a locally built fallback summary, losing the facts
/// the fallback does not carry.
pub const STATIC_FALLBACK: &str = "static_fallback";
/// `tool_output_prune`: a batch pass rewrites old tool outputs (and long tool-call
/// arguments) to shorter descriptions before it summarizes.
pub const TOOL_OUTPUT_PRUNE: &str = "tool_output_prune";
/// `summary_chain`: batch compactions keep a chain of summaries (each of a window that
/// may overlap the previous one) instead of one rolling summary, oldest first.
pub const SUMMARY_CHAIN: &str = "summary_chain";
/// `marker_template`: every micro marker is the declared prefix, the rolling summary and
/// the declared suffix.
pub const MARKER_TEMPLATE: &str = "marker_template";

/// How many head rows `protect_first_n` protects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadPolicy {
    /// `{}`: the `protect_first_n` of the case's configuration (what the harness sends).
    Config,
    /// `{"n": N}`: a fixed N, whatever the configuration says.
    Fixed(u32),
}

/// The waits of `failure_cooldown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailureCooldown {
    /// `ms`: the wait after a failed summarizer call.
    pub ms: u64,
    /// `connection_dropped_ms` (optional, default `ms`): the wait after a call whose
    /// connection dropped (the harness's `network` fault).
    pub connection_dropped_ms: u64,
    /// `empty_output_ms` (optional, default `ms`): the wait after a call that answered
    /// empty content (the harness's `empty` fault).
    pub empty_output_ms: u64,
}

/// The policies a compactor declares, with their parameters (`None`/`false`: not
/// declared, its rules do not run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policies {
    pub protect_first_n: Option<HeadPolicy>,
    pub newest_reply_verbatim: bool,
    pub failure_cooldown: Option<FailureCooldown>,
    pub absorb_exchanges: bool,
    pub static_fallback: bool,
    /// `static_fallback`'s `text`: the fallback text the compactor writes when no
    /// summarizer call of a batch pass was answered, a template whose `{name}` holes
    /// stand for any text (`fallback_text.rs`); `None`: not declared, only the fallback's
    /// facts are judged. `'static` so that the policies stay `Copy`: the harness
    /// keeps one copy per distinct text a run declares (`harness/src/external/policies.rs`).
    pub static_fallback_text: Option<&'static str>,
    /// `static_fallback`'s `connection_dropped_aborts`: a batch pass whose last summarizer
    /// call failed with a dropped connection (the harness's `network` fault) and none was
    /// answered aborts — returns the list as it was — instead of writing the fallback
    /// (Hermes' #29559 fix); summary-failure-safe judges it.
    pub static_fallback_connection_dropped_aborts: bool,
    pub tool_output_prune: bool,
    pub summary_chain: bool,
    /// `marker_template`'s `prefix` and `suffix` (`marker_template.rs`), `'static` as
    /// the fallback text is (kept once per distinct text by the harness).
    pub marker_template: Option<MarkerTemplate>,
}

impl Default for Policies {
    /// What Hermes does (the reference model's declaration).
    fn default() -> Self {
        Policies::HERMES
    }
}

impl Policies {
    /// No policy: only the universal invariants judge.
    pub const NONE: Policies = Policies {
        protect_first_n: None,
        newest_reply_verbatim: false,
        failure_cooldown: None,
        absorb_exchanges: false,
        static_fallback: false,
        static_fallback_text: None,
        static_fallback_connection_dropped_aborts: false,
        tool_output_prune: false,
        summary_chain: false,
        marker_template: None,
    };

    /// Every policy as Hermes follows it (the Rust reference model, the Hermes adapters,
    /// the reference Python adapter): the configured head, the newest reply verbatim,
    /// 60 s after a failed summary (30 s after a dropped connection), micro passes
    /// absorbing one exchange at a time; one rolling summary (no `summary_chain`). No
    /// `marker_template`: a marker's wording is the release's text, which only an
    /// adapter of that release can read and declare.
    pub const HERMES: Policies = Policies {
        protect_first_n: Some(HeadPolicy::Config),
        newest_reply_verbatim: true,
        failure_cooldown: Some(FailureCooldown {
            ms: COOLDOWN_MIN_MS,
            connection_dropped_ms: COOLDOWN_CONNECTION_DROPPED_MS,
            empty_output_ms: COOLDOWN_MIN_MS,
        }),
        absorb_exchanges: true,
        static_fallback: true,
        static_fallback_text: None,
        static_fallback_connection_dropped_aborts: false,
        tool_output_prune: true,
        summary_chain: false,
        marker_template: None,
    };

    /// Whether policy `name` is declared.
    pub fn declares(&self, name: &str) -> bool {
        match name {
            PROTECT_FIRST_N => self.protect_first_n.is_some(),
            NEWEST_REPLY_VERBATIM => self.newest_reply_verbatim,
            FAILURE_COOLDOWN => self.failure_cooldown.is_some(),
            ABSORB_EXCHANGES => self.absorb_exchanges,
            STATIC_FALLBACK => self.static_fallback,
            TOOL_OUTPUT_PRUNE => self.tool_output_prune,
            SUMMARY_CHAIN => self.summary_chain,
            MARKER_TEMPLATE => self.marker_template.is_some(),
            _ => false,
        }
    }

    /// Whether an invariant of `class` runs under these policies.
    pub fn judges(&self, class: InvariantClass) -> bool {
        match class {
            InvariantClass::Universal => true,
            InvariantClass::Policy(p) => self.declares(p),
        }
    }

    /// The protected head's size given the case's `protect_first_n`, if declared.
    pub fn head_rows(&self, configured: u32) -> Option<u32> {
        self.protect_first_n.map(|p| match p {
            HeadPolicy::Config => configured,
            HeadPolicy::Fixed(n) => n,
        })
    }

    /// The declared policies in [`POLICIES`] order, each with its parameters as a JSON
    /// object (the `hello` form): `protect_first_n {}`, `failure_cooldown {"ms":60000,…}`.
    pub fn declared(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(p) = self.protect_first_n {
            let params = match p {
                HeadPolicy::Config => "{}".to_string(),
                HeadPolicy::Fixed(n) => format!("{{\"n\":{n}}}"),
            };
            out.push((PROTECT_FIRST_N, params));
        }
        if self.newest_reply_verbatim {
            out.push((NEWEST_REPLY_VERBATIM, "{}".to_string()));
        }
        if let Some(c) = self.failure_cooldown {
            // `empty_output_ms` is written only where it differs from `ms` (its default).
            let empty = if c.empty_output_ms == c.ms {
                String::new()
            } else {
                format!(",\"empty_output_ms\":{}", c.empty_output_ms)
            };
            out.push((
                FAILURE_COOLDOWN,
                format!(
                    "{{\"ms\":{},\"connection_dropped_ms\":{}{empty}}}",
                    c.ms, c.connection_dropped_ms
                ),
            ));
        }
        if self.absorb_exchanges {
            out.push((ABSORB_EXCHANGES, "{}".to_string()));
        }
        if self.static_fallback {
            let mut params = serde_json::Map::new();
            if self.static_fallback_connection_dropped_aborts {
                params.insert("connection_dropped_aborts".into(), true.into());
            }
            if let Some(text) = self.static_fallback_text {
                params.insert("text".into(), text.into());
            }
            out.push((
                STATIC_FALLBACK,
                serde_json::Value::Object(params).to_string(),
            ));
        }
        if self.tool_output_prune {
            out.push((TOOL_OUTPUT_PRUNE, "{}".to_string()));
        }
        if self.summary_chain {
            out.push((SUMMARY_CHAIN, "{}".to_string()));
        }
        if let Some(t) = self.marker_template {
            let mut params = serde_json::Map::new();
            for (key, piece) in [("prefix", t.prefix), ("suffix", t.suffix)] {
                if !piece.is_empty() {
                    params.insert(key.into(), piece.into());
                }
            }
            out.push((
                MARKER_TEMPLATE,
                serde_json::Value::Object(params).to_string(),
            ));
        }
        out
    }

    /// One line: `name {params}, …`, or `none`.
    pub fn describe(&self) -> String {
        let d = self.declared();
        if d.is_empty() {
            return "none".to_string();
        }
        d.iter()
            .map(|(n, p)| format!("{n} {p}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Catalogue entry of a policy: its parameters and what it switches on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyInfo {
    pub name: &'static str,
    /// The parameter object, as documented.
    pub params: &'static str,
    /// The invariants (class `Policy(name)`) or rules of universal invariants it
    /// switches on: `(invariant id, rule)`.
    pub rules: &'static [(&'static str, &'static str)],
}

/// Every policy, in declaration order.
pub const POLICIES: &[PolicyInfo] = &[
    PolicyInfo {
        name: PROTECT_FIRST_N,
        params: "{} (the configured protect_first_n) or {\"n\": N}",
        rules: &[(
            "head-protected",
            "the first N non-system rows (extended over a following tool run) survive \
             micro passes and repairs in order, before any summary; after the first batch \
             compaction of a session the head decays",
        )],
    },
    PolicyInfo {
        name: NEWEST_REPLY_VERBATIM,
        params: "{}",
        rules: &[(
            "user-turns-intact",
            "a batch pass keeps the newest visible assistant reply, same id, its text a \
             contiguous run of its content",
        )],
    },
    PolicyInfo {
        name: FAILURE_COOLDOWN,
        params: "{\"ms\": D}, optional \"connection_dropped_ms\": D2, \"empty_output_ms\": D3",
        rules: &[(
            "no-infinite-loop",
            "no automatic compaction (preflight, after a response) within D ms after a \
             failed summarizer call (D2 ms after a dropped connection, D3 ms after empty \
             content)",
        )],
    },
    PolicyInfo {
        name: ABSORB_EXCHANGES,
        params: "{}",
        rules: &[(
            "exchange-absorbed-once",
            "the whole invariant: a micro pass absorbs one exchange, the oldest past the \
             protected head, each exactly once (unless skipped after 3 failed summaries)",
        )],
    },
    PolicyInfo {
        name: STATIC_FALLBACK,
        params: "{} or {\"text\": T} (T: the fallback text, `{name}` holes for any text); \
                 optional \"connection_dropped_aborts\": true",
        rules: &[
            (
                "no-silent-drop",
                "a batch pass with no answered summarizer call may drop its window behind the \
                 summary it writes, losing the facts that summary does not spell (without the \
                 policy such a pass drops no row it does not carry)",
            ),
            (
                "summary-failure-safe",
                "a summary a batch pass writes with no answered summarizer call is the declared \
                 fallback text T, as the harness reads its bytes (when T is declared), and \
                 spells no fact the harness never saw before the pass; with \
                 connection_dropped_aborts, a pass whose last call dropped its connection \
                 writes no summary (it aborts)",
            ),
        ],
    },
    PolicyInfo {
        name: TOOL_OUTPUT_PRUNE,
        params: "{}",
        rules: &[
            (
                "no-silent-drop",
                "a tool row of a batch window may leave with facts no answered call saw when \
                 its answered call named it (the pruned output's call id or a quote of it)",
            ),
            (
                "kept-rows-intact",
                "a batch pass may rewrite a kept tool row's output, or the arguments of a kept \
                 row's tool calls (same calls, its text unchanged)",
            ),
        ],
    },
    PolicyInfo {
        name: SUMMARY_CHAIN,
        params: "{}",
        rules: &[(
            "one-marker-max",
            "several batch summaries may be live, standing in the order they were written \
             (oldest first, as the harness numbered them); still at most one micro marker",
        )],
    },
    PolicyInfo {
        name: MARKER_TEMPLATE,
        params: "{\"prefix\": P, \"suffix\": S} (either may be left out, not both)",
        rules: &[(
            "marker-pristine",
            "every micro marker a micro pass writes (new, or its text rewritten) starts with \
             P and ends with S, as the harness reads its bytes",
        )],
    },
];

/// The policy rules inside universal invariant `id` (policy name, rule).
pub fn rules_of(id: &str) -> Vec<(&'static str, &'static str)> {
    POLICIES
        .iter()
        .flat_map(|p| p.rules.iter().map(move |(inv, rule)| (p.name, *inv, *rule)))
        .filter(|(_, inv, _)| *inv == id)
        .map(|(p, _, rule)| (p, rule))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermes_declares_every_policy_but_the_chain_and_the_template_and_none_declares_nothing() {
        for p in POLICIES {
            let left_out = [SUMMARY_CHAIN, MARKER_TEMPLATE].contains(&p.name);
            assert_eq!(Policies::HERMES.declares(p.name), !left_out, "{}", p.name);
            assert!(!Policies::NONE.declares(p.name), "{}", p.name);
        }
        assert_eq!(Policies::HERMES.declared().len(), POLICIES.len() - 2);
        let template = Policies {
            marker_template: Some(MarkerTemplate {
                prefix: "P\n",
                suffix: "",
            }),
            ..Policies::NONE
        };
        assert!(template.declares(MARKER_TEMPLATE));
        assert_eq!(template.describe(), "marker_template {\"prefix\":\"P\\n\"}");
        let chain = Policies {
            summary_chain: true,
            ..Policies::NONE
        };
        assert_eq!(chain.describe(), "summary_chain {}");
        assert_eq!(Policies::NONE.describe(), "none");
        assert!(!Policies::HERMES.declares("no_such"));
    }

    #[test]
    fn classes_select_invariants() {
        let p = Policies {
            newest_reply_verbatim: true,
            ..Policies::NONE
        };
        assert!(p.judges(InvariantClass::Universal));
        assert!(!p.judges(InvariantClass::Policy(ABSORB_EXCHANGES)));
        assert!(Policies::HERMES.judges(InvariantClass::Policy(ABSORB_EXCHANGES)));
        assert_eq!(
            InvariantClass::Policy(ABSORB_EXCHANGES).label(),
            "policy:absorb_exchanges"
        );
        let fixed = Policies {
            protect_first_n: Some(HeadPolicy::Fixed(2)),
            ..Policies::NONE
        };
        assert_eq!(fixed.head_rows(5), Some(2));
        assert_eq!(Policies::HERMES.head_rows(5), Some(5));
        assert_eq!(Policies::NONE.head_rows(5), None);
        assert_eq!(fixed.describe(), "protect_first_n {\"n\":2}");
    }

    #[test]
    fn every_rule_names_a_catalogue_invariant() {
        let ids: Vec<&str> = crate::catalogue().iter().map(|i| i.id).collect();
        for p in POLICIES {
            for (inv, _) in p.rules {
                assert!(ids.contains(inv), "{} names {inv}", p.name);
            }
        }
        assert_eq!(rules_of("head-protected")[0].0, PROTECT_FIRST_N);
        assert!(rules_of("api-valid").is_empty());
    }
}
