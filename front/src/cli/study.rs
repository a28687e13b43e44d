//! `compactsim study FILE [--compactor external --adapter CMD]`: run a study file and
//! write study.json, the SVG charts, summary.md and index.html. Under an external
//! compactor the study runs the strategies of the file whose passes the adapter's hello
//! declares (micro and micro-gated need `micro_pass` and `batch_pass`, batch and handoff
//! `batch_pass`); a file none of whose strategies it serves is bad input.

use super::exit::{Exit, Failure};
use crate::study::{self, spec};
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::external::argv::quote;
use std::path::{Path, PathBuf};

/// Default output root: `target/compactsim/study/<name>/`.
pub const OUT_ROOT_DEFAULT: &str = "target/compactsim/study";

/// Runs the study at `file` with `compactor` (the strategies it serves); writes into
/// `out` (default: under [`OUT_ROOT_DEFAULT`]).
pub fn study(
    file: &Path,
    out: Option<PathBuf>,
    compactor: &CompactorSpec,
) -> Result<Exit, Failure> {
    let mut spec = spec::load(file).map_err(|e| Failure::bad_input(e.to_string()))?;
    served(&mut spec, compactor)?;
    let dir = out.unwrap_or_else(|| Path::new(OUT_ROOT_DEFAULT).join(&spec.name));
    super::outdir::prepare(&dir)?;
    compactor
        .keep_adapter_stderr(&dir)
        .map_err(Failure::internal)?;
    let report = study::run(&spec, compactor).map_err(|e| Failure::internal(e.to_string()))?;
    compactsim_reports::study::write_study(&dir, &report)
        .map_err(|e| Failure::internal(e.to_string()))?;
    crate::out!("{}", compactsim_reports::study::render_study_md(&report));
    crate::outln!(
        "\nstudy: {}",
        dir.join(compactsim_reports::study::INDEX_HTML).display()
    );
    Ok(Exit::Clean)
}

/// Keeps the strategies of `spec` an external `compactor` serves (all for the Rust
/// models); bad input naming the adapter when it serves none.
fn served(spec: &mut spec::StudySpec, compactor: &CompactorSpec) -> Result<(), Failure> {
    let Some(caps) = super::caps::capabilities(compactor)? else {
        return Ok(());
    };
    let all = spec.strategies.clone();
    spec.strategies.retain(|s| match s {
        spec::StudyStrategy::Micro | spec::StudyStrategy::MicroGated => {
            caps.micro_pass && caps.batch_pass
        }
        spec::StudyStrategy::Batch | spec::StudyStrategy::Handoff => caps.batch_pass,
    });
    if spec.strategies.is_empty() {
        let command = compactor
            .adapter()
            .map_or_else(String::new, |a| quote(&a.command));
        let names: Vec<&str> = all.iter().map(|s| s.name()).collect();
        return Err(Failure::bad_input(format!(
            "adapter {command} serves none of the study's strategies ({}): micro and \
             micro-gated need micro_pass and batch_pass, batch and handoff batch_pass",
            names.join(", ")
        )));
    }
    Ok(())
}
