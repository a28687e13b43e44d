//! `compactsim scenario FILE|DIR...`: run scenario files, compare each outcome with its
//! expectation, print a table, write `scenarios.txt` and `junit.xml`. Every file is
//! loaded and checked before anything runs: one malformed file fails the command with
//! exit 2 and its file:line:column.

use super::exit::{Exit, Failure};
use super::replay::render_case;
use crate::scenario::{self, describe, Scenario};
use crate::scenario::{missing_venv, venv_missing_reason, PINNED_VENVS};
use compactsim_harness::compactor::{CompactorSpec, Pools};
use compactsim_harness::engine::{run_case, CaseOutcome, CaseResult, Record};
use compactsim_harness::external::compactor::Pool;
use compactsim_harness::external::wire::Capabilities;
use compactsim_reports::{self as reports, JunitCase, JunitOutcome};
use rayon::prelude::*;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default output directory of `compactsim scenario`.
pub const OUT_DEFAULT: &str = "target/compactsim/scenarios";
/// The one-line-per-scenario summary inside the output directory.
pub const SCENARIOS_TXT: &str = "scenarios.txt";
/// Name of the JUnit test suite.
pub const JUNIT_SUITE: &str = "scenarios";

/// A validated `scenario` request.
#[derive(Clone, Debug)]
pub struct ScenarioRequest {
    pub paths: Vec<PathBuf>,
    pub out: PathBuf,
    /// Print each scenario's event log and witness.
    pub trace: bool,
    pub jobs: usize,
    /// No progress bar even on a terminal.
    pub quiet: bool,
    /// `--session-mode`: every scenario in this mode (agent-loop files only).
    pub session_mode: Option<compactsim_hermes::agent::SessionMode>,
    /// `--compactor`: the compactor every scenario runs (the reference: each file's own
    /// `[compactor]`, else the reference).
    pub compactor: CompactorSpec,
}

/// One scenario and how it went.
#[derive(Clone, Debug)]
pub struct Ran {
    pub scenario: Scenario,
    pub result: CaseResult,
    pub holds: bool,
    /// Wall time of the run as measured (junit.xml only; no other report has it).
    pub wall_time: Duration,
}

/// A scenario the compactor under test cannot serve, and why (see
/// [`Scenario::skip_reason`]): reported, neither held nor failed.
#[derive(Clone, Debug)]
pub struct Skipped {
    pub scenario: Scenario,
    pub reason: String,
}

/// One line of the reports: a scenario that ran, or one that was skipped.
#[derive(Clone, Debug)]
pub enum Entry {
    Ran(Box<Ran>),
    Skipped(Box<Skipped>),
}

impl Entry {
    fn scenario(&self) -> &Scenario {
        match self {
            Entry::Ran(r) => &r.scenario,
            Entry::Skipped(s) => &s.scenario,
        }
    }

    /// `ok`, `FAILED`, `ERROR` or `SKIPPED`.
    fn verdict(&self) -> &'static str {
        match self {
            Entry::Ran(r) => verdict(r),
            Entry::Skipped(_) => reports::SKIPPED,
        }
    }

    /// The outcome column: what the case did, or why it did not run.
    fn got(&self) -> String {
        match self {
            Entry::Ran(r) => describe(&r.result),
            Entry::Skipped(s) => format!("skipped: {}", s.reason),
        }
    }

    fn turns(&self) -> u32 {
        match self {
            Entry::Ran(r) => r.result.turns,
            Entry::Skipped(_) => 0,
        }
    }
}

/// Scenarios split by whether the compactor under test of each serves them, each with
/// its index in the input.
#[derive(Debug, Default)]
pub struct Served {
    pub run: Vec<(usize, Scenario)>,
    pub skipped: Vec<(usize, Skipped)>,
}

