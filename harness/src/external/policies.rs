//! `capabilities.policies` of an adapter's `hello` (adapters/PROTOCOL.md, "Policies"):
//! which policy invariants and rules judge the adapter, with their parameters. A name
//! or a parameter the harness does not know is refused: a declaration that is silently
//! ignored would judge the adapter by other rules than it asked for.

use compactsim_invariants::marker_template::MarkerTemplate;
use compactsim_invariants::policy::{
    ABSORB_EXCHANGES, FAILURE_COOLDOWN, MARKER_TEMPLATE, NEWEST_REPLY_VERBATIM, PROTECT_FIRST_N,
    STATIC_FALLBACK, SUMMARY_CHAIN, TOOL_OUTPUT_PRUNE,
};
use compactsim_invariants::{FailureCooldown, HeadPolicy, Policies, POLICIES};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// The policies `declared` names, checked; the error says what is wrong and lists the
/// known names.
pub fn parse(declared: &BTreeMap<String, Value>) -> Result<Policies, String> {
    let mut p = Policies::NONE;
    for (name, params) in declared {
        let Some(params) = params.as_object() else {
            return Err(format!(
                "policy `{name}`: parameters must be an object (`{{}}` for none), got {params}"
            ));
        };
        match name.as_str() {
            PROTECT_FIRST_N => {
                only(name, params, &["n"])?;
                p.protect_first_n = Some(match params.get("n") {
                    None => HeadPolicy::Config,
                    Some(n) => HeadPolicy::Fixed(u32_of(name, "n", n)?),
                });
            }
            NEWEST_REPLY_VERBATIM => {
                only(name, params, &[])?;
                p.newest_reply_verbatim = true;
            }
            FAILURE_COOLDOWN => {
                only(
                    name,
                    params,
                    &["ms", "connection_dropped_ms", "empty_output_ms"],
                )?;
                let ms = params
                    .get("ms")
                    .ok_or_else(|| format!("policy `{name}` needs `ms` (the cooldown in ms)"))?;
                let ms = u64_of(name, "ms", ms)?;
                let or_ms = |key: &str| match params.get(key) {
                    None => Ok(ms),
                    Some(v) => u64_of(name, key, v),
                };
                p.failure_cooldown = Some(FailureCooldown {
                    ms,
                    connection_dropped_ms: or_ms("connection_dropped_ms")?,
                    empty_output_ms: or_ms("empty_output_ms")?,
                });
            }
            ABSORB_EXCHANGES => {
                only(name, params, &[])?;
                p.absorb_exchanges = true;
            }
            STATIC_FALLBACK => {
                only(
                    name,
                    params,
                    &["text", "words", "connection_dropped_aborts"],
                )?;
                p.static_fallback = true;
                p.static_fallback_connection_dropped_aborts =
                    match params.get("connection_dropped_aborts") {
                        None => false,
                        Some(v) => v.as_bool().ok_or_else(|| {
                            format!(
                                "policy `{name}`: `connection_dropped_aborts` must be true or \
                                 false, got {v}"
                            )
                        })?,
                    };
                p.static_fallback_text = match params.get("text") {
                    None => None,
                    Some(text) => Some(fallback_text_of(name, text)?),
                };
                check_fallback_words(name, params)?;
            }
            TOOL_OUTPUT_PRUNE => {
                only(name, params, &[])?;
                p.tool_output_prune = true;
            }
            SUMMARY_CHAIN => {
                only(name, params, &[])?;
                p.summary_chain = true;
            }
            MARKER_TEMPLATE => {
                only(name, params, &["prefix", "suffix"])?;
                p.marker_template = Some(marker_template_of(name, params)?);
            }
            other => {
                let known: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
                return Err(format!(
                    "unknown policy `{other}` (known: {})",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(p)
}

fn only(name: &str, params: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match params.keys().find(|k| !allowed.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) if allowed.is_empty() => {
            Err(format!("policy `{name}` takes no parameters, got `{k}`"))
        }
        Some(k) => Err(format!(
            "policy `{name}`: unknown parameter `{k}` (known: {})",
            allowed.join(", ")
        )),
    }
}

/// Characters a declared fallback text may hold at most.
pub const FALLBACK_TEXT_CHARS_MAX: usize = 16_000;

/// Distinct declared texts (fallback texts, marker-template pieces) a process keeps at
/// most; a hello declaring one more is refused.
pub const FALLBACK_TEXTS_MAX: usize = 64;

/// The declared fallback texts of this process, each kept once (`'static`, as the `Copy`
/// policies need): every hello of every adapter child declaring the same text shares one
/// copy, so a run keeps one per distinct text, not one per child.
static FALLBACK_TEXTS: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// The one kept copy of `text` (kept on its first declaration).
fn interned(text: &str) -> Result<&'static str, String> {
    // A poisoned lock only means another thread panicked between lookup and insert: the
    // set itself is whole.
    let mut texts = FALLBACK_TEXTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(kept) = texts.get(text) {
        return Ok(kept);
    }
    if texts.len() >= FALLBACK_TEXTS_MAX {
        return Err(format!(
            "more than {FALLBACK_TEXTS_MAX} distinct texts (static_fallback texts, marker_template \
             pieces) declared in one run"
        ));
    }
    let kept: &'static str = Box::leak(text.to_string().into_boxed_str());
    texts.insert(kept);
    Ok(kept)
}

/// A declared `static_fallback` text, checked, kept once per distinct text ([`interned`]).
fn fallback_text_of(name: &str, v: &Value) -> Result<&'static str, String> {
    let text = v
        .as_str()
        .ok_or_else(|| format!("policy `{name}`: `text` must be a string, got {v}"))?;
    let chars = text.chars().count();
    if chars == 0 || chars > FALLBACK_TEXT_CHARS_MAX {
        return Err(format!(
            "policy `{name}`: `text` must hold 1 to {FALLBACK_TEXT_CHARS_MAX} characters, got {chars}"
        ));
    }
    let holes = compactsim_invariants::fallback_text::holes(text);
    if holes > compactsim_invariants::fallback_text::TEMPLATE_HOLES_MAX {
        return Err(format!(
            "policy `{name}`: `text` has {holes} holes, at most {} allowed",
            compactsim_invariants::fallback_text::TEMPLATE_HOLES_MAX
        ));
    }
    interned(text).map_err(|e| format!("policy `{name}`: {e}"))
}

/// Parameter `key` of policy `name`: absent, or a string of at most `chars_max`
/// characters.
fn string_param<'a>(
    name: &str,
    params: &'a Map<String, Value>,
    key: &str,
    chars_max: usize,
) -> Result<Option<&'a str>, String> {
    let Some(v) = params.get(key) else {
        return Ok(None);
    };
    let text = v
        .as_str()
        .ok_or_else(|| format!("policy `{name}`: `{key}` must be a string, got {v}"))?;
    let chars = text.chars().count();
    if chars > chars_max {
        return Err(format!(
            "policy `{name}`: `{key}` must hold at most {chars_max} characters, got {chars}"
        ));
    }
    Ok(Some(text))
}

