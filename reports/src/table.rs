//! Column-aligned tables, rendered as plain text (terminal) or Markdown.

/// Horizontal alignment of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// Spaces between two plain-text columns.
const COLUMN_GAP: &str = "  ";

/// Narrowest Markdown column: three delimiter dashes, which every renderer accepts.
const MD_DELIMITER_WIDTH_MIN: usize = 3;

/// A table of already formatted cells.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    titles: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            titles: columns.iter().map(|(t, _)| (*t).to_string()).collect(),
            aligns: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; panics if its width differs from the title row (a programming
    /// error in this crate, never a data error).
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.titles.len(), "table row width");
        self.rows.push(cells);
    }

    fn widths(&self, cell: impl Fn(&str) -> String) -> Vec<usize> {
        let mut widths: Vec<usize> = self.titles.iter().map(|t| width(&cell(t))).collect();
        for row in &self.rows {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(&cell(c)));
            }
        }
        widths
    }

    /// Plain text: a title line, a dash line, one line per row; no trailing spaces.
    pub(crate) fn render_plain(&self) -> String {
        let widths = self.widths(|c| c.to_string());
        let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        let mut out = String::new();
        for line in std::iter::once(&self.titles)
            .chain(std::iter::once(&dashes))
            .chain(&self.rows)
        {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .zip(&self.aligns)
                .map(|((c, w), a)| pad(c, *w, *a))
                .collect();
            out.push_str(cells.join(COLUMN_GAP).trim_end());
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured Markdown table with escaped, padded cells.
    pub(crate) fn render_markdown(&self) -> String {
        let widths: Vec<usize> = self
            .widths(md_cell)
            .into_iter()
            .map(|w| w.max(MD_DELIMITER_WIDTH_MIN))
            .collect();
        let mut out = String::new();
        let mut push_line = |cells: Vec<String>| {
            out.push_str("| ");
            out.push_str(&cells.join(" | "));
            out.push_str(" |\n");
        };
        let titles = self.titles.iter().zip(&widths).zip(&self.aligns);
        push_line(titles.map(|((t, w), a)| pad(&md_cell(t), *w, *a)).collect());
        push_line(
            widths
                .iter()
                .zip(&self.aligns)
                .map(|(w, a)| match a {
                    Align::Left => "-".repeat(*w),
                    Align::Right => format!("{}:", "-".repeat(*w - 1)),
                })
                .collect(),
        );
        for row in &self.rows {
            let cells = row.iter().zip(&widths).zip(&self.aligns);
            push_line(cells.map(|((c, w), a)| pad(&md_cell(c), *w, *a)).collect());
        }
        out
    }
}

impl Table {
    /// An HTML `<table>` with escaped cells; right-aligned columns get `class="num"`.
    pub(crate) fn render_html(&self) -> String {
        let class = |a: &Align| match a {
            Align::Left => "",
            Align::Right => " class=\"num\"",
        };
        let mut out = String::from("<table>\n<thead><tr>");
        for (t, a) in self.titles.iter().zip(&self.aligns) {
            out.push_str(&format!("<th{}>{}</th>", class(a), html_escape(t)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, a) in row.iter().zip(&self.aligns) {
                out.push_str(&format!("<td{}>{}</td>", class(a), html_escape(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

/// Escapes text for HTML element content and attribute values.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(s: &str, w: usize, align: Align) -> String {
    match align {
        Align::Left => format!("{s:<w$}"),
        Align::Right => format!("{s:>w$}"),
    }
}

/// Escapes a value for one Markdown table cell: no pipes, no line breaks.
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(&[("name", Align::Left), ("n", Align::Right)]);
        t.row(vec!["a|b".into(), "7".into()]);
        t.row(vec!["long-name".into(), "12345".into()]);
        t
    }

    #[test]
    fn plain_columns_are_aligned_and_numbers_right_aligned() {
        let text = sample().render_plain();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "name           n");
        assert_eq!(lines[1], "---------  -----");
        assert_eq!(lines[2], "a|b            7");
        assert_eq!(lines[3], "long-name  12345");
    }

    #[test]
    fn html_escapes_cells_and_marks_numeric_columns() {
        let mut t = sample();
        t.row(vec!["<b>&\"".into(), "1".into()]);
        let html = t.render_html();
        assert!(html.contains("<td>&lt;b&gt;&amp;&quot;</td><td class=\"num\">1</td>"));
        assert!(html.contains("<th>name</th><th class=\"num\">n</th>"));
        assert!(!html.contains("<b>"));
    }

    #[test]
    fn markdown_escapes_pipes_and_marks_right_alignment() {
        let text = sample().render_markdown();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "| --------- | ----: |");
        assert_eq!(lines[2], "| a\\|b      |     7 |");
        assert!(lines
            .iter()
            .all(|l| l.starts_with("| ") && l.ends_with(" |")));
    }
}
