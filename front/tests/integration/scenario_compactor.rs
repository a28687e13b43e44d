//! `[compactor]` in scenario files: a file runs the adapter it declares; an explicit
//! `--compactor external` on the command line wins over the file.

use crate::common;
use common::{arg, compactsim, scratch};

fn file(dir: &std::path::Path, name: &str, adapter: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let text = format!(
        "format = 1\npasses = 3\ncase = 2\nexpect = \"clean\"\n\n[compactor]\nkind = \"external\"\nadapter = \"{adapter}\"\ntimeout_ms = 20000\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_scenario_runs_the_adapter_it_declares() {
    let dir = scratch("scenario-compactor-declared");
    let ok = file(
        &dir,
        "reference.toml",
        "python3 adapters/reference/compactor.py",
    );
    let r = compactsim(&["scenario", arg(&ok), "--out", arg(&dir.join("out"))]).expect_code(0);
    assert!(r.stdout.contains("1 scenarios, 1 hold"), "{}", r.stdout);
    let crash = file(
        &dir,
        "crash.toml",
        "python3 adapters/reference/fixtures/crash.py",
    );
    let r = compactsim(&["scenario", arg(&crash), "--out", arg(&dir.join("out2"))]).expect_code(4);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("adapters/reference/fixtures/crash.py"),
        "the failure names the declared adapter: {all}"
    );
}

#[test]
fn the_command_line_choice_wins_over_the_declared_adapter() {
    let dir = scratch("scenario-compactor-override");
    let crash = file(
        &dir,
        "crash.toml",
        "python3 adapters/reference/fixtures/crash.py",
    );
    let r = compactsim(&[
        "scenario",
        arg(&crash),
        "--out",
        arg(&dir.join("out")),
        "--compactor",
        "external",
        "--adapter",
        "python3 adapters/reference/compactor.py",
    ])
    .expect_code(0);
    assert!(r.stdout.contains("1 scenarios, 1 hold"), "{}", r.stdout);
}

/// A file whose adapter is a pinned venv that is not there yet (a fresh clone: Hermes,
/// LangChain, ADK) is skipped, and one line says what to install for how many files:
/// exit 0 when the rest holds. Any other missing program is the adapter's failure: exit
/// 4, naming the path.
#[test]
fn a_missing_pinned_venv_skips_its_files_in_one_line_other_missing_adapters_exit_4() {
    let dir = scratch("scenario-compactor-missing");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    for name in ["a.toml", "b.toml"] {
        file(&files, name, "target/hermes-venvs/nope/bin/python x.py");
    }
    file(&files, "c.toml", "python3 adapters/reference/compactor.py");
    file(
        &files,
        "d.toml",
        "target/framework-venvs/langchain-1.5.0/nope/bin/python x.py",
    );
    let r = compactsim(&["scenario", arg(&files), "--out", arg(&dir.join("out"))]).expect_code(0);
    assert!(
        r.stdout
            .contains("4 scenarios, 1 hold, 0 failed, 3 skipped"),
        "{}",
        r.stdout
    );
    let line = "SKIPPED 3 files, their venvs not installed: \
        bash adapters/hermes/setup-venv.sh (2), bash adapters/langchain/setup-venv.sh (1)\n";
    assert!(r.stdout.contains(line), "{}", r.stdout);
    let skip_lines = r.stdout.lines().filter(|l| l.starts_with("SKIPPED"));
    assert_eq!(skip_lines.count(), 1, "{}", r.stdout);
    let missing = file(&dir, "missing.toml", "target/not-a-venv/bin/python x.py");
    let r =
        compactsim(&["scenario", arg(&missing), "--out", arg(&dir.join("out2"))]).expect_code(4);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("target/not-a-venv/bin/python: not found"),
        "{all}"
    );
}

#[test]
fn a_declared_adapter_resolves_from_the_scenario_file_in_any_working_directory() {
    let dir = scratch("scenario-compactor-cwd");
    let ok = file(
        &dir,
        "reference.toml",
        "python3 adapters/reference/compactor.py",
    );
    // Outside the repository: the adapter's relative path is found from the file.
    let elsewhere = std::env::temp_dir();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(["scenario", arg(&ok), "--out", arg(&dir.join("out"))])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 scenarios, 1 hold"), "{stdout}");
}
