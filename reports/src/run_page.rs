//! The run page, `index.html` beside `report.json` (run, merge): a pass/fail banner with
//! the seed and the command that reruns the run; the failures first, each with its
//! witness once, its full repro line (a `<code>` that wraps, and a copy button) and
//! links to its shrunk `failures/case-N.toml` and to `repro.txt`; then parameters,
//! totals, invariants, families and coverage. Self-contained: no external asset.

use crate::atomic::atomic_write;
use crate::error::ReportError;
use crate::html::{page_head, INDEX_HTML, PAGE_END};
use crate::markdown::{parameter_table, witness_table};
use crate::schema::{Failure, Header, Summary};
use crate::table::{html_escape, Align, Table};
use crate::terminal::{family_table, invariant_table, unreached};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Directory of a run's shrunk failures (`failures/case-N.toml`), relative to the page.
pub const FAILURES_DIR_LINK: &str = "failures";

/// Copies the `<code>` before the button (no external script: inline, a few lines).
const COPY_SCRIPT: &str = "<script>\nfunction copyRepro(b){const c=b.previousElementSibling;\
navigator.clipboard.writeText(c.textContent).then(()=>{b.textContent='copied';},\
()=>{const r=document.createRange();r.selectNodeContents(c);const s=getSelection();\
s.removeAllRanges();s.addRange(r);b.textContent='selected: press Ctrl+C';});}\n</script>\n";

/// Writes `dir/index.html` for a run; returns its path. `shrunk_cases`: the failing
/// cases whose shrunk `failures/case-N.toml` the run writes (linked from the page).
pub fn write_run_html(
    dir: &Path,
    header: &Header,
    summary: &Summary,
    shrunk_cases: &[u32],
) -> Result<PathBuf, ReportError> {
    let path = dir.join(INDEX_HTML);
    atomic_write(
        &path,
        render_run_html(header, summary, shrunk_cases).as_bytes(),
    )?;
    Ok(path)
}

/// A word for a shell: as it is when it needs no quoting, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=,+@%".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The one command that reruns the run of `header`: seed, cases, passes, strategy, every
/// bug switch and every other parameter as its flag (`anti_thrash` -> `--anti-thrash`).
pub fn rerun_command(header: &Header) -> String {
    let mut cmd = format!(
        "{} run --seed {} --cases {} --passes {} --strategy {}",
        header.tool,
        header.seed,
        header.cases,
        header.passes,
        shell_word(&header.strategy)
    );
    for bug in &header.bugs {
        let _ = write!(cmd, " --bug {}", shell_word(bug));
    }
    for (key, value) in &header.params {
        let _ = write!(cmd, " --{} {}", key.replace('_', "-"), shell_word(value));
    }
    cmd
}

/// The banner: PASSED or FAILED with the counts, the seed and the rerun command.
fn banner(header: &Header, summary: &Summary) -> String {
    let t = &summary.totals;
    let failing = t.cases_failed + t.cases_liveness + t.cases_internal;
    let (class, verdict) = if failing == 0 {
        (
            "pass",
            format!("PASSED: {} cases, every invariant held", t.cases),
        )
    } else {
        (
            "fail",
            format!(
                "FAILED: {failing} of {} cases ({} violation, {} liveness, {} internal)",
                t.cases, t.cases_failed, t.cases_liveness, t.cases_internal
            ),
        )
    };
    format!(
        "<div class=\"banner {class}\" id=\"verdict\">\n<p><strong>{verdict}</strong></p>\n\
         <p>seed {seed}</p>\n</div>\n<p>Rerun this run:</p>\n{code}",
        seed = header.seed,
        code = repro_code(&rerun_command(header)),
    )
}

/// A command in a wrapping `<code>` and its copy button.
fn repro_code(command: &str) -> String {
    format!(
        "<code class=\"repro\">{}</code><button class=\"copy\" type=\"button\" \
         onclick=\"copyRepro(this)\">copy</button>\n",
        html_escape(command)
    )
}

/// The run page (see the module documentation).
pub fn render_run_html(header: &Header, summary: &Summary, shrunk_cases: &[u32]) -> String {
    let mut out = page_head(&format!("{} run, seed {}", header.tool, header.seed));
    out.push_str(&banner(header, summary));
    let _ = writeln!(
        out,
        "<h2>Failures ({} kept, {} omitted)</h2>",
        summary.failures.len(),
        summary.failures_omitted
    );
    if summary.failures.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        let _ = writeln!(
            out,
            "<p>Every repro line: <a href=\"{r}\">{r}</a>.</p>",
            r = crate::REPRO_TXT
        );
    }
    for f in &summary.failures {
        out.push_str(&failure_html(f, shrunk_cases.contains(&f.case)));
    }
    out.push_str("<h2>Parameters</h2>\n");
    out.push_str(&parameter_table(header).render_html());
    let t = &summary.totals;
    let _ = writeln!(
        out,
        "<h2>Totals</h2>\n<p>{} cases: {} failed, {} liveness, {} internal; {} turns, {} \
         passes, {} transitions</p>",
        t.cases,
        t.cases_failed,
        t.cases_liveness,
        t.cases_internal,
        t.turns,
        t.passes,
        t.transitions
    );
    out.push_str("<h2>Invariants</h2>\n");
    out.push_str(&invariant_table(summary).render_html());
    out.push_str("<h2>Families</h2>\n");
    out.push_str(&family_table(summary).render_html());
    out.push_str(&coverage_html(summary));
    out.push_str(COPY_SCRIPT);
    out.push_str(PAGE_END);
    out
}

fn coverage_html(summary: &Summary) -> String {
    let mut out = String::from("<h2>Coverage</h2>\n");
    let mut coverage = Table::new(&[("counter", Align::Left), ("hits", Align::Right)]);
    for (name, hits) in &summary.coverage {
        coverage.row(vec![name.clone(), hits.to_string()]);
    }
    out.push_str(&coverage.render_html());
    let missing = unreached(summary);
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "<p>Never reached: {}.</p>",
            html_escape(&missing.join(", "))
        );
    }
    out
}

/// One failure: its heading, the witness once (message, rows, facts), the repro line and
/// the links.
fn failure_html(f: &Failure, shrunk: bool) -> String {
    let v = &f.violation;
    let mut out = format!(
        "<h3 class=\"failed\" id=\"case-{case}\">case {case}: {} at turn {}, step {}</h3>\n\
         <p>family {}, case seed {}</p>\n<blockquote>{}</blockquote>\n",
        html_escape(&v.invariant),
        v.turn,
        v.step,
        html_escape(&f.family),
        f.case_seed,
        html_escape(&v.message),
        case = f.case,
    );
    if let Some(rows) = witness_table(v) {
        out.push_str(&rows.render_html());
    }
    let facts: Vec<&String> = v
        .witness
        .facts
        .iter()
        .filter(|fact| **fact != v.message)
        .collect();
    if !facts.is_empty() {
        out.push_str("<ul>\n");
        for fact in facts {
            let _ = writeln!(out, "<li>{}</li>", html_escape(fact));
        }
        out.push_str("</ul>\n");
    }
    out.push_str(&repro_code(&f.repro));
    let mut links = vec![format!("<a href=\"{r}\">{r}</a>", r = crate::REPRO_TXT)];
    if shrunk {
        links.insert(
            0,
            format!(
                "<a href=\"{FAILURES_DIR_LINK}/case-{c}.toml\">shrunk: {FAILURES_DIR_LINK}/case-{c}.toml</a>",
                c = f.case
            ),
        );
    }
    let _ = writeln!(out, "<p>{}</p>", links.join(" · "));
    out
}
