//! `--strategy gateway --compactor external` with an adapter that keeps the gateway's
//! store (adapters/PROTOCOL.md, "Gateway store"): the reference store passes the gateway
//! suite, byte-identically whatever the job count; its durable directory outlives the
//! children a case kills and nothing of it outlives the case; seed 001's unsaved route is
//! caught by session-id-persisted; a store request that crashes, hangs or is answered with
//! garbage or an impossible store is the usual adapter failure, exit 4.

use crate::common;
use crate::external_cli::{adapter, run_external_cases, text};
use std::path::{Path, PathBuf};

/// Small cases: every one rotates (so routes move) and stops after a few passes.
const SMALL: [&str; 6] = [
    "--strategy",
    "gateway",
    "--session-mode",
    "rotate",
    "--passes",
    "8",
];

/// A run of the store adapter `rel` (one worker unless `extra` names `--jobs`).
fn run_store(name: &str, rel: &str, cases: &str, extra: &[&str]) -> (common::Run, PathBuf) {
    let mut args = SMALL.to_vec();
    if !extra.contains(&"--jobs") {
        args.extend_from_slice(&["--jobs", "1"]);
    }
    args.extend_from_slice(extra);
    run_external_cases(name, &adapter(rel), cases, &args)
}

/// The `store open DIR (found|empty)` lines the reference store wrote, per child log.
fn opens(out: &Path) -> Vec<(String, bool)> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(out.join("adapter-stderr"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort();
    let mut found = Vec::new();
    for log in logs {
        for line in std::fs::read_to_string(&log).unwrap().lines() {
            if let Some(rest) = line.strip_prefix("store open ") {
                let (dir, state) = rest.rsplit_once(' ').unwrap();
                found.push((dir.to_string(), state == "(found)"));
            }
        }
    }
    found
}

#[test]
fn the_reference_store_passes_the_gateway_suite_and_a_seed_reproduces() {
    let (one, d1) = run_store("store-j1", "reference/gateway_store.py", "3", &[]);
    assert_eq!(one.code, 0, "{}", text(&one));
    let (two, d2) = run_store(
        "store-j2",
        "reference/gateway_store.py",
        "3",
        &["--jobs", "2"],
    );
    assert_eq!(two.code, 0, "{}", text(&two));
    let r1 = std::fs::read(d1.join("report.json")).unwrap();
    let r2 = std::fs::read(d2.join("report.json")).unwrap();
    assert!(r1 == r2, "report.json differs between two runs of the seed");
    let report = String::from_utf8_lossy(&r1);
    assert!(
        report.contains("\"gateway.store.child_restarts\""),
        "no kill reached"
    );
    assert!(report.contains("\"gateway.store.reads\""));
}

#[test]
fn a_restart_keeps_the_durable_directory_and_a_finished_case_leaves_nothing() {
    let (o, out) = run_store("store-dirs", "reference/gateway_store.py", "3", &[]);
    assert_eq!(o.code, 0, "{}", text(&o));
    let opened = opens(&out);
    // A case's first open finds its directory empty; a later one (a new child after a
    // kill) finds the store the killed child wrote, in the same directory.
    let reopened: Vec<&(String, bool)> = opened.iter().filter(|(_, found)| *found).collect();
    assert!(
        !reopened.is_empty(),
        "no child reopened a store: {opened:?}"
    );
    for (dir, _) in &reopened {
        assert!(
            opened.iter().any(|(d, found)| d == dir && !found),
            "{dir} was reopened but never opened empty: {opened:?}"
        );
    }
    for (dir, _) in &opened {
        assert!(!Path::new(dir).exists(), "{dir} outlived its case");
    }
}

#[test]
fn every_child_of_a_store_case_is_started_with_its_durable_directory_in_the_environment() {
    // The fixture refuses an `open` of another directory than COMPACTSIM_STORE_DIR at its
    // start; cases with kills start several children each.
    let (o, out) = run_store(
        "store-env-dir",
        "reference/fixtures/gateway_store_env_dir.py",
        "3",
        &[],
    );
    assert_eq!(o.code, 0, "{}", text(&o));
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert!(
        report.contains("\"gateway.store.child_restarts\""),
        "no kill reached"
    );
}

#[test]
fn seed_001s_unsaved_route_is_caught_by_session_id_persisted() {
    let (o, _) = run_store(
        "store-lazy",
        "reference/fixtures/gateway_store_lazy_route.py",
        "2",
        &[],
    );
    let out = text(&o);
    assert_eq!(o.code, 1, "{out}");
    assert!(
        out.contains("session-id-persisted at turn") && out.contains("which was rotated to"),
        "{out}"
    );
}

#[test]
fn a_restarted_store_that_forgets_the_key_starts_it_on_a_new_session_and_is_judged() {
    // The store answers `load` with `{"session": null}` after each restart: the gateway
    // starts the key afresh (no internal failure), and the lost head is a verdict.
    let (o, out) = run_store(
        "store-forgets",
        "reference/fixtures/gateway_store_forgets_routes.py",
        "1",
        &[],
    );
    let text_out = text(&o);
    assert_eq!(o.code, 1, "{text_out}");
    assert!(!text_out.contains("internal failure"), "{text_out}");
    assert!(
        text_out.contains("session-id-persisted at turn")
            && text_out.contains("which is not in its lineage, with no reset"),
        "{text_out}"
    );
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert!(
        report.contains("\"gateway.store.unresolved_keys\""),
        "{report}"
    );
}

#[test]
fn a_store_request_that_crashes_hangs_or_is_garbage_is_exit_4_naming_it() {
    let create = "(store create)";
    let cases = [
        (
            "crash",
            "RuntimeError: fixture store crash at create",
            "exited",
            create,
        ),
        (
            "hang",
            "fixture store hangs at create",
            "per-request limit",
            create,
        ),
        ("garbage", "", "not JSON", create),
        (
            "bad_read",
            "",
            "a route names session `s999999`",
            "at store read",
        ),
    ];
    for (mode, stderr, kind, request) in cases {
        let rel = format!("reference/fixtures/gateway_store_broken.py {mode}");
        let (o, _) = run_store(
            &format!("store-broken-{mode}"),
            &rel,
            "1",
            &["--adapter-timeout-ms", "3000"],
        );
        let out = text(&o);
        assert_eq!(o.code, 4, "{mode}: {out}");
        assert!(out.contains(request), "{mode}: the request is named: {out}");
        assert!(out.contains(kind), "{mode}: {kind:?} missing: {out}");
        assert!(out.contains(stderr), "{mode}: {stderr:?} missing: {out}");
    }
}

/// The durable directories and adapter files in `tmp`.
fn store_files(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("compactsim-store-") || n.starts_with("compactsim-adapter-"))
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_run_leaves_no_durable_directory() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = common::scratch("gateway-store-interrupt");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let command = adapter("reference/fixtures/gateway_store_broken.py hang");
    let mut child = Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(["run", "--cases", "2", "--quiet", "--shrink-time", "0"])
        .args(SMALL)
        .args(["--compactor", "external", "--adapter", &command])
        .args(["--adapter-timeout-ms", "600000", "--out", "out"])
        .current_dir(&dir)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Signalled once a child hangs in a store request: its durable directory exists and
    // no child is half-started (a child's own scratch directory is made before it is
    // registered).
    let hanging = || {
        std::fs::read_dir(dir.join("out/adapter-stderr"))
            .into_iter()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
            .any(|log| log.contains("fixture store hangs"))
    };
    let started = Instant::now();
    while !hanging() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no child hung in a store request"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    assert!(
        store_files(&tmp)
            .iter()
            .any(|n| n.starts_with("compactsim-store-")),
        "the case's durable directory exists"
    );
    let ended = common::wait_guarded(child, Duration::from_secs(60));
    assert_eq!(ended.code, Some(130), "{}", ended.stderr);
    assert_eq!(store_files(&tmp), Vec::<String>::new(), "left in TMPDIR");
}

