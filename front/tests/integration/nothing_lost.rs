//! Issue 30's table, one test per row a test can hold: a command never deletes what it
//! did not write, reads nothing without a limit, ends cleanly on a closed or full
//! output, and prints a file's strings escaped.

use crate::common;

use common::{bin, run_in, scratch, HANG_GUARD};
use std::path::Path;
use std::process::{Command, Stdio};

fn files_of(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn row_01_merge_into_one_of_its_shards_is_refused_before_anything_is_deleted() {
    let dir = scratch("lost-r01");
    for k in 0..2 {
        let shard = format!("{k}/2");
        let out = format!("s{k}");
        let e = run_in(
            &dir,
            &["run", "--cases", "4", "--shard", &shard, "--out", &out],
        );
        e.check(0, "");
    }
    let before = files_of(&dir.join("s0"));
    for out in ["s0", "./s0/", "s0/inner"] {
        let e = run_in(&dir, &["merge", "--out", out, "s0", "s1"]);
        e.check(2, "choose another --out");
        assert_eq!(files_of(&dir.join("s0")), before, "--out {out}");
    }
    assert!(!dir.join("s0/inner").exists(), "nothing is created either");
    run_in(&dir, &["merge", "--out", "m", "s0", "s1"]).check(0, "");
}

#[test]
fn row_04_sweep_to_a_closed_pipe_or_a_full_disk_ends_with_exit_4_and_no_panic() {
    let dir = scratch("lost-r04");
    let (child, first) =
        common::spawn_first_line(&dir, &["sweep", "--seeds", "1..400", "--cases", "4"]);
    assert!(first.starts_with("SEEDS="), "{first}");
    let e = common::wait_guarded(child, HANG_GUARD);
    e.check(4, "cannot write to standard output");
    if Path::new("/dev/full").exists() {
        for args in [
            vec!["sweep", "--seeds", "1..2", "--cases", "2"],
            vec!["--help"],
            vec!["--version"],
            vec!["run", "--help"],
        ] {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let child = bin()
                .args(&args)
                .current_dir(&dir)
                .stdout(full)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let e = common::wait_guarded(child, HANG_GUARD);
            e.check(4, "No space left on device");
        }
    }
}

#[cfg(unix)]
#[test]
fn row_05_study_refuses_devices_and_fifos() {
    let dir = scratch("lost-r05");
    run_in(&dir, &["study", "/dev/zero"]).check(2, "a device");
    let made = Command::new("mkfifo").arg(dir.join("f.toml")).status();
    if made.is_ok_and(|s| s.success()) {
        run_in(&dir, &["study", "f.toml"]).check(2, "a FIFO");
    }
}

#[test]
fn row_06_sixteen_shards_of_eight_cases_run_and_merge_into_the_whole_run() {
    let dir = scratch("lost-r06");
    let mut shards = Vec::new();
    for k in 0..16 {
        let out = format!("s{k:02}");
        let shard = format!("{k}/16");
        let e = run_in(
            &dir,
            &["run", "--cases", "8", "--shard", &shard, "--out", &out],
        );
        e.check(0, "");
        shards.push(out);
    }
    run_in(&dir, &["run", "--cases", "8", "--out", "whole"]).check(0, "");
    let mut args = vec!["merge", "--out", "merged"];
    args.extend(shards.iter().map(String::as_str));
    run_in(&dir, &args).check(0, "");
    let read = |d: &str| std::fs::read_to_string(dir.join(d).join("report.json")).unwrap();
    assert_eq!(
        read("merged").replacen("\"params\":{\"shards\":\"16\"}", "\"params\":{}", 1),
        read("whole")
    );
}

#[test]
fn row_09_a_run_keeps_the_files_a_shrink_wrote() {
    let dir = scratch("lost-r09");
    let e = run_in(
        &dir,
        &[
            "shrink",
            "--case",
            "1",
            "--bug",
            "H-75345-B",
            "--shrink-time",
            "5",
            "--out",
            "o",
        ],
    );
    e.check(0, "");
    let shrunk = dir.join("o/failures/case-1.shrunk.toml");
    assert!(shrunk.is_file(), "{}", e.stdout);
    std::fs::write(dir.join("o/failures/case-9.toml"), "a stale run's").unwrap();
    let e = run_in(&dir, &["run", "--cases", "3", "--out", "o"]);
    e.check(0, "");
    assert!(shrunk.is_file(), "the run deleted the shrink's output");
    assert!(
        !dir.join("o/failures/case-9.toml").exists(),
        "a run's own stale files go"
    );
}

#[test]
fn row_11_replay_prints_a_files_name_with_control_characters_escaped() {
    let dir = scratch("lost-r11");
    let text = "format = 1\nname = \"x\\u001b[2J\\rFAKE\\nexpectation clean: holds\"\ndescription = \"\\u0007bell\"\nexpect = \"clean\"\n";
    std::fs::write(dir.join("s.toml"), text).unwrap();
    for args in [
        vec!["replay", "s.toml"],
        vec!["scenario", "s.toml", "--out", "o"],
    ] {
        let e = run_in(&dir, &args);
        e.check(0, "");
        assert!(
            !e.stdout.contains(['\u{1b}', '\r', '\u{7}']),
            "raw control characters reached stdout: {:?}",
            e.stdout
        );
        assert!(
            !e.stdout.contains("\nexpectation clean: holds\""),
            "{}",
            e.stdout
        );
    }
    let e = run_in(&dir, &["replay", "s.toml"]);
    assert!(
        e.stdout.contains("x\\u{1b}[2J\\rFAKE\\nexpectation"),
        "{}",
        e.stdout
    );
}
