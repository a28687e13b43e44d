//! `compactsim list invariants|bugs|shapes|strategies`.

use compactsim_harness::shapes::Family;
use compactsim_hermes::bugs::CATALOGUE;
use compactsim_hermes::strategy::Strategy;

/// What `list` can list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Invariants,
    Bugs,
    Shapes,
    Strategies,
}

/// The listing as printed.
pub fn render(listing: Listing) -> String {
    let mut out = String::new();
    match listing {
        Listing::Invariants => {
            let gateway = compactsim_invariants::gateway::gateway_catalogue();
            for i in compactsim_invariants::catalogue()
                .into_iter()
                .chain(gateway)
            {
                out.push_str(&format!(
                    "{:<24} {}\n{:<24} class: {}\n{:<24} catches: {}\n",
                    i.id,
                    i.statement,
                    "",
                    i.class.label(),
                    "",
                    i.catches.join(", ")
                ));
                for (policy, rule) in compactsim_invariants::policy::rules_of(i.id) {
                    if i.class == compactsim_invariants::InvariantClass::Policy(policy) {
                        continue;
                    }
                    out.push_str(&format!("{:<24} rule of policy {policy}: {rule}\n", ""));
                }
            }
        }
        Listing::Bugs => {
            for b in CATALOGUE {
                out.push_str(&format!(
                    "{:<12} [{}] {}\n{:<12} caught by: {}\n",
                    b.id,
                    b.strategy,
                    b.summary,
                    "",
                    b.expected.join(", ")
                ));
                if !b.requires.is_empty() {
                    let ids: Vec<&str> = b.requires.iter().map(|r| r.id()).collect();
                    out.push_str(&format!("{:<12} shows only with: {}\n", "", ids.join(", ")));
                }
            }
        }
        Listing::Shapes => {
            for f in Family::ALL {
                out.push_str(&format!("{:<20} {}\n", f.name(), f.description()));
            }
        }
        Listing::Strategies => {
            for s in Strategy::ALL {
                out.push_str(&format!("{:<8} {}\n", s.name(), s.description()));
            }
        }
    }
    out
}