/// Splits `scenarios` into those to run and those the compactor under test of each
/// cannot serve. An adapter's `hello` is read once per adapter (its child stays in the
/// pool for the cases); an adapter that cannot greet skips nothing (its cases run and
/// report the failure).
pub fn split_served(scenarios: Vec<Scenario>) -> Served {
    let mut known: Vec<(Arc<Pool>, Option<Capabilities>)> = Vec::new();
    let mut served = Served::default();
    for (i, scenario) in scenarios.into_iter().enumerate() {
        let caps = match &scenario.spec.compactor {
            CompactorSpec::External(pool)
                if scenario.spec.bugs.is_empty() && missing_venv(pool.spec()).is_none() =>
            {
                match known.iter().find(|(p, _)| Arc::ptr_eq(p, pool)) {
                    Some((_, caps)) => caps.clone(),
                    None => {
                        let caps = pool.hello().ok().map(|info| info.capabilities);
                        known.push((pool.clone(), caps.clone()));
                        caps
                    }
                }
            }
            _ => None,
        };
        match scenario.skip_reason(caps.as_ref()) {
            None => served.run.push((i, scenario)),
            Some(reason) => served.skipped.push((i, Skipped { scenario, reason })),
        }
    }
    served
}

/// Runs the scenarios the compactor under test serves (see [`split_served`]) on `jobs`
/// threads; every scenario in the given order, run or skipped.
pub fn run_served(
    scenarios: Vec<Scenario>,
    jobs: usize,
    trace: bool,
    bar: &indicatif::ProgressBar,
) -> Result<Vec<Entry>, Failure> {
    let Served { run, skipped } = split_served(scenarios);
    bar.inc(skipped.len() as u64);
    let (order, to_run): (Vec<usize>, Vec<Scenario>) = run.into_iter().unzip();
    let ran = run_all_with(to_run, jobs, trace, bar)?;
    let mut entries: Vec<(usize, Entry)> = order
        .into_iter()
        .zip(ran.into_iter().map(|r| Entry::Ran(Box::new(r))))
        .chain(
            skipped
                .into_iter()
                .map(|(i, s)| (i, Entry::Skipped(Box::new(s)))),
        )
        .collect();
    entries.sort_by_key(|(i, _)| *i);
    Ok(entries.into_iter().map(|(_, e)| e).collect())
}

/// The scenarios that ran.
pub fn ran_of(entries: &[Entry]) -> Vec<Ran> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Ran(r) => Some((**r).clone()),
            Entry::Skipped(_) => None,
        })
        .collect()
}

/// Loads every scenario under `paths`, each under the compactor `chosen` (see
/// [`Scenario::under`]; the files that declare the same adapter share its pool); all
/// errors at once (exit 2) if any file is bad.
pub fn load_all(paths: &[PathBuf], chosen: &CompactorSpec) -> Result<Vec<Scenario>, Failure> {
    let files = scenario::discover(paths).map_err(Failure::bad_input)?;
    if files.is_empty() {
        let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Failure::bad_input(format!(
            "no scenario files (*.toml) in {}",
            named.join(" ")
        )));
    }
    let (ok, bad): (Vec<_>, Vec<_>) = files
        .iter()
        .map(|f| scenario::load(f))
        .partition(Result::is_ok);
    if !bad.is_empty() {
        let lines: Vec<String> = bad
            .into_iter()
            .filter_map(Result::err)
            .map(|e| e.to_string())
            .collect();
        return Err(Failure::bad_input(format!(
            "{} malformed scenario file(s); nothing was run:\n{}",
            lines.len(),
            lines.join("\n")
        )));
    }
    let pools = Pools::default();
    Ok(ok
        .into_iter()
        .filter_map(Result::ok)
        .map(|s| s.under(chosen, &pools))
        .collect())
}

/// Runs `scenarios` on `jobs` threads; results in the given order.
pub fn run_all(scenarios: Vec<Scenario>, jobs: usize, trace: bool) -> Result<Vec<Ran>, Failure> {
    run_all_with(scenarios, jobs, trace, &indicatif::ProgressBar::hidden())
}

