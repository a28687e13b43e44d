//! The reproducers of the hardening issue, one test each: hostile scenario values, a
//! hostile environment (closed pipes, full disks, signals, bad output directories, FIFOs
//! and devices as input), and flags that used to be ignored or to start unbounded work.

use crate::common;

use common::{arg, bin, run_in, scratch, Ended, HANG_GUARD};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn wait(child: Child) -> Ended {
    common::wait_guarded(child, HANG_GUARD)
}

/// `scenario FILE` on a file holding `text`: the result.
fn scenario(name: &str, text: &str) -> Ended {
    let dir = scratch(&format!("hardening-{name}"));
    std::fs::write(dir.join("s.toml"), text).unwrap();
    run_in(&dir, &["scenario", "s.toml", "--out", "out"])
}

const TURN: &str = "[[script.turns]]\nrows = [{ role = \"user\", chars = 400 }, { role = \"assistant\", chars = 300 }]\n";

#[test]
fn row_01_huge_facts_of_the_system_row_are_located_bad_input() {
    let text = format!("format = 1\nexpect = \"clean\"\n[script]\nsystem = {{ chars = 100, facts = 4294967295 }}\n{TURN}");
    scenario("r01", &text).expect(2, "s.toml:4:10: more facts than the text has room for");
}

#[test]
fn row_02_huge_sizes_are_out_of_range_at_their_value() {
    let call = "[[script.turns]]\nrows = [{ role = \"user\", chars = 4 }, { role = \"assistant\", chars = 8, calls = [{ tool = \"t\", args_chars = 4294967295 }] }, { role = \"tool\", chars = 10 }]\n";
    scenario("r02a", &format!("format = 1\nexpect = \"clean\"\n{call}")).expect(2, "s.toml:4:");
    scenario(
        "r02b",
        "format = 1\nexpect = \"clean\"\n[shape]\ncontext_length = 4294967295\n",
    )
    .expect(
        2,
        "s.toml:4:18: out of range: 4294967295 (this value is between 1 and 2000000)",
    );
    scenario(
        "r02c",
        "format = 1\nexpect = \"clean\"\n[micro]\nscaffold_tokens = 4294967295\n",
    )
    .expect(2, "s.toml:4:19: out of range");
}

#[test]
fn row_03_a_huge_turn_budget_is_rejected_and_the_largest_allowed_one_runs() {
    scenario(
        "r03",
        "format = 1\nstrategy = \"batch\"\nturns_max = 4294967295\nexpect = \"clean\"\n",
    )
    .expect(2, "s.toml:3:13: out of range");
    // The largest allowed budget: the debug build (this test's) gives the release verdict.
    scenario(
        "r03max",
        "format = 1\nstrategy = \"batch\"\nturns_max = 100000\nexpect = \"clean\"\n",
    )
    .expect(0, "");
}

#[test]
fn row_04_row_sizes_are_bounded_and_the_largest_rows_add_without_overflow() {
    let rows = |chars: u64| {
        format!("format = 1\nexpect = \"clean\"\n[[script.turns]]\nrows = [{{ role = \"user\", chars = 400 }}, {{ role = \"assistant\", chars = {chars} }}, {{ role = \"assistant\", chars = {chars} }}]\n")
    };
    scenario("r04", &rows(4_294_967_295)).expect(2, "s.toml:4:");
    scenario("r04max", &rows(8_000_000)).expect(0, "");
}

#[test]
fn row_05_a_history_repair_cannot_keep_valid_is_rejected_by_the_loader() {
    let text = format!("format = 1\nexpect = \"clean\"\n[[script.history]]\nrows = [{{ role = \"user\", chars = 400 }}, {{ role = \"assistant\", chars = 80, calls = [{{ tool = \"t\" }}] }}, {{ role = \"assistant\", chars = 80, calls = [{{ tool = \"t\" }}] }}]\n{TURN}");
    scenario("r05", &text).expect(2, "s.toml:3:1: two assistant rows in a row");
}

#[test]
fn row_06_a_closed_pipe_and_a_full_disk_end_quietly_with_exit_4() {
    let dir = scratch("hardening-r06");
    let (child, first) = common::spawn_first_line(&dir, &["run", "--cases", "50", "--out", "out"]);
    assert!(first.starts_with("SEED="), "{first}");
    // The reader is gone (dropped above): the next write fails with a broken pipe.
    let ended = wait(child);
    ended.expect(4, "cannot write to standard output");
    if Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let child = bin()
            .args(["list", "bugs"])
            .stdout(full)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait(child).expect(4, "No space left on device");
    }
}

#[test]
fn row_07_jobs_are_capped() {
    let dir = scratch("hardening-r07");
    for jobs in ["18446744073709551615", "134217728", "257", "0"] {
        run_in(
            &dir,
            &["run", "--cases", "2", "--jobs", jobs, "--out", "out"],
        )
        .expect(2, "--jobs must be between 1 and 256");
    }
    run_in(
        &dir,
        &["run", "--cases", "2", "--jobs", "256", "--out", "out"],
    )
    .expect(0, "");
}