/// `compactsim args` in a scratch directory whose TMPDIR is its own `tmp` (where the
/// durable directories are made); the run and that `tmp`.
fn run_with_tmp(name: &str, args: &[&str]) -> (common::Ended, PathBuf) {
    use std::process::Stdio;
    let dir = common::scratch(name);
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let child = common::bin()
        .args(args)
        .current_dir(&dir)
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (common::wait_guarded(child, common::HANG_GUARD), tmp)
}

/// The adapter command of the store that keeps its first directory (`extra`: its args).
fn first_dir_store(extra: &str) -> String {
    adapter(&format!(
        "reference/fixtures/gateway_store_first_dir.py {extra}"
    ))
    .trim_end()
    .to_string()
}

#[test]
fn a_case_s_store_is_served_only_by_children_started_for_it() {
    // The fixture writes where its process first opened, as a real store whose modules
    // fix their paths at import: a child kept from the previous case would write into
    // that case's removed directory (re-made, shared by the cases, left behind).
    let command = first_dir_store("");
    let mut args = vec!["run", "--cases", "3", "--jobs", "1", "--quiet"];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(&["--shrink-time", "0", "--compactor", "external"]);
    args.extend_from_slice(&["--adapter", &command, "--out", "out"]);
    let (o, tmp) = run_with_tmp("gateway-store-first-dir", &args);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert_eq!(store_files(&tmp), Vec::<String>::new(), "left in TMPDIR");
    let out = tmp.parent().unwrap().join("out");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(out.join("adapter-stderr"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort();
    let mut dirs: Vec<String> = Vec::new();
    for log in logs {
        let text = std::fs::read_to_string(&log).unwrap();
        let mut opened: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("store open "))
            .filter_map(|rest| rest.rsplit_once(' ').map(|(dir, _)| dir))
            .collect();
        opened.dedup();
        assert!(opened.len() <= 1, "{log:?} served two stores: {opened:?}");
        dirs.extend(opened.iter().map(|d| d.to_string()));
    }
    dirs.sort();
    dirs.dedup();
    assert_eq!(dirs.len(), 3, "one durable directory per case: {dirs:?}");
}

#[test]
fn a_shrink_of_a_store_case_replays_on_fresh_children_and_leaves_nothing() {
    // The shrink runs the case, reruns its recording, then each candidate: every run a
    // case of its own, each with its own directory and its own children.
    let command = first_dir_store("lazy");
    let mut args = vec!["shrink", "--case", "1", "--shrink-time", "60"];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(&["--compactor", "external", "--adapter", &command]);
    args.extend_from_slice(&["--out", "out"]);
    let (o, tmp) = run_with_tmp("gateway-store-shrink", &args);
    let text = format!("{}{}", o.stdout, o.stderr);
    assert_eq!(o.code, Some(0), "{text}");
    assert!(text.contains("shrunk session-id-persisted"), "{text}");
    assert!(text.contains("wrote out/failures/"), "{text}");
    assert_eq!(store_files(&tmp), Vec::<String>::new(), "left in TMPDIR");
}