/// As [`run_all`], ticking `bar` once per scenario.
pub fn run_all_with(
    scenarios: Vec<Scenario>,
    jobs: usize,
    trace: bool,
    bar: &indicatif::ProgressBar,
) -> Result<Vec<Ran>, Failure> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| Failure::internal(format!("cannot start worker threads: {e}")))?;
    Ok(pool.install(|| {
        scenarios
            .into_par_iter()
            .map(|scenario| {
                let started = Instant::now();
                let result = run_case(
                    &scenario.spec,
                    Record {
                        trace,
                        ..Record::default()
                    },
                );
                let holds = scenario.holds(&result);
                bar.inc(1);
                Ran {
                    scenario,
                    result,
                    holds,
                    wall_time: started.elapsed(),
                }
            })
            .collect()
    }))
}

/// The exit code: internal failures first, then failed expectations.
pub fn exit_of(ran: &[Ran]) -> Exit {
    ran.iter()
        .fold(Exit::Clean, |exit, r| match (&r.result.outcome, r.holds) {
            (CaseOutcome::Internal(_), _) => exit.worst(Exit::Internal),
            (CaseOutcome::Clean | CaseOutcome::Violation(_) | CaseOutcome::Liveness(_), false) => {
                exit.worst(Exit::Violation)
            }
            (CaseOutcome::Clean | CaseOutcome::Violation(_) | CaseOutcome::Liveness(_), true) => {
                exit
            }
        })
}

/// Longest expectation the console table shows, in characters; a longer one ends in `…`
/// (scenarios.txt and the `FAILED` lines carry every expectation and outcome in full).
pub const TABLE_EXPECTATION_CHARS_MAX: usize = 40;

/// The console table: scenario, expectation (at most [`TABLE_EXPECTATION_CHARS_MAX`]
/// characters), turns, verdict. The outcome is left to the `FAILED` lines below it and to
/// scenarios.txt, so the table stays as narrow as its longest path allows.
pub fn render_table(entries: &[Entry]) -> String {
    let rows: Vec<[String; 4]> = entries
        .iter()
        .map(|e| {
            [
                e.scenario().path.display().to_string(),
                clip(&e.scenario().expectation(), TABLE_EXPECTATION_CHARS_MAX),
                e.turns().to_string(),
                e.verdict().to_string(),
            ]
        })
        .collect();
    let head = ["scenario", "expectation", "turns", "verdict"].map(String::from);
    let mut width = head.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let rules = width.map(|w| "-".repeat(w));
    let mut out = String::new();
    for cells in [&head, &rules].into_iter().chain(&rows) {
        let _ = writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:>w2$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = width[0],
            w1 = width[1],
            w2 = width[2],
        );
    }
    out
}

/// `text` cut to `chars_max` characters, the last one `…` when it was longer.
fn clip(text: &str, chars_max: usize) -> String {
    if text.chars().count() <= chars_max {
        return text.to_string();
    }
    let kept: String = text.chars().take(chars_max.saturating_sub(1)).collect();
    format!("{kept}…")
}

fn verdict(r: &Ran) -> &'static str {
    match (&r.result.outcome, r.holds) {
        (CaseOutcome::Internal(_), _) => "ERROR",
        (CaseOutcome::Clean | CaseOutcome::Violation(_) | CaseOutcome::Liveness(_), true) => "ok",
        (CaseOutcome::Clean | CaseOutcome::Violation(_) | CaseOutcome::Liveness(_), false) => {
            "FAILED"
        }
    }
}

/// The witness of a violation in a few lines (the pages' detail).
fn witness(r: &CaseResult) -> String {
    match &r.outcome {
        CaseOutcome::Violation(vs) => reports::witness_text(vs),
        CaseOutcome::Liveness(v) => reports::witness_text(std::slice::from_ref(v)),
        CaseOutcome::Internal(what) => format!("internal failure: {what}\n"),
        CaseOutcome::Clean => String::new(),
    }
}

/// The witness and the line that replays the scenario (JUnit detail).
fn detail(r: &Ran) -> String {
    let mut out = witness(&r.result);
    let _ = writeln!(
        out,
        "repro: compactsim replay {}",
        r.scenario.path.display()
    );
    out
}