/// `marker_template`'s pieces, checked (strings of at most [`FALLBACK_TEXT_CHARS_MAX`]
/// characters, not both empty) and kept once per distinct text ([`interned`]).
fn marker_template_of(name: &str, params: &Map<String, Value>) -> Result<MarkerTemplate, String> {
    let piece = |key: &str| -> Result<&'static str, String> {
        match string_param(name, params, key, FALLBACK_TEXT_CHARS_MAX)? {
            None | Some("") => Ok(""),
            Some(text) => interned(text).map_err(|e| format!("policy `{name}`: {e}")),
        }
    };
    let t = MarkerTemplate {
        prefix: piece("prefix")?,
        suffix: piece("suffix")?,
    };
    if t.prefix.is_empty() && t.suffix.is_empty() {
        return Err(format!(
            "policy `{name}` needs a non-empty `prefix` or `suffix` (the text around every micro marker's summary)"
        ));
    }
    Ok(t)
}

/// Characters a declared `words` parameter may hold at most.
pub const FALLBACK_WORDS_CHARS_MAX: usize = 16_000;

/// `static_fallback`'s `words`: a string, at most [`FALLBACK_WORDS_CHARS_MAX`]
/// characters, declared beside a `text` (the words judge a fallback only where its text
/// does).
fn check_fallback_words(name: &str, params: &Map<String, Value>) -> Result<(), String> {
    if string_param(name, params, "words", FALLBACK_WORDS_CHARS_MAX)?.is_none() {
        return Ok(());
    }
    if !params.contains_key("text") {
        return Err(format!("policy `{name}`: `words` needs a `text`"));
    }
    Ok(())
}