#[cfg(unix)]
fn interrupt(signal: &str, code: i32) {
    let dir = scratch(&format!("hardening-r08-{signal}"));
    let out = dir.join("out");
    let mut child = bin()
        .args(["run", "--cases", "20000", "--out", arg(&out)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let temp_exists = || {
        std::fs::read_dir(&out)
            .map(|d| {
                d.filter_map(Result::ok)
                    .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            })
            .unwrap_or(false)
    };
    while !temp_exists() {
        assert!(
            started.elapsed() < HANG_GUARD,
            "no report temp file appeared"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the signal"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    child.stdout.take();
    let ended = wait(child).expect(code, "interrupted");
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}\n{}", ended.stderr);
}

#[cfg(unix)]
#[test]
fn row_08_sigint_and_sigterm_remove_temp_files_and_say_interrupted() {
    interrupt("INT", 130);
    interrupt("TERM", 143);
}

#[cfg(target_os = "linux")]
#[test]
fn row_09_and_11_an_output_directory_that_cannot_hold_reports_is_bad_input_before_work() {
    let dir = scratch("hardening-r11");
    std::fs::write(dir.join("file"), "x").unwrap();
    for out in ["/proc/x", "file", "/"] {
        let e = run_in(&dir, &["run", "--cases", "2", "--out", out]).expect(2, "--out");
        assert!(e.stdout.is_empty(), "work started: {}", e.stdout);
        run_in(&dir, &["selftest", "--cases", "1", "--out", out]).expect(2, "--out");
        let seed = common::repo().join("scenarios/seeds/h-75345-b.toml");
        run_in(&dir, &["scenario", arg(&seed), "--out", out]).expect(2, "--out");
    }
}

#[test]
fn row_10_replay_and_shrink_of_a_file_refuse_case_flags() {
    let dir = scratch("hardening-r10");
    let seed = common::repo().join("scenarios/seeds/h-75345-b.toml");
    for flags in [
        vec!["--strategy", "nope"],
        vec!["--bug", "H-M-cursor"],
        vec!["--case", "7"],
        vec!["--seed", "1"],
    ] {
        let mut args = vec!["replay", arg(&seed)];
        args.extend(&flags);
        run_in(&dir, &args).expect(2, "takes no");
        let mut args = vec!["shrink", arg(&seed), "--out", "out"];
        args.extend(&flags);
        run_in(&dir, &args).expect(2, "takes no");
    }
}

#[test]
fn row_10b_replay_of_a_file_exits_like_scenario() {
    let dir = scratch("hardening-r10b");
    let seed = common::repo().join("scenarios/seeds/h-75345-b.toml");
    let e = run_in(&dir, &["replay", arg(&seed)]).expect(0, "");
    assert!(e.stdout.contains(": holds"), "{}", e.stdout);
}

#[test]
fn row_12_a_second_run_clears_the_stale_files_of_the_first() {
    let dir = scratch("hardening-r12");
    let out = dir.join("out");
    std::fs::create_dir_all(out.join("failures")).unwrap();
    for f in [
        "failures/case-999.toml",
        "repro.txt",
        ".report.json.1.0.tmp",
        "mine.txt",
    ] {
        std::fs::write(out.join(f), "stale").unwrap();
    }
    run_in(&dir, &["run", "--cases", "3", "--out", "out"]).expect(0, "");
    assert!(!out.join("failures/case-999.toml").exists());
    let repro = std::fs::read_to_string(out.join("repro.txt")).unwrap();
    assert!(
        repro.is_empty(),
        "a clean run's repro.txt is empty: {repro}"
    );
    assert!(!out.join(".report.json.1.0.tmp").exists());
    assert!(out.join("report.json").exists() && out.join("mine.txt").exists());
}

#[test]
fn row_13_summarizer_rates_are_per_mille() {
    scenario(
        "r13",
        "format = 1\nexpect = \"clean\"\n[summarizer]\nerror_per_mille = 4294967295\n",
    )
    .expect(
        2,
        "s.toml:4:19: out of range: 4294967295 (this value is between 0 and 1000)",
    );
}

#[cfg(unix)]
#[test]
fn row_14_devices_fifos_and_directories_are_not_read() {
    let dir = scratch("hardening-r14");
    run_in(&dir, &["replay", "/dev/zero"]).expect(2, "a device");
    run_in(&dir, &["scenario", "/dev/zero", "--out", "out"]).expect(2, "a device");
    let made = Command::new("mkfifo").arg(dir.join("f.toml")).status();
    if made.is_ok_and(|s| s.success()) {
        run_in(&dir, &["replay", "f.toml"]).expect(2, "a FIFO");
        run_in(&dir, &["scenario", ".", "--out", "out"]).expect(2, "a FIFO");
    }
    std::fs::write(dir.join("big.toml"), vec![b'#'; 2 << 20]).unwrap();
    run_in(&dir, &["replay", "big.toml"]).expect(2, "over the limit of 1048576");
    run_in(&dir, &["replay", "absent.toml"]).expect(2, "No such file");
}

#[test]
fn row_16_a_case_that_grows_without_bound_stops_at_its_work_budget_not_failed() {
    // The agent loop keeps its transcript under the window (compaction, resets), so a
    // case of 100,000 turns runs until the work budget, the harness's own limit, stops
    // it: judged up to there, clean, the stop counted.
    let text = "format = 1\nstrategy = \"batch\"\npasses = 10000\nturns_max = 100000\nexpect = \"clean\"\n[expect_counters]\n\"harness.work_budget_reached\" = \">=1\"\n[summarizer]\nexpansion_per_mille = 1000\n";
    let e = scenario("r16", text).expect(0, "");
    assert!(e.stdout.contains("1 hold"), "{}", e.stdout);
    // A micro-only case whose summaries always expand grows until its transcript passes
    // the model window, where a real agent could send nothing: it ends there, clean.
    let text = "format = 1\npasses = 10000\nturns_max = 100000\nexpect = \"clean\"\n[summarizer]\nexpansion_per_mille = 1000\n";
    let e = scenario("r16-micro", text).expect(0, "");
    assert!(e.stdout.contains("1 hold"), "{}", e.stdout);
}
