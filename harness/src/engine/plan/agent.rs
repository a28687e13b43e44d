//! Overrides of what an agent-loop case (strategies `batch` and `both`) draws on its
//! Provider stream: the agent parameters and the fake provider's configuration. Like
//! every override, they replace drawn values after the draw, so the stream stays where
//! an unplanned case has it.

use compactsim_fakes::provider::{OverflowShape, ProviderConfig};
use compactsim_hermes::agent::AgentParams;
use serde::Serialize;

/// Overrides of the drawn [`AgentParams`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AgentOverrides {
    /// Request overhead (system prompt and tool schemas), rough tokens per mille of the
    /// trigger.
    pub overhead_per_mille_of_trigger: Option<u32>,
    /// Real tokens the provider counts per rough overhead token, per mille.
    pub overhead_real_per_mille: Option<u32>,
    /// `compression.in_place` (an era that always rotates ignores it).
    pub in_place: Option<bool>,
    /// User think time between turns: uniform in this range, virtual milliseconds.
    pub think_ms: Option<(u64, u64)>,
    /// Seed of the per-turn think times.
    pub think_seed: Option<u64>,
    /// A resumed session's fill, per mille of the trigger; 0 starts empty.
    pub resume_fill_per_mille: Option<u32>,
}

impl AgentOverrides {
    /// Every field of `params`, explicit.
    pub fn exactly(params: &AgentParams) -> Self {
        AgentOverrides {
            overhead_per_mille_of_trigger: Some(params.overhead_per_mille_of_trigger),
            overhead_real_per_mille: Some(params.overhead_real_per_mille),
            in_place: Some(params.in_place),
            think_ms: Some(params.think_ms),
            think_seed: Some(params.think_seed),
            resume_fill_per_mille: Some(params.resume_fill_per_mille),
        }
    }

    /// The parameters a case uses, given the ones it drew.
    pub fn apply(&self, drawn: AgentParams) -> AgentParams {
        AgentParams {
            overhead_per_mille_of_trigger: self
                .overhead_per_mille_of_trigger
                .unwrap_or(drawn.overhead_per_mille_of_trigger),
            overhead_real_per_mille: self
                .overhead_real_per_mille
                .unwrap_or(drawn.overhead_real_per_mille),
            in_place: self.in_place.unwrap_or(drawn.in_place),
            think_ms: self.think_ms.unwrap_or(drawn.think_ms),
            think_seed: self.think_seed.unwrap_or(drawn.think_seed),
            resume_fill_per_mille: self
                .resume_fill_per_mille
                .unwrap_or(drawn.resume_fill_per_mille),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == AgentOverrides::default()
    }
}

/// Overrides of the drawn [`ProviderConfig`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProviderOverrides {
    /// Start from [`ProviderConfig::reliable`] instead of the drawn configuration.
    pub reliable: bool,
    pub overflow_shape: Option<OverflowShape>,
    pub disconnect_per_mille: Option<u32>,
    pub server_error_per_mille: Option<u32>,
    pub base_latency_ms: Option<u64>,
    pub prefill_tokens_per_s: Option<u32>,
}

impl ProviderOverrides {
    /// Every field of `config`, explicit.
    pub fn exactly(config: &ProviderConfig) -> Self {
        ProviderOverrides {
            reliable: false,
            overflow_shape: Some(config.overflow_shape),
            disconnect_per_mille: Some(config.disconnect_per_mille),
            server_error_per_mille: Some(config.server_error_per_mille),
            base_latency_ms: Some(config.base_latency_ms),
            prefill_tokens_per_s: Some(config.prefill_tokens_per_s),
        }
    }

    /// The configuration a case uses, given the one it drew.
    pub fn apply(&self, drawn: ProviderConfig) -> ProviderConfig {
        let base = if self.reliable {
            ProviderConfig::reliable()
        } else {
            drawn
        };
        ProviderConfig {
            overflow_shape: self.overflow_shape.unwrap_or(base.overflow_shape),
            disconnect_per_mille: self
                .disconnect_per_mille
                .unwrap_or(base.disconnect_per_mille),
            server_error_per_mille: self
                .server_error_per_mille
                .unwrap_or(base.server_error_per_mille),
            base_latency_ms: self.base_latency_ms.unwrap_or(base.base_latency_ms),
            prefill_tokens_per_s: self
                .prefill_tokens_per_s
                .unwrap_or(base.prefill_tokens_per_s),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == ProviderOverrides::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> AgentParams {
        AgentParams {
            overhead_per_mille_of_trigger: 100,
            overhead_real_per_mille: 500,
            in_place: false,
            think_ms: (1_000, 2_000),
            think_seed: 7,
            resume_fill_per_mille: 400,
        }
    }

    #[test]
    fn exactly_pins_every_field_and_unset_fields_keep_the_draw() {
        let drawn = params();
        let other = AgentParams {
            overhead_per_mille_of_trigger: 1,
            overhead_real_per_mille: 2,
            in_place: true,
            think_ms: (3, 4),
            think_seed: 5,
            resume_fill_per_mille: 6,
        };
        assert_eq!(AgentOverrides::exactly(&drawn).apply(other.clone()), drawn);
        assert_eq!(AgentOverrides::default().apply(other.clone()), other);
        let one = AgentOverrides {
            in_place: Some(false),
            ..AgentOverrides::default()
        };
        assert!(!one.apply(other.clone()).in_place);
        assert_eq!(one.apply(other.clone()).think_ms, (3, 4));

        let config = ProviderConfig {
            overflow_shape: OverflowShape::Disconnect,
            disconnect_per_mille: 9,
            server_error_per_mille: 8,
            base_latency_ms: 700,
            prefill_tokens_per_s: 3_000,
        };
        let reliable = ProviderConfig::reliable();
        assert_eq!(
            ProviderOverrides::exactly(&config).apply(reliable.clone()),
            config
        );
        let preset = ProviderOverrides {
            reliable: true,
            base_latency_ms: Some(1),
            ..ProviderOverrides::default()
        };
        let applied = preset.apply(config.clone());
        assert_eq!(applied.base_latency_ms, 1);
        assert_eq!(applied.disconnect_per_mille, 0);
        assert!(ProviderOverrides::default().is_empty() && !preset.is_empty());
    }
}