/// The `words` a hello's `static_fallback` declares (checked by [`parse`]), if any.
pub fn fallback_words(declared: &BTreeMap<String, Value>) -> Option<&str> {
    declared.get(STATIC_FALLBACK)?.get("words")?.as_str()
}

fn u64_of(name: &str, key: &str, v: &Value) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("policy `{name}`: `{key}` must be a non-negative integer, got {v}"))
}

fn u32_of(name: &str, key: &str, v: &Value) -> Result<u32, String> {
    let n = u64_of(name, key, v)?;
    u32::try_from(n).map_err(|_| format!("policy `{name}`: `{key}` {n} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(v: Value) -> Result<Policies, String> {
        let map: BTreeMap<String, Value> = serde_json::from_value(v).unwrap();
        parse(&map)
    }

    #[test]
    fn nothing_declared_is_no_policy() {
        assert_eq!(of(json!({})), Ok(Policies::NONE));
    }

    #[test]
    fn a_declared_fallback_text_is_kept_and_described() {
        let p = of(json!({"static_fallback": {"text": "{p}Summary unavailable.{q}"}})).unwrap();
        assert!(p.static_fallback);
        assert_eq!(p.static_fallback_text, Some("{p}Summary unavailable.{q}"));
        // A second hello declaring the same text shares the first one's copy.
        let again = of(json!({"static_fallback": {"text": "{p}Summary unavailable.{q}"}})).unwrap();
        assert!(std::ptr::eq(
            p.static_fallback_text.unwrap(),
            again.static_fallback_text.unwrap()
        ));
        assert_eq!(
            p.describe(),
            "static_fallback {\"text\":\"{p}Summary unavailable.{q}\"}"
        );
        let bare = of(json!({"static_fallback": {}})).unwrap();
        assert_eq!(
            (bare.static_fallback, bare.static_fallback_text),
            (true, None)
        );
    }

    #[test]
    fn the_dropped_connection_abort_is_read_and_described() {
        let p = of(json!({"static_fallback": {"text": "{p}x", "connection_dropped_aborts": true}}))
            .unwrap();
        assert!(p.static_fallback_connection_dropped_aborts);
        assert_eq!(
            p.describe(),
            "static_fallback {\"connection_dropped_aborts\":true,\"text\":\"{p}x\"}"
        );
        let off = of(json!({"static_fallback": {"connection_dropped_aborts": false}})).unwrap();
        assert!(off.static_fallback && !off.static_fallback_connection_dropped_aborts);
        let err = of(json!({"static_fallback": {"connection_dropped_aborts": "yes"}})).unwrap_err();
        assert!(err.contains("must be true or false"), "{err}");
    }

    #[test]
    fn the_hermes_declaration_is_the_reference_models() {
        let hermes = json!({
            "protect_first_n": {},
            "newest_reply_verbatim": {},
            "failure_cooldown": {"ms": 60000, "connection_dropped_ms": 30000},
            "absorb_exchanges": {},
            "static_fallback": {},
            "tool_output_prune": {},
        });
        assert_eq!(of(hermes), Ok(Policies::HERMES));
    }

    #[test]
    fn parameters_are_read() {
        let p = of(json!({"protect_first_n": {"n": 2}, "failure_cooldown": {"ms": 5000}})).unwrap();
        assert_eq!(p.protect_first_n, Some(HeadPolicy::Fixed(2)));
        assert_eq!(
            p.failure_cooldown,
            Some(FailureCooldown {
                ms: 5000,
                connection_dropped_ms: 5000,
                empty_output_ms: 5000
            })
        );
        let iot = of(json!({"failure_cooldown":
            {"ms": 60000, "connection_dropped_ms": 30000, "empty_output_ms": 30000}}))
        .unwrap();
        assert_eq!(iot.failure_cooldown.map(|c| c.empty_output_ms), Some(30000));
        assert_eq!(
            iot.describe(),
            "failure_cooldown {\"ms\":60000,\"connection_dropped_ms\":30000,\"empty_output_ms\":30000}"
        );
        assert!(!p.newest_reply_verbatim && !p.absorb_exchanges);
    }

    #[test]
    fn the_summary_chain_is_read_and_takes_no_parameters() {
        let p = of(json!({"summary_chain": {}})).unwrap();
        assert!(p.summary_chain && p.declares("summary_chain"));
        assert_eq!(p.describe(), "summary_chain {}");
        let err = of(json!({"summary_chain": {"live_max": 3}})).unwrap_err();
        assert!(err.contains("takes no parameters"), "{err}");
    }

    #[test]
    fn a_marker_template_is_read_kept_and_described() {
        let p = of(json!({"marker_template": {"prefix": "[SUMMARY]\n", "suffix": "\n--- END"}}))
            .unwrap();
        let t = p.marker_template.expect("declared");
        assert_eq!((t.prefix, t.suffix), ("[SUMMARY]\n", "\n--- END"));
        assert!(p.declares("marker_template"));
        assert_eq!(
            p.describe(),
            "marker_template {\"prefix\":\"[SUMMARY]\\n\",\"suffix\":\"\\n--- END\"}"
        );
        let prefix_only = of(json!({"marker_template": {"prefix": "[SUMMARY]\n"}})).unwrap();
        assert!(std::ptr::eq(
            t.prefix,
            prefix_only.marker_template.unwrap().prefix
        ));
        assert_eq!(prefix_only.marker_template.unwrap().suffix, "");
        for (v, want) in [
            (
                json!({"marker_template": {}}),
                "needs a non-empty `prefix` or `suffix`",
            ),
            (
                json!({"marker_template": {"prefix": ""}}),
                "needs a non-empty",
            ),
            (
                json!({"marker_template": {"prefix": 1}}),
                "`prefix` must be a string",
            ),
            (
                json!({"marker_template": {"text": "x"}}),
                "unknown parameter `text` (known: prefix, suffix)",
            ),
        ] {
            let err = of(v.clone()).unwrap_err();
            assert!(err.contains(want), "{v}: {err}");
        }
    }

    #[test]
    fn bad_declarations_are_refused_with_a_reason() {
        let cases = [
            (json!({"protect_head": {}}), "unknown policy `protect_head`"),
            (json!({"protect_first_n": 3}), "must be an object"),
            (
                json!({"protect_first_n": {"n": -1}}),
                "non-negative integer",
            ),
            (
                json!({"protect_first_n": {"rows": 1}}),
                "unknown parameter `rows`",
            ),
            (json!({"failure_cooldown": {}}), "needs `ms`"),
            (
                json!({"failure_cooldown": {"ms": "60s"}}),
                "non-negative integer",
            ),
            (
                json!({"newest_reply_verbatim": {"x": 1}}),
                "takes no parameters",
            ),
            (
                json!({"static_fallback": {"text": 3}}),
                "`text` must be a string",
            ),
            (
                json!({"static_fallback": {"text": ""}}),
                "`text` must hold 1 to 16000 characters",
            ),
            (
                json!({"static_fallback": {"txt": "x"}}),
                "unknown parameter `txt` (known: text, words, connection_dropped_aborts)",
            ),
            (
                json!({"static_fallback": {"text": "x", "words": ["a"]}}),
                "`words` must be a string",
            ),
            (
                json!({"static_fallback": {"words": "a b"}}),
                "`words` needs a `text`",
            ),
        ];
        for (v, want) in cases {
            let err = of(v.clone()).unwrap_err();
            assert!(err.contains(want), "{v}: {err}");
        }
        assert!(of(json!({"x": {}}))
            .unwrap_err()
            .contains("known: protect_first_n"));
    }
}
