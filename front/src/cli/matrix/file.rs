//! The matrix file: the releases of a version matrix (in release order), how each one's
//! adapters start, the default-suite strategies each runs, and the findings whose shrunk
//! scenarios every release is judged on. Format: `scenarios/matrix/README.md`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The version of the matrix file format this build reads (`format = 1`).
pub const MATRIX_FORMAT: u32 = 1;
/// Most releases one file may list.
pub const RELEASES_MAX: usize = 200;
/// Most findings one file may list.
pub const FINDINGS_MAX: usize = 200;
/// Most default-suite strategies of one release.
pub const SUITES_PER_RELEASE_MAX: usize = 4;
/// The placeholder of an adapter command that stands for the release's `python`.
pub const PYTHON_PLACEHOLDER: &str = "{python}";

/// A validated matrix file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixFile {
    pub path: PathBuf,
    pub releases: Vec<Release>,
    pub findings: Vec<Finding>,
}

/// One release: its adapter commands by kind (`batch`, `micro`, ...), `{python}`
/// already replaced, and the strategies of its default suite.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    pub name: String,
    /// The interpreter of the release's environment (a path, or a command on PATH).
    pub python: String,
    /// How to create the environment when `python` is missing (printed, not run).
    #[serde(default)]
    pub recipe: Option<String>,
    pub adapters: BTreeMap<String, String>,
    #[serde(default)]
    pub suites: Vec<Suite>,
}

/// One default suite of a release: a strategy (with its era for the agent loop) run by
/// one of the release's adapters.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub strategy: String,
    #[serde(default)]
    pub era: Option<String>,
    pub adapter: String,
}

/// A finding: its id, its shrunk scenario, the adapter kind that runs it, and what its
/// violation must show besides the invariant.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub id: String,
    pub scenario: PathBuf,
    pub adapter: String,
    /// Text the invariant's witness (its message or one of its facts) must contain for
    /// the violation to be this finding's; `None`: any violation of the invariant is.
    #[serde(default)]
    pub witness: Option<String>,
}

/// Longest `witness` text of a finding, in characters.
pub const WITNESS_CHARS_MAX: usize = 200;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    format: u32,
    #[serde(default, rename = "release")]
    releases: Vec<Release>,
    #[serde(default, rename = "finding")]
    findings: Vec<Finding>,
}

impl Release {
    /// Whether the release's interpreter is there: a path that exists, or a bare command
    /// (looked up on PATH when the adapter starts).
    pub fn python_present(&self) -> bool {
        !self.python.contains('/') || Path::new(&self.python).exists()
    }

    /// Why the release cannot run at all, if it cannot.
    pub fn cannot_run(&self) -> Option<String> {
        if self.python_present() {
            return None;
        }
        let mut why = format!("{} does not exist", self.python);
        if let Some(recipe) = &self.recipe {
            why.push_str(&format!(" (create it: {recipe})"));
        }
        Some(why)
    }
}

/// Reads and validates the matrix file at `path`; every error names the file.
pub fn load(path: &Path) -> Result<MatrixFile, String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("matrix file {}: {e}", path.display()))?;
    parse(path, &source)
}

/// Validates `source` as the matrix file `path`.
pub fn parse(path: &Path, source: &str) -> Result<MatrixFile, String> {
    let at = |what: String| format!("matrix file {}: {what}", path.display());
    let doc: Doc = toml::from_str(source).map_err(|e| at(e.to_string()))?;
    if doc.format != MATRIX_FORMAT {
        return Err(at(format!(
            "format = {} is not supported (this build reads format = {MATRIX_FORMAT})",
            doc.format
        )));
    }
    if doc.releases.is_empty() || doc.releases.len() > RELEASES_MAX {
        return Err(at(format!(
            "needs 1 to {RELEASES_MAX} [[release]] tables, has {}",
            doc.releases.len()
        )));
    }
    if doc.findings.len() > FINDINGS_MAX {
        return Err(at(format!("more than {FINDINGS_MAX} [[finding]] tables")));
    }
    let mut releases = Vec::with_capacity(doc.releases.len());
    for r in doc.releases {
        releases.push(check_release(r).map_err(&at)?);
    }
    unique(releases.iter().map(|r| r.name.as_str()), "release").map_err(&at)?;
    unique(doc.findings.iter().map(|f| f.id.as_str()), "finding").map_err(&at)?;
    let base = path.parent().unwrap_or(Path::new(""));
    let findings = doc
        .findings
        .into_iter()
        .map(|f| check_finding(f, base, &releases))
        .collect::<Result<Vec<_>, _>>()
        .map_err(&at)?;
    Ok(MatrixFile {
        path: path.to_path_buf(),
        releases,
        findings,
    })
}