/// The `type` of a failed scenario's JUnit test case: the first invariant that failed,
/// `liveness: ...`, `internal`, or `expectation` (it held where a violation was expected).
fn junit_type(outcome: &CaseOutcome) -> String {
    match outcome {
        CaseOutcome::Violation(vs) => vs
            .first()
            .map_or_else(|| "violation".to_string(), |v| v.invariant.clone()),
        CaseOutcome::Liveness(v) => v.invariant.clone(),
        CaseOutcome::Internal(_) => "internal".to_string(),
        CaseOutcome::Clean => "expectation".to_string(),
    }
}

/// The JUnit test cases, one per scenario.
pub fn junit_cases(entries: &[Entry]) -> Vec<JunitCase> {
    entries
        .iter()
        .map(|e| {
            let path = &e.scenario().path;
            let classname = path
                .parent()
                .map(|p| p.display().to_string().replace(['/', '\\'], "."))
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| JUNIT_SUITE.to_string());
            let outcome = match e {
                Entry::Skipped(s) => JunitOutcome::Skipped {
                    message: s.reason.clone(),
                },
                Entry::Ran(r) if r.holds => JunitOutcome::Passed,
                Entry::Ran(r) => JunitOutcome::Failed {
                    kind: junit_type(&r.result.outcome),
                    message: failure_message(r),
                    detail: detail(r),
                },
            };
            JunitCase {
                name: path.display().to_string(),
                classname,
                outcome,
                wall_time: match e {
                    Entry::Ran(r) => r.wall_time,
                    Entry::Skipped(_) => Duration::ZERO,
                },
            }
        })
        .collect()
}

/// `expected <expectation>, got <outcome>`, and the counters that missed.
pub fn failure_message(r: &Ran) -> String {
    let mut message = format!(
        "expected {}, got {}",
        r.scenario.expectation(),
        describe(&r.result)
    );
    let missed = r.scenario.counters_missed(&r.result);
    if !missed.is_empty() {
        message.push_str(&format!("; counters: {}", missed.join(", ")));
    }
    message
}

/// `scenarios.txt`: one line per scenario.
pub fn render_summary(entries: &[Entry]) -> String {
    let mut out = String::new();
    for e in entries {
        let _ = writeln!(
            out,
            "{} {} | expect {} | {} | turns {}",
            e.verdict(),
            e.scenario().path.display(),
            e.scenario().expectation(),
            e.got(),
            e.turns()
        );
    }
    out
}

fn write_reports(out: &Path, entries: &[Entry]) -> Result<(PathBuf, PathBuf), Failure> {
    let txt = out.join(SCENARIOS_TXT);
    reports::atomic_write(&txt, render_summary(entries).as_bytes())
        .map_err(|e| Failure::internal(e.to_string()))?;
    let junit = reports::write_junit(out, JUNIT_SUITE, &junit_cases(entries))
        .map_err(|e| Failure::internal(e.to_string()))?;
    reports::write_scenarios_pages(out, &page_rows(entries))
        .map_err(|e| Failure::internal(e.to_string()))?;
    Ok((txt, junit))
}

/// The rows of `summary.md` and `index.html`.
fn page_rows(entries: &[Entry]) -> Vec<reports::ScenarioRow> {
    entries
        .iter()
        .map(|e| reports::ScenarioRow {
            verdict: e.verdict().to_string(),
            file: e.scenario().path.display().to_string(),
            expect: e.scenario().expectation(),
            got: e.got(),
            turns: e.turns(),
            detail: match e {
                Entry::Ran(r) if r.holds => String::new(),
                Entry::Ran(r) => format!("{}\n{}", failure_message(r), witness(&r.result)),
                Entry::Skipped(s) => format!("skipped: {}", s.reason),
            },
        })
        .collect()
}

