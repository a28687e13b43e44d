//! SVG line charts of a study (plotters, SVG backend, no font libraries): one line per
//! strategy over virtual time, axes labelled with units, a legend.

use super::schema::{StudyReport, TurnRow};
use plotters::prelude::*;

/// Pixel size of every chart.
pub const CHART_SIZE_PX: (u32, u32) = (900, 420);
/// Line colours, one per strategy in study order (cycled past the end).
const PALETTE: [RGBColor; 6] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
];

/// One chart: its file, title, y axis and the measure it plots.
#[derive(Clone, Copy)]
pub struct Chart {
    pub file: &'static str,
    pub title: &'static str,
    pub y_desc: &'static str,
    pub value: fn(&TurnRow) -> f64,
}

/// The charts every study writes.
pub const CHARTS: [Chart; 4] = [
    Chart {
        file: "occupancy.svg",
        title: "Context occupancy",
        y_desc: "occupancy (% of batch trigger)",
        value: |t| t.occupancy_pct,
    },
    Chart {
        file: "cost.svg",
        title: "Cumulative provider cost",
        y_desc: "cost (USD, cumulative)",
        value: |t| t.cost_usd_total,
    },
    Chart {
        file: "retention.svg",
        title: "Facts retained",
        y_desc: "facts in context (% of introduced)",
        value: |t| t.facts_retained_pct,
    },
    Chart {
        file: "stalls.svg",
        title: "Compaction wait per turn",
        y_desc: "wait (s: stall + micro finalize)",
        value: |t| t.stall_s + t.finalize_s,
    },
];

/// The SVG text of `chart` for `report`, or plotters' error message.
pub fn render_chart(report: &StudyReport, chart: Chart) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, CHART_SIZE_PX).into_drawing_area();
        draw(&root, report, chart).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn hours(t: &TurnRow) -> f64 {
    t.clock_s / 3600.0
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    report: &StudyReport,
    chart: Chart,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let rows = || report.strategies.iter().flat_map(|s| s.turns.iter());
    let x_max = rows().map(hours).fold(0.0, f64::max).max(0.01);
    let y_max = rows().map(chart.value).fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
    let mut ctx = ChartBuilder::on(root)
        .caption(
            format!("{} — {}", chart.title, report.name),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    ctx.configure_mesh()
        .x_desc("virtual session time (h)")
        .y_desc(chart.y_desc)
        .axis_desc_style(("sans-serif", 15))
        .draw()?;
    for (i, s) in report.strategies.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let points = s.turns.iter().map(|t| (hours(t), (chart.value)(t)));
        ctx.draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(3)));
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()?;
    Ok(())
}
