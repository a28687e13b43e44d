//! Provider prices: presets with the published per-million-token list prices of common
//! providers (their ratios are what matters: a cache read is a fraction of an input
//! token, a cache write may cost a premium), each field overridable in the study file.

use compactsim_reports::study::PricingRow;
use serde::Deserialize;

/// Highest price a study accepts, USD per million tokens.
pub const USD_PER_MTOK_MAX: f64 = 10_000.0;

/// One preset: name, input, cache write, cached input, output (USD per million tokens).
type Preset = (&'static str, f64, f64, f64, f64);

/// Published list prices (2025): Anthropic Claude Sonnet (5-minute cache: writes 1.25×,
/// reads 0.1× of input), OpenAI GPT-4.1 (automatic caching: reads 0.25×, no write
/// premium), DeepSeek V3 (disk cache: hits ≈ 0.26× of a miss).
pub const PRESETS: [Preset; 3] = [
    ("anthropic-sonnet", 3.00, 3.75, 0.30, 15.00),
    ("openai-gpt-4.1", 2.00, 2.00, 0.50, 8.00),
    ("deepseek-v3", 0.27, 0.27, 0.07, 1.10),
];

/// The `[pricing]` section: a preset, then overrides.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PricingSpec {
    pub preset: String,
    pub input_usd_per_mtok: Option<f64>,
    pub cache_write_usd_per_mtok: Option<f64>,
    pub cached_input_usd_per_mtok: Option<f64>,
    pub output_usd_per_mtok: Option<f64>,
}

impl Default for PricingSpec {
    fn default() -> Self {
        PricingSpec {
            preset: PRESETS[0].0.to_string(),
            input_usd_per_mtok: None,
            cache_write_usd_per_mtok: None,
            cached_input_usd_per_mtok: None,
            output_usd_per_mtok: None,
        }
    }
}

/// Resolved prices.
#[derive(Clone, Debug, PartialEq)]
pub struct Pricing(pub PricingRow);

impl PricingSpec {
    /// The preset with the overrides applied; an unknown preset or a price outside
    /// `0..=USD_PER_MTOK_MAX` is an error message.
    pub fn resolve(&self) -> Result<Pricing, String> {
        let Some(&(name, input, write, cached, output)) =
            PRESETS.iter().find(|p| p.0 == self.preset)
        else {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
            return Err(format!(
                "unknown pricing preset `{}` (known: {})",
                self.preset,
                names.join(", ")
            ));
        };
        let row = PricingRow {
            preset: name.to_string(),
            input_usd_per_mtok: self.input_usd_per_mtok.unwrap_or(input),
            cache_write_usd_per_mtok: self.cache_write_usd_per_mtok.unwrap_or(write),
            cached_input_usd_per_mtok: self.cached_input_usd_per_mtok.unwrap_or(cached),
            output_usd_per_mtok: self.output_usd_per_mtok.unwrap_or(output),
        };
        let prices = [
            row.input_usd_per_mtok,
            row.cache_write_usd_per_mtok,
            row.cached_input_usd_per_mtok,
            row.output_usd_per_mtok,
        ];
        if prices.iter().any(|p| !(0.0..=USD_PER_MTOK_MAX).contains(p)) {
            return Err(format!(
                "prices must be in 0..={USD_PER_MTOK_MAX} USD per million tokens"
            ));
        }
        Ok(Pricing(row))
    }
}

impl Pricing {
    /// USD of one provider call.
    pub fn call_usd(&self, cached: u64, uncached: u64, output: u64) -> f64 {
        let p = &self.0;
        (cached as f64 * p.cached_input_usd_per_mtok
            + uncached as f64 * p.cache_write_usd_per_mtok
            + output as f64 * p.output_usd_per_mtok)
            / 1e6
    }

    /// USD a break adds: `recached` tokens written again instead of read from the cache.
    pub fn break_usd(&self, recached: u64) -> f64 {
        let p = &self.0;
        recached as f64 * (p.cache_write_usd_per_mtok - p.cached_input_usd_per_mtok) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_resolves_with_overrides_and_prices_a_call() {
        let spec = PricingSpec {
            output_usd_per_mtok: Some(10.0),
            ..PricingSpec::default()
        };
        let p = spec.resolve().unwrap();
        assert_eq!(p.0.preset, "anthropic-sonnet");
        assert_eq!(p.0.output_usd_per_mtok, 10.0);
        // 1M cached at 0.30 + 1M written at 3.75 + 1M out at 10.
        assert!((p.call_usd(1_000_000, 1_000_000, 1_000_000) - 14.05).abs() < 1e-9);
        assert!((p.break_usd(1_000_000) - 3.45).abs() < 1e-9);
    }

    #[test]
    fn unknown_preset_and_negative_price_are_errors() {
        let unknown = PricingSpec {
            preset: "acme".into(),
            ..PricingSpec::default()
        };
        assert!(unknown.resolve().unwrap_err().contains("anthropic-sonnet"));
        let negative = PricingSpec {
            input_usd_per_mtok: Some(-1.0),
            ..PricingSpec::default()
        };
        assert!(negative.resolve().is_err());
    }
}