/// The event log and witness of one scenario, as `replay` prints a case.
pub fn render_trace(s: &Scenario, r: &CaseResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "SCENARIO {} name={} expect={} seed={} case={} passes={} strategy={} bugs={}",
        s.path.display(),
        s.name,
        s.expectation(),
        s.spec.root_seed,
        s.spec.case,
        s.spec.passes,
        s.spec.strategy,
        if s.spec.bugs.is_empty() {
            "none".to_string()
        } else {
            s.spec.bugs.ids().join(",")
        }
    );
    render_case(&mut out, &s.spec, r);
    out
}

/// Runs the request; prints the table and the failures; writes the reports.
pub fn scenario(req: &ScenarioRequest) -> Result<Exit, Failure> {
    let mut scenarios = load_all(&req.paths, &req.compactor)?;
    if let Some(mode) = req.session_mode {
        for s in &mut scenarios {
            let Some(options) = s.spec.strategy.loop_options() else {
                return Err(Failure::bad_input(format!(
                    "--session-mode applies to the agent-loop strategies (batch, both, \
                     gateway): {} runs {}",
                    s.path.display(),
                    s.spec.strategy
                )));
            };
            s.spec.strategy = s
                .spec
                .strategy
                .with_options(options.with_session_mode(Some(mode)));
        }
    }
    super::outdir::prepare(&req.out)?;
    super::outdir::clear_stale(&req.out, &[SCENARIOS_TXT, reports::JUNIT_XML], &[])?;
    super::outdir::keep_adapter_stderr(&req.out, &req.compactor)?;
    let bar = super::progress::bar(scenarios.len() as u64, "scenarios", req.quiet);
    let entries = run_served(scenarios, req.jobs, req.trace, &bar)?;
    bar.finish_and_clear();
    let ran = ran_of(&entries);
    if req.trace {
        for r in &ran {
            crate::outln!("{}", render_trace(&r.scenario, &r.result));
        }
    }
    crate::out!("{}", render_table(&entries));
    for e in &entries {
        match e {
            Entry::Ran(r) if !r.holds => crate::outln!(
                "FAILED {}: {}",
                r.scenario.path.display(),
                failure_message(r)
            ),
            Entry::Skipped(_) | Entry::Ran(_) => {}
        }
    }
    for line in skipped_lines(&entries) {
        crate::outln!("{line}");
    }
    let (txt, junit) = write_reports(&req.out, &entries)?;
    crate::outln!("\n{}", reports::scenarios_count_line(&page_rows(&entries)));
    crate::outln!("reports: {} {}", txt.display(), junit.display());
    Ok(exit_of(&ran))
}

/// The console's lines for the skipped files: one `SKIPPED N files, their venvs not
/// installed: SETUP (K), ...` for every file whose adapter's pinned venv is missing (a
/// fresh clone's real-code files, all waiting for an install); then `SKIPPED FILE:
/// REASON` for a reason only one file has and one `SKIPPED N files: REASON` for a reason
/// several share, in the order of first appearance. scenarios.txt names every file with
/// its own reason.
fn skipped_lines(entries: &[Entry]) -> Vec<String> {
    let mut venvs: Vec<(&str, usize)> = Vec::new();
    let mut reasons: Vec<(&str, Vec<&Path>)> = Vec::new();
    for e in entries {
        let Entry::Skipped(s) = e else { continue };
        let venv = PINNED_VENVS
            .iter()
            .find(|(dir, setup)| s.reason == venv_missing_reason(dir, setup));
        if let Some((_, setup)) = venv {
            match venvs.iter_mut().find(|(v, _)| *v == *setup) {
                Some((_, n)) => *n += 1,
                None => venvs.push((setup, 1)),
            }
            continue;
        }
        let path = s.scenario.path.as_path();
        match reasons.iter_mut().find(|(r, _)| *r == s.reason) {
            Some((_, paths)) => paths.push(path),
            None => reasons.push((&s.reason, vec![path])),
        }
    }
    let venv_line = (!venvs.is_empty()).then(|| {
        let files: usize = venvs.iter().map(|(_, n)| n).sum();
        let each: Vec<String> = venvs
            .iter()
            .map(|(setup, n)| format!("{setup} ({n})"))
            .collect();
        format!(
            "SKIPPED {files} files, their venvs not installed: {}",
            each.join(", ")
        )
    });
    venv_line
        .into_iter()
        .chain(
            reasons
                .into_iter()
                .map(|(reason, paths)| match paths.as_slice() {
                    [one] => format!("SKIPPED {}: {reason}", one.display()),
                    many => format!("SKIPPED {} files: {reason}", many.len()),
                }),
        )
        .collect()
}