fn check_release(mut r: Release) -> Result<Release, String> {
    if r.name.trim().is_empty() {
        return Err("a release has an empty name".into());
    }
    if r.adapters.is_empty() {
        return Err(format!("release `{}` has no adapters", r.name));
    }
    if r.suites.len() > SUITES_PER_RELEASE_MAX {
        return Err(format!(
            "release `{}` has more than {SUITES_PER_RELEASE_MAX} suites",
            r.name
        ));
    }
    for s in &r.suites {
        if !r.adapters.contains_key(&s.adapter) {
            return Err(format!(
                "release `{}`: suite `{}` names adapter `{}`, which the release does not list",
                r.name, s.strategy, s.adapter
            ));
        }
    }
    for command in r.adapters.values_mut() {
        *command = command.replace(PYTHON_PLACEHOLDER, &r.python);
    }
    Ok(r)
}

/// The finding with its scenario path as given, or relative to the working directory
/// when that exists, else relative to the matrix file's directory.
fn check_finding(mut f: Finding, base: &Path, releases: &[Release]) -> Result<Finding, String> {
    if !f.scenario.exists() && base.join(&f.scenario).exists() {
        f.scenario = base.join(&f.scenario);
    }
    if !f.scenario.exists() {
        return Err(format!(
            "finding `{}`: scenario {} does not exist",
            f.id,
            f.scenario.display()
        ));
    }
    if let Some(w) = &f.witness {
        if w.trim().is_empty() || w.chars().count() > WITNESS_CHARS_MAX {
            return Err(format!(
                "finding `{}`: witness must be 1 to {WITNESS_CHARS_MAX} characters of text",
                f.id
            ));
        }
    }
    if !releases.iter().any(|r| r.adapters.contains_key(&f.adapter)) {
        return Err(format!(
            "finding `{}`: no release has an adapter `{}`",
            f.id, f.adapter
        ));
    }
    Ok(f)
}

fn unique<'a>(names: impl Iterator<Item = &'a str>, what: &str) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            return Err(format!("{what} `{n}` is listed twice"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
format = 1
[[release]]
name = "a"
python = "python3"
adapters = { batch = "{python} x.py" }
suites = [{ strategy = "batch", adapter = "batch" }]
"#;

    #[test]
    fn a_good_file_loads_with_python_substituted() {
        let m = parse(Path::new("m.toml"), GOOD).unwrap();
        assert_eq!(m.releases[0].adapters["batch"], "python3 x.py");
        assert!(m.releases[0].cannot_run().is_none());
    }

    #[test]
    fn bad_files_are_refused_naming_the_file() {
        let unknown_adapter = GOOD.replace("adapter = \"batch\"", "adapter = \"micro\"");
        let bad_format = GOOD.replace("format = 1", "format = 9");
        let unknown_key = GOOD.replace("python = ", "pyhton = \"\"\npython = ");
        for bad in [
            unknown_adapter,
            bad_format,
            unknown_key,
            "format = 1".to_string(),
        ] {
            let e = parse(Path::new("m.toml"), &bad).unwrap_err();
            assert!(e.starts_with("matrix file m.toml: "), "{e}");
        }
    }

    #[test]
    fn a_finding_names_the_witness_its_violation_must_show() {
        let with = |w: &str| {
            format!(
                "{GOOD}[[finding]]\nid = \"B8\"\nscenario = \"Cargo.toml\"\nadapter = \"batch\"\n{w}\n"
            )
        };
        let m = parse(Path::new("m.toml"), &with("witness = \"a summary row\"")).unwrap();
        assert_eq!(m.findings[0].witness.as_deref(), Some("a summary row"));
        assert_eq!(
            parse(Path::new("m.toml"), &with("")).unwrap().findings[0].witness,
            None
        );
        let e = parse(Path::new("m.toml"), &with("witness = \" \"")).unwrap_err();
        assert!(e.contains("finding `B8`: witness must be"), "{e}");
    }

    #[test]
    fn a_missing_interpreter_says_how_to_create_it() {
        let text = r#"
format = 1
[[release]]
name = "a"
python = "/nonexistent/bin/python"
recipe = "make venv"
adapters = { batch = "{python} x.py" }
"#;
        let m = parse(Path::new("m.toml"), text).unwrap();
        let why = m.releases[0].cannot_run().unwrap();
        assert!(
            why.contains("/nonexistent/bin/python does not exist"),
            "{why}"
        );
        assert!(why.contains("make venv"), "{why}");
    }
}
