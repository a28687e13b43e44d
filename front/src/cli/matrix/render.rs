//! The matrix on disk: matrix.json (the data), MATRIX.md and matrix.html (the finding ×
//! release table, the bisect answers, the per-release invariant counts). No times.

use super::judge::Cell;
use super::Matrix;
use std::fmt::Write as _;
use std::path::Path;

pub const MATRIX_JSON: &str = "matrix.json";
pub const MATRIX_MD: &str = "MATRIX.md";
pub const MATRIX_HTML: &str = "matrix.html";

/// Writes the three files (each through a temporary file renamed into place).
pub fn write_all(dir: &Path, m: &Matrix) -> Result<(), String> {
    let json = serde_json::to_string_pretty(m).map_err(|e| e.to_string())? + "\n";
    write(dir, MATRIX_JSON, &json)?;
    write(dir, MATRIX_MD, &markdown(m))?;
    write(dir, MATRIX_HTML, &html(m))
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The short mark of a cell in the wide table.
fn mark(c: &Cell) -> &'static str {
    match c {
        Cell::Caught { .. } => "caught",
        Cell::Masked { .. } => "masked",
        Cell::OtherWitness { .. } => "other",
        Cell::Clean { fired } if fired.is_empty() => "clean",
        Cell::Clean { .. } => "clean*",
        Cell::CannotRun { .. } => "—",
    }
}

/// The release × finding table (one row per release, one column per finding).
pub fn findings_table(m: &Matrix) -> String {
    let mut out = String::from("| release |");
    for f in &m.findings {
        let _ = write!(out, " {} |", f.id);
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(m.findings.len()));
    out.push('\n');
    for (i, r) in m.releases.iter().enumerate() {
        let _ = write!(out, "| {} |", r.name);
        for f in &m.findings {
            let _ = write!(out, " {} |", mark(&f.cells[i].1));
        }
        out.push('\n');
    }
    out
}

fn markdown(m: &Matrix) -> String {
    let mut out = format!(
        "# Version matrix\n\n`compactsim matrix {}` — seed {}, {} cases × {} passes per \
         default suite; every case and every finding's scenario judged past its first \
         violation.\n\n",
        m.file, m.seed, m.cases, m.passes
    );
    out.push_str(
        "caught: the finding's invariant fires and nothing fired before it; masked: it \
         fires, but another invariant fired first (a first-violation judge hides it); \
         other: it fires, but without the witness the finding names (another fault; its \
         message is in matrix.json); clean: it does not fire (clean*: other invariants \
         fired, listed in matrix.json); \
         —: cannot run (why below).\n\n",
    );
    out.push_str(&findings_table(m));
    out.push_str("\n## Bisect\n\n| finding | invariant | first affected | last affected | masked in | answer |\n|---|---|---|---|---|---|\n");
    for f in &m.findings {
        let b = &f.bisect;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            f.id,
            f.invariant,
            b.first_affected.as_deref().unwrap_or("—"),
            b.last_affected.as_deref().unwrap_or("—"),
            if b.masked.is_empty() {
                "—".into()
            } else {
                b.masked.join(", ")
            },
            b.answer
        );
    }
    out.push_str("\n## Default suites: invariant counts (cases whose first violation it is / cases where it fired)\n\n| release | suite | cases | failed | internal | invariants |\n|---|---|--:|--:|--:|---|\n");
    for r in &m.releases {
        for s in &r.suites {
            let t = |k: &str| s.totals.get(k).copied().unwrap_or(0);
            let counts: Vec<String> = s
                .invariants
                .iter()
                .filter(|(_, c)| c[1] > 0)
                .map(|(id, c)| format!("{id} {}/{}", c[0], c[1]))
                .collect();
            let detail = if s.status == "ran" {
                counts.join(", ")
            } else {
                s.status.clone()
            };
            let _ = writeln!(
                out,
                "| {} | {} ({}) | {} | {} | {} | {} |",
                r.name,
                s.strategy,
                s.adapter,
                t("cases"),
                t("cases_failed"),
                t("cases_internal"),
                detail
            );
        }
    }
    out.push_str("\n## Adapters and cells that cannot run\n\n");
    for r in &m.releases {
        for (kind, hello) in &r.adapters {
            let _ = writeln!(out, "- {} `{kind}`: {hello}", r.name);
        }
    }
    for f in &m.findings {
        for (release, c) in &f.cells {
            if let Cell::CannotRun { reason } = c {
                let _ = writeln!(out, "- {} on {release}: {reason}", f.id);
            }
        }
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html(m: &Matrix) -> String {
    let mut out = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>compactsim version matrix</title>\
         <style>body{{font-family:sans-serif}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px}}\
         .caught{{background:#f4b4b4}}.masked{{background:#f7dc9c}}.other{{background:#d8d0f0}}.clean{{background:#c6ecc6}}.cannot{{background:#ddd}}</style>\
         </head><body><h1>Version matrix</h1><p>compactsim matrix {} — seed {}, {} cases × {} passes per default suite.</p>\
         <table><tr><th>release</th>",
        esc(&m.file), m.seed, m.cases, m.passes
    );
    for f in &m.findings {
        let _ = write!(
            out,
            "<th title=\"{}\">{}</th>",
            esc(&f.invariant),
            esc(&f.id)
        );
    }
    out.push_str("</tr>");
    for (i, r) in m.releases.iter().enumerate() {
        let _ = write!(out, "<tr><td>{}</td>", esc(&r.name));
        for f in &m.findings {
            let c = &f.cells[i].1;
            let class = match c {
                Cell::CannotRun { .. } => "cannot",
                Cell::OtherWitness { .. } => "other",
                _ => c.word(),
            };
            let _ = write!(
                out,
                "<td class=\"{class}\" title=\"{}\">{}</td>",
                esc(&c.text()),
                mark(c)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table><h2>Bisect</h2><table><tr><th>finding</th><th>invariant</th><th>first affected</th><th>last affected</th><th>answer</th></tr>");
    for f in &m.findings {
        let b = &f.bisect;
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&f.id),
            esc(&f.invariant),
            esc(b.first_affected.as_deref().unwrap_or("—")),
            esc(b.last_affected.as_deref().unwrap_or("—")),
            esc(&b.answer)
        );
    }
    out.push_str("</table></body></html>\n");
    out
}
