//! The named limits of every numeric value of a scenario file, and the bounded integer
//! type that checks them while the file is parsed (so a value out of range is an error at
//! its own line and column, never an allocation or an overflow later). The table of these
//! limits in `scenarios/README.md` is checked against this file by a test.

use serde::de::{self, Deserializer};
use serde::Deserialize;

/// Largest scenario file read, bytes (a file past it is refused before it is read).
pub const FILE_BYTES_MAX: u64 = 1 << 20;
/// Largest context window, tokens (`[shape] context_length`).
pub const CONTEXT_LENGTH_MAX: u32 = 2_000_000;
/// Largest text of one row, characters (`chars`, `[shape] system_chars`): four
/// characters per token of the largest window, so a recorded giant paste (the shapes
/// draw pastes of several tail budgets) always loads back.
pub const ROW_CHARS_MAX: u32 = 4 * CONTEXT_LENGTH_MAX;
/// Largest arguments of one tool call, characters (`args_chars`).
pub const ARGS_CHARS_MAX: u32 = 100_000;
/// Tool calls of one assistant row.
pub const CALLS_PER_ROW_MAX: usize = 64;
/// Rows of one scripted turn (or one entry of a history: a drawn turn of a tool-heavy
/// family can hold hundreds).
pub const ROWS_PER_TURN_MAX: usize = 10_000;
/// Rows of a whole script (system, history and turns, repeats counted).
pub const SCRIPT_ROWS_MAX: u64 = 200_000;
/// Text of a whole script, characters (repeats counted): keeps every sum of sizes far
/// below `u32::MAX`.
pub const SCRIPT_CHARS_MAX: u64 = 200_000_000;
/// Turns a case may run (`turns_max`, the turns of `restarts`, `every_n_turns`).
pub const TURNS_MAX: u32 = 100_000;
/// Token sizes of compactor and summarizer knobs (`min_tokens`, `max_tokens`,
/// `scaffold_tokens`, `tail_budget_tokens`, `defrag_threshold_tokens`).
pub const KNOB_TOKENS_MAX: u32 = 1_000_000;
/// A share or a rate, per mille.
pub const PER_MILLE_MAX: u32 = 1_000;
/// Real tokens per rough token of the request overhead, per mille.
pub const OVERHEAD_REAL_PER_MILLE_MAX: u32 = 10_000;
/// Generation or prefill speed, tokens per second.
pub const TOKENS_PER_S_MAX: u32 = 100_000_000;
/// A fixed latency or a think time, virtual milliseconds (one day).
pub const LATENCY_MS_MAX: u32 = 86_400_000;
/// Entries of an outcome schedule (`outcomes`) or of `restarts`.
pub const SCHEDULE_LEN_MAX: usize = 100_000;

/// An integer in `LO..=HI`, checked while the file is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounded<const LO: u32, const HI: u32>(u32);

impl<const LO: u32, const HI: u32> Bounded<LO, HI> {
    pub fn get(self) -> u32 {
        self.0
    }
}

impl<'de, const LO: u32, const HI: u32> Deserialize<'de> for Bounded<LO, HI> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        match u32::try_from(v) {
            Ok(n) if (LO..=HI).contains(&n) => Ok(Bounded(n)),
            _ => Err(de::Error::custom(format!(
                "out of range: {v} (this value is between {LO} and {HI})"
            ))),
        }
    }
}

/// `Option<Bounded>` as a plain `Option<u32>`.
pub fn value<const LO: u32, const HI: u32>(v: Option<Bounded<LO, HI>>) -> Option<u32> {
    v.map(Bounded::get)
}

pub type PerMille = Bounded<0, PER_MILLE_MAX>;
pub type Turns = Bounded<1, TURNS_MAX>;
pub type RowChars = Bounded<0, ROW_CHARS_MAX>;
pub type ArgsChars = Bounded<0, ARGS_CHARS_MAX>;
pub type ContextLength = Bounded<1, CONTEXT_LENGTH_MAX>;
pub type KnobTokens = Bounded<0, KNOB_TOKENS_MAX>;
pub type Speed = Bounded<1, TOKENS_PER_S_MAX>;
pub type LatencyMs = Bounded<0, LATENCY_MS_MAX>;
pub type OverheadReal = Bounded<0, OVERHEAD_REAL_PER_MILLE_MAX>;
/// `repeat` of a scripted turn.
pub type Repeat = Bounded<1, { super::convert::REPEAT_MAX }>;
/// `passes`.
pub type Passes = Bounded<1, { compactsim_harness::runner::PASSES_MAX }>;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct One {
        v: PerMille,
    }

    #[test]
    fn values_outside_the_range_are_located_errors() {
        let ok: One = toml::from_str("v = 1000").unwrap();
        assert_eq!(ok.v.get(), 1000);
        for bad in ["v = 1001", "v = -1", "v = 4294967295", "v = 99999999999"] {
            let e = toml::from_str::<One>(bad).unwrap_err();
            assert!(e.message().contains("between 0 and 1000"), "{bad}: {e}");
            assert_eq!(e.span(), Some(4..bad.len()), "{bad}");
        }
    }

    #[test]
    fn the_readme_table_names_every_limit_with_its_value() {
        let readme = include_str!("../../../scenarios/README.md");
        for (name, value) in [
            ("FILE_BYTES_MAX", FILE_BYTES_MAX),
            ("CONTEXT_LENGTH_MAX", CONTEXT_LENGTH_MAX as u64),
            ("ROW_CHARS_MAX", ROW_CHARS_MAX as u64),
            ("ARGS_CHARS_MAX", ARGS_CHARS_MAX as u64),
            ("CALLS_PER_ROW_MAX", CALLS_PER_ROW_MAX as u64),
            ("ROWS_PER_TURN_MAX", ROWS_PER_TURN_MAX as u64),
            ("SCRIPT_ROWS_MAX", SCRIPT_ROWS_MAX),
            ("SCRIPT_CHARS_MAX", SCRIPT_CHARS_MAX),
            ("TURNS_MAX", TURNS_MAX as u64),
            ("KNOB_TOKENS_MAX", KNOB_TOKENS_MAX as u64),
            ("PER_MILLE_MAX", PER_MILLE_MAX as u64),
            (
                "OVERHEAD_REAL_PER_MILLE_MAX",
                OVERHEAD_REAL_PER_MILLE_MAX as u64,
            ),
            ("TOKENS_PER_S_MAX", TOKENS_PER_S_MAX as u64),
            ("LATENCY_MS_MAX", LATENCY_MS_MAX as u64),
            ("SCHEDULE_LEN_MAX", SCHEDULE_LEN_MAX as u64),
            ("REPEAT_MAX", super::super::convert::REPEAT_MAX as u64),
            ("PASSES_MAX", compactsim_harness::runner::PASSES_MAX as u64),
        ] {
            let row = readme
                .lines()
                .find(|l| l.starts_with('|') && l.contains(&format!("`{name}`")))
                .unwrap_or_else(|| panic!("scenarios/README.md has no limits row for {name}"));
            let grouped = group_thousands(value);
            assert!(
                row.contains(&grouped),
                "the row of {name} does not say {grouped}: {row}"
            );
        }
    }

    fn group_thousands(v: u64) -> String {
        let digits = v.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }
}
