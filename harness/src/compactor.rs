//! The compactor under test, as a value a case carries (`CaseSpec::compactor`): the
//! Rust reference, a named in-process compactor (a mutant, a test's wrapper), or an
//! external adapter over the stdio protocol with the pool of children the run owns.
//! [`CompactorSpec::make`] is the one place a case's compactor is built from it.

use crate::external::argv::quote;
use crate::external::compactor::Pool;
use crate::external::wire::TriggerDecl;
use crate::external::{AdapterSpec, FailureKind, DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS};
use compactsim_fakes::seam::Compactor;
use compactsim_hermes::compactor::reference::Reference;
use compactsim_invariants::{DeclaredTrigger, Policies, TriggerPasses};
use std::fmt;
use std::sync::{Arc, Mutex};

pub use crate::external::ADAPTER_STDERR_DIR;

/// Builds an in-process compactor of one case from the reference compactor the case's
/// configuration describes.
pub type BuildCompactor = Arc<dyn Fn(Reference) -> Box<dyn Compactor> + Send + Sync>;

/// Which compactor a case runs. Two values are equal when they name the same compactor
/// (an in-process one by its name, an external one by its adapter command and timeout).
#[derive(Clone, Default)]
pub enum CompactorSpec {
    /// The Rust reference models with their bug switches.
    #[default]
    Reference,
    /// A compactor built in this process (a mutant, a test's compactor).
    InProcess { name: String, build: BuildCompactor },
    /// An external adapter (adapters/PROTOCOL.md) and the pool of its children, owned by
    /// the run: the children end when the last holder of the pool drops it.
    External(Arc<Pool>),
}

impl CompactorSpec {
    /// An in-process compactor called `name`, built per case by `build`.
    pub fn in_process(
        name: impl Into<String>,
        build: impl Fn(Reference) -> Box<dyn Compactor> + Send + Sync + 'static,
    ) -> CompactorSpec {
        CompactorSpec::InProcess {
            name: name.into(),
            build: Arc::new(build),
        }
    }

    /// The external adapter `spec` with a new pool (its command line is checked, and
    /// its hello: a bad policy declaration or a hello asking for what the harness does
    /// not offer, such as an unknown hook, is bad input, refused before any case; an
    /// adapter that cannot greet fails its cases instead).
    pub fn external(spec: AdapterSpec) -> Result<CompactorSpec, String> {
        let pool = Pool::new(spec).map_err(|e| e.to_string())?;
        match pool.hello() {
            Err(e) if matches!(e.kind, FailureKind::BadPolicy(_) | FailureKind::Config(_)) => {
                Err(e.to_string())
            }
            _ => Ok(CompactorSpec::External(pool)),
        }
    }

    /// The policies the compactor declares: every Hermes policy for the reference and
    /// the in-process compactors (Hermes variants), the hello's for an adapter.
    pub fn policies(&self) -> Policies {
        match self {
            CompactorSpec::Reference | CompactorSpec::InProcess { .. } => Policies::HERMES,
            CompactorSpec::External(pool) => pool.policies(),
        }
    }

    /// The compactor of one case, given the reference compactor its configuration
    /// describes (an external adapter is told the same window and configuration).
    pub fn make(&self, reference: Reference) -> Box<dyn Compactor> {
        match self {
            CompactorSpec::Reference => Box::new(reference),
            CompactorSpec::InProcess { build, .. } => build(reference),
            CompactorSpec::External(pool) => pool.compactor(reference),
        }
    }

    /// An external adapter's children keep their stderr in `out/adapter-stderr/`
    /// (`child-<n>.log`); nothing for other compactors.
    pub fn keep_adapter_stderr(&self, out: &std::path::Path) -> Result<(), String> {
        match self {
            CompactorSpec::External(pool) => {
                let dir = out.join(ADAPTER_STDERR_DIR);
                pool.keep_stderr_in(&dir)
                    .map_err(|e| format!("{}: {e}", dir.display()))
            }
            CompactorSpec::Reference | CompactorSpec::InProcess { .. } => Ok(()),
        }
    }

    /// The trigger an external adapter declared in its hello (nothing declared: the
    /// window) and the passes held to it (nothing declared: all); `None` for the
    /// reference and in-process compactors, held to the window by their batch passes
    /// (`agent_world::oracle_config`). An adapter that cannot greet declares
    /// nothing (its case ends in an adapter failure anyway).
    pub fn declared_trigger(&self) -> Option<(DeclaredTrigger, TriggerPasses)> {
        let CompactorSpec::External(pool) = self else {
            return None;
        };
        let capabilities = pool.hello().ok().map(|info| info.capabilities);
        let trigger = match capabilities.as_ref().and_then(|c| c.trigger) {
            None => DeclaredTrigger::Window,
            Some(TriggerDecl::Tokens(n)) => DeclaredTrigger::Tokens(n),
            Some(TriggerDecl::WindowPercent(p)) => DeclaredTrigger::WindowPercent(p),
        };
        let (micro, batch) = capabilities
            .and_then(|c| c.trigger_passes().ok())
            .unwrap_or((true, true));
        Some((trigger, TriggerPasses { micro, batch }))
    }

