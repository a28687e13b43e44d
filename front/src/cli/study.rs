//! `compactsim study FILE`: run a study file and write study.json, the SVG charts,
//! summary.md and index.html.

use super::exit::{Exit, Failure};
use crate::study::{self, spec};
use compactsim_harness::compactor::CompactorSpec;
use std::path::{Path, PathBuf};

/// Default output root: `target/compactsim/study/<name>/`.
pub const OUT_ROOT_DEFAULT: &str = "target/compactsim/study";

/// Runs the study at `file` with the reference compactor; writes into `out` (default:
/// under [`OUT_ROOT_DEFAULT`]).
pub fn study(file: &Path, out: Option<PathBuf>) -> Result<Exit, Failure> {
    let spec = spec::load(file).map_err(|e| Failure::bad_input(e.to_string()))?;
    let dir = out.unwrap_or_else(|| Path::new(OUT_ROOT_DEFAULT).join(&spec.name));
    super::outdir::prepare(&dir)?;
    let report = study::run(&spec, &CompactorSpec::Reference)
        .map_err(|e| Failure::internal(e.to_string()))?;
    compactsim_reports::study::write_study(&dir, &report)
        .map_err(|e| Failure::internal(e.to_string()))?;
    crate::out!("{}", compactsim_reports::study::render_study_md(&report));
    crate::outln!(
        "\nstudy: {}",
        dir.join(compactsim_reports::study::INDEX_HTML).display()
    );
    Ok(Exit::Clean)
}
