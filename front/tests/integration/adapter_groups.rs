//! Nothing an adapter starts outlives it: a forking adapter's grandchild is killed with
//! its process group, an exit is reported as an exit at once (not as a timeout after the
//! full wait), an over-long protocol line is a failure naming the process and the
//! limit, and an interrupted run kills every adapter group and removes every scratch
//! directory before it says so, even when the signal lands while adapters start.

use crate::common;

use compactsim_harness::external::wire::SummaryAnswer;
use compactsim_harness::external::{AdapterSpec, Session, SummarizeCall, SummaryService};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A per-request limit the failures below must not wait for.
const LONG_TIMEOUT_MS: u64 = 120_000;
/// "At once": well under the limit, far above a loaded machine's scheduling noise.
const AT_ONCE: Duration = Duration::from_secs(20);

fn adapter(rel: &str) -> String {
    format!("python3 {}/../adapters/{rel}", env!("CARGO_MANIFEST_DIR"))
}

struct Canned;

impl SummaryService for Canned {
    fn answer(&mut self, _call: &SummarizeCall) -> SummaryAnswer {
        SummaryAnswer::Ok {
            text: "x".into(),
            finish_reason: "stop".into(),
        }
    }
}

/// Whether process `pid` still runs (a zombie waiting for its reaper counts as gone).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| rest.to_string()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

/// The pid a fixture named on stderr as `grandchild <pid>`.
fn grandchild_of(message: &str) -> u32 {
    let at = message.find("grandchild ").expect(message) + "grandchild ".len();
    let digits: String = message[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().expect(message)
}

/// Waits up to a few seconds for `pid` to be gone (the kill is asynchronous).
fn gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while running(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    !running(pid)
}

#[cfg(target_os = "linux")]
#[test]
fn a_forking_adapter_that_exits_3_is_reported_exited_at_once_and_its_grandchild_dies() {
    let command = adapter("reference/fixtures/fork_exit.py");
    let mut s = Session::new(AdapterSpec::new(command, LONG_TIMEOUT_MS)).unwrap();
    s.info().unwrap();
    let started = Instant::now();
    let err = s
        .request(crate::external_fixtures::micro, &mut Canned)
        .unwrap_err();
    let took = started.elapsed();
    let msg = err.to_string();
    assert_eq!(err.kind.name(), "exited", "{msg}");
    assert!(msg.contains("exit status: 3"), "{msg}");
    assert!(took < AT_ONCE, "reported after {took:?}: {msg}");
    let grandchild = grandchild_of(&msg);
    assert!(
        gone(grandchild),
        "grandchild {grandchild} outlived its adapter"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_hanging_adapters_grandchild_dies_with_its_group_at_the_timeout() {
    let command = adapter("reference/fixtures/fork_hang.py");
    let mut s = Session::new(AdapterSpec::new(command, 2_000)).unwrap();
    s.info().unwrap();
    let err = s
        .request(crate::external_fixtures::micro, &mut Canned)
        .unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.kind.name(), "timeout", "{msg}");
    let grandchild = grandchild_of(&msg);
    assert!(
        gone(grandchild),
        "grandchild {grandchild} outlived the timeout"
    );
}

#[test]
fn a_protocol_line_over_the_limit_is_a_failure_naming_the_process_and_the_limit() {
    let command = adapter("reference/fixtures/long_line.py");
    let mut s = Session::new(AdapterSpec::new(command.clone(), LONG_TIMEOUT_MS)).unwrap();
    s.info().unwrap();
    let err = s
        .request(crate::external_fixtures::micro, &mut Canned)
        .unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.kind.name(), "invalid-json", "{msg}");
    for want in [
        "PROTOCOL_LINE_BYTES_MAX",
        "67108864 bytes",
        "process ",
        &command,
    ] {
        assert!(msg.contains(want), "{want:?} missing: {msg}");
    }
}

/// The scratch directories and stderr files of adapter children in `tmp`.
fn adapter_files(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("compactsim-adapter-"))
        .collect()
}

/// `compactsim run --cases CASES --jobs 2` in `dir` under adapter `command`, with
/// `TMPDIR` = `tmp` and `env`; stdout dropped, stderr piped.
#[cfg(target_os = "linux")]
fn run_external(
    dir: &Path,
    tmp: &Path,
    command: &str,
    cases: &str,
    env: &[(&str, &Path)],
) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_compactsim"))
        .args(["run", "--cases", cases, "--jobs", "2", "--quiet"])
        .args(["--shrink-time", "0", "--compactor", "external"])
        .args(["--adapter", command, "--adapter-timeout-ms", "600000"])
        .args(["--out", "out"])
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[cfg(target_os = "linux")]
fn interrupt_with_adapter(signal: &str, code: i32) {
    let dir = common::scratch(&format!("groups-interrupt-{signal}"));
    let (tmp, pids) = (dir.join("tmp"), dir.join("pids"));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&pids).unwrap();
    let command = adapter("reference/fixtures/fork_hang.py");
    let mut child = run_external(&dir, &tmp, &command, "4", &[("FIXTURE_PIDS_DIR", &pids)]);
    // Two workers, each an adapter and its grandchild: four pids.
    let started = Instant::now();
    while std::fs::read_dir(&pids).unwrap().count() < 4 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the adapters never forked"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !adapter_files(&tmp).is_empty(),
        "the children have scratch directories"
    );
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let ended = common::wait_guarded(child, Duration::from_secs(60));
    assert_eq!(ended.code, Some(code), "{}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("2 adapter process group(s) killed, temporary files removed"),
        "{}",
        ended.stderr
    );
    for entry in std::fs::read_dir(&pids).unwrap() {
        let pid: u32 = entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .parse()
            .unwrap();
        assert!(gone(pid), "process {pid} outlived the interrupted run");
    }
    assert_eq!(adapter_files(&tmp), Vec::<String>::new(), "left in TMPDIR");
}

#[cfg(target_os = "linux")]
#[test]
fn sigint_and_sigterm_kill_every_adapter_group_and_remove_its_scratch_directories() {
    interrupt_with_adapter("INT", 130);
    interrupt_with_adapter("TERM", 143);
}

/// An interrupt that lands while workers start adapters (each case's adapter fails at
/// once, so new ones start all the time) leaves no scratch directory or stderr file
/// either: a child's files and process are made and recorded under one lock
/// (`groups::Making`), so the interrupt's cleanup sees every one of them or none was
/// made. Five rounds, each signalled at a different point of the starts.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupt_while_adapters_start_leaves_nothing_in_the_temp_directory() {
    let command = adapter("reference/fixtures/crash.py");
    for round in 0..5u64 {
        let dir = common::scratch(&format!("groups-interrupt-starting-{round}"));
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let child = run_external(&dir, &tmp, &command, "400", &[]);
        let started = Instant::now();
        while adapter_files(&tmp).is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no adapter started"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        // A few more starts in, by the round.
        std::thread::sleep(Duration::from_millis(100 * round));
        let sent = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let ended = common::wait_guarded(child, Duration::from_secs(60));
        assert_eq!(ended.code, Some(130), "round {round}: {}", ended.stderr);
        assert_eq!(
            adapter_files(&tmp),
            Vec::<String>::new(),
            "round {round}: left in TMPDIR"
        );
    }
}