    /// `reference`, an in-process compactor's name, or `external`.
    pub fn name(&self) -> &str {
        match self {
            CompactorSpec::Reference => "reference",
            CompactorSpec::InProcess { name, .. } => name,
            CompactorSpec::External(_) => "external",
        }
    }

    /// The external adapter, if this is one.
    pub fn adapter(&self) -> Option<&AdapterSpec> {
        match self {
            CompactorSpec::External(pool) => Some(pool.spec()),
            CompactorSpec::Reference | CompactorSpec::InProcess { .. } => None,
        }
    }

    /// The compactor a case runs when a scenario file declares `declared` (`[compactor]`)
    /// and `self` is the command line's choice: an explicit choice (anything but the
    /// reference) wins, so the same files can judge another build of the adapter; else
    /// the declared adapter, its pool shared through `pools`; else the reference.
    pub fn or_declared(&self, declared: Option<&AdapterSpec>, pools: &Pools) -> CompactorSpec {
        match (self, declared) {
            (CompactorSpec::Reference, Some(adapter)) => {
                CompactorSpec::External(pools.pool(adapter))
            }
            (CompactorSpec::Reference, None)
            | (CompactorSpec::InProcess { .. } | CompactorSpec::External(_), _) => self.clone(),
        }
    }

    /// The flags that choose this compactor, for repro lines (empty for the reference).
    pub fn repro_flags(&self) -> String {
        match self {
            CompactorSpec::Reference => String::new(),
            CompactorSpec::InProcess { name, .. } => format!(" --compactor {name}"),
            CompactorSpec::External(pool) => {
                let spec = pool.spec();
                let mut s = format!(" --compactor external --adapter {}", quote(&spec.command));
                if spec.timeout_ms != DEFAULT_TIMEOUT_MS {
                    s.push_str(&format!(" --adapter-timeout-ms {}", spec.timeout_ms));
                }
                if spec.startup_timeout_ms != DEFAULT_STARTUP_TIMEOUT_MS {
                    let ms = spec.startup_timeout_ms;
                    s.push_str(&format!(" --adapter-startup-timeout-ms {ms}"));
                }
                if let Some(ms) = spec.watchdog_ms {
                    s.push_str(&format!(" --adapter-watchdog-ms {ms}"));
                }
                s
            }
        }
    }
}

impl PartialEq for CompactorSpec {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (CompactorSpec::Reference, CompactorSpec::Reference) => true,
            (
                CompactorSpec::InProcess { name: a, .. },
                CompactorSpec::InProcess { name: b, .. },
            ) => a == b,
            (CompactorSpec::External(a), CompactorSpec::External(b)) => a.spec() == b.spec(),
            (
                CompactorSpec::Reference
                | CompactorSpec::InProcess { .. }
                | CompactorSpec::External(_),
                _,
            ) => false,
        }
    }
}

impl Eq for CompactorSpec {}

impl fmt::Debug for CompactorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompactorSpec::External(pool) => {
                write!(f, "External({})", quote(&pool.spec().command))
            }
            other => f.write_str(other.name()),
        }
    }
}

impl fmt::Display for CompactorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The adapters a run's scenario files declare, one pool per adapter command line, so
/// the files that name the same adapter share its children. Owned by the run: dropping
/// it (and the cases' specs) ends the idle children.
#[derive(Default)]
pub struct Pools {
    pools: Mutex<Vec<Arc<Pool>>>,
}

impl Pools {
    /// The pool of `spec` (created on first use). A command line that cannot be split
    /// (parsing refuses it first) gives a pool whose cases end in an adapter failure
    /// naming it.
    pub fn pool(&self, spec: &AdapterSpec) -> Arc<Pool> {
        let mut pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pool) = pools.iter().find(|p| p.spec() == spec) {
            return pool.clone();
        }
        let pool = Pool::unchecked(spec.clone());
        pools.push(pool.clone());
        pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_equal_by_name_or_adapter() {
        let a = CompactorSpec::in_process("never", |r| Box::new(r));
        let b = CompactorSpec::in_process("never", |r| Box::new(r));
        assert_eq!(a, b);
        assert_ne!(a, CompactorSpec::Reference);
        assert_eq!(format!("{a:?}"), "never");
        let pools = Pools::default();
        let adapter = AdapterSpec::new("python3 a.py", DEFAULT_TIMEOUT_MS);
        let declared = CompactorSpec::Reference.or_declared(Some(&adapter), &pools);
        assert_eq!(declared.adapter(), Some(&adapter));
        assert_eq!(
            declared.repro_flags(),
            " --compactor external --adapter 'python3 a.py'"
        );
        assert_eq!(a.or_declared(Some(&adapter), &pools), a);
        assert!(Arc::ptr_eq(&pools.pool(&adapter), &pools.pool(&adapter)));
    }
}
