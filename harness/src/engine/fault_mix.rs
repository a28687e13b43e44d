//! Fault-mix knobs drawn from their own stream (`Stream::FaultMix`), added after the
//! provider draws were fixed: storms of one fault kind, switched on in some cases only,
//! so every other case (and every other stream) keeps its draws. Plan overrides apply
//! after them.
//!
//! - Flaky link: the provider drops connections often and reports an overflow as a
//!   dropped connection (#2153/#4750), the situation of the disconnect heuristics and of
//!   the H-2153 death spiral.

use compactsim_fakes::provider::{OverflowShape, ProviderConfig};
/// Share of cases with a flaky link, per mille.
pub const FLAKY_LINK_ON_PER_MILLE: u32 = 150;
/// Dropped connections on a flaky link, per mille of calls that fit: the drawn range.
pub const FLAKY_LINK_DISCONNECT_PER_MILLE: (u32, u32) = (20, 150);

/// The fault mix of one case (`None`: a knob is off), drawn in [`super::draw`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultMix {
    pub disconnect_per_mille: Option<u32>,
}

impl FaultMix {
    /// A flaky link raises the disconnect rate and reports overflows as disconnects.
    pub fn apply_provider(&self, p: &mut ProviderConfig) {
        if let Some(r) = self.disconnect_per_mille {
            p.disconnect_per_mille = p.disconnect_per_mille.max(r);
            p.overflow_shape = OverflowShape::Disconnect;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::draw::{fault_mix, Draw};

    #[test]
    fn a_flaky_link_touches_only_some_cases_and_only_their_disconnects() {
        let of_case = |seed| fault_mix(&mut Draw::new(seed));
        let mixes: Vec<FaultMix> = (0..1000).map(of_case).collect();
        assert_eq!(of_case(7), mixes[7]);
        let links = mixes
            .iter()
            .filter(|m| m.disconnect_per_mille.is_some())
            .count();
        assert!(
            links.abs_diff(FLAKY_LINK_ON_PER_MILLE as usize) < 50,
            "{links}"
        );
        let mut p = ProviderConfig::reliable();
        let p0 = p.clone();
        FaultMix::default().apply_provider(&mut p);
        assert_eq!(p, p0, "no storm changes nothing");
        let mix = FaultMix {
            disconnect_per_mille: Some(90),
        };
        mix.apply_provider(&mut p);
        assert_eq!(
            (p.disconnect_per_mille, p.overflow_shape),
            (90, OverflowShape::Disconnect)
        );
        p.disconnect_per_mille = p0.disconnect_per_mille;
        p.overflow_shape = p0.overflow_shape;
        assert_eq!(p, p0, "only the disconnects change");
    }
}