/// `compactsim replay FILE.toml`: the trace and witness of one scenario file run under
/// the compactor `chosen` (see [`Scenario::under`]); the exit code is that of
/// `compactsim scenario FILE.toml`: 0 when the expectation holds.
pub fn replay_file(path: &Path, chosen: &CompactorSpec) -> Result<(String, Exit), Failure> {
    let s = scenario::load(path)
        .map_err(|e| Failure::bad_input(e.to_string()))?
        .under(chosen, &Pools::default());
    if let Some((_, skipped)) = split_served(vec![s.clone()]).skipped.pop() {
        let out = format!(
            "SCENARIO {} name={} expect={}\nexpectation {}: SKIPPED: {}\n",
            s.path.display(),
            s.name,
            s.expectation(),
            s.expectation(),
            skipped.reason
        );
        return Ok((out, Exit::Clean));
    }
    let r = run_case(
        &s.spec,
        Record {
            trace: true,
            ..Record::default()
        },
    );
    let mut out = render_trace(&s, &r);
    let exit = exit_of(&[Ran {
        scenario: s.clone(),
        result: r.clone(),
        holds: s.holds(&r),
        wall_time: Duration::ZERO,
    }]);
    let _ = writeln!(
        out,
        "expectation {}: {}",
        s.expectation(),
        if s.holds(&r) { "holds" } else { "FAILED" }
    );
    for miss in s.counters_missed(&r) {
        let _ = writeln!(out, "  counter {miss}");
    }
    Ok((out, exit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(counters: &str) -> Vec<Ran> {
        let source = format!(
            "format = 1\nstrategy = \"batch\"\nturns_max = 3\nexpect = \"clean\"\nexpect_counters = {{ {counters} }}\n"
        );
        let s = scenario::parse(Path::new("c.toml"), &source).unwrap();
        run_all(vec![s], 1, false).unwrap()
    }

    #[test]
    fn a_missed_counter_fails_the_scenario_and_is_named_with_its_value() {
        let ok = ran("\"turns.finished\" = \">=1\", \"turns.exhausted\" = 0");
        assert!(ok[0].holds, "{}", failure_message(&ok[0]));
        assert_eq!(exit_of(&ok), Exit::Clean);
        let missed = ran("\"turns.finished\" = \">=100\"");
        assert!(!missed[0].holds);
        assert_eq!(exit_of(&missed), Exit::Violation);
        let message = failure_message(&missed[0]);
        assert!(
            message.starts_with(
                "expected clean; turns.finished >= 100, got clean; counters: turns.finished = "
            ) && message.ends_with("(expected >= 100)"),
            "{message}"
        );
        let entries: Vec<Entry> = missed
            .into_iter()
            .map(|r| Entry::Ran(Box::new(r)))
            .collect();
        assert!(render_table(&entries).contains("FAILED"));
    }

    #[test]
    fn the_console_table_clips_a_long_expectation_and_leaves_the_outcome_to_the_failed_lines() {
        assert_eq!(clip("abcdef", 6), "abcdef");
        assert_eq!(clip("abcdefg", 6), "abcde…");
        let entries: Vec<Entry> = ran("\"turns.finished\" = \">=100\"")
            .into_iter()
            .map(|r| Entry::Ran(Box::new(r)))
            .collect();
        let table = render_table(&entries);
        let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
        // c.toml, the clipped expectation, turns, verdict and the three gaps of two.
        assert!(
            widest <= "c.toml".len().max(8) + TABLE_EXPECTATION_CHARS_MAX + 5 + 7 + 6,
            "{table}"
        );
        assert!(!table.contains("counters:"), "{table}");
    }
}
