//! The chart of a run: MB/s against request size, as SVG, one panel per source (and per access
//! pattern and number of tasks, when the run varies them).

use std::path::Path;

use crate::plan::ReaderKind;
use crate::report::{Report, SourceReport};
use crate::workload::Pattern;

/// The size of one panel, in pixels.
const PANEL: (u32, u32) = (760, 520);

/// Draws `report` into the SVG file `path`: one panel per source (and per pattern and number of
/// tasks), each with MB/s against request size on log scales, one line per (reader, window):
/// one colour per reader, the thinner, lighter line for the smaller window; hollow points for
/// partial cells; a dashed black line for the source's limit row (1 MiB reads straight from the
/// source).
///
/// # Errors
///
/// If no cell read any byte (nothing to draw), or if drawing or writing the file fails.
pub(crate) fn write_svg(report: &Report, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;

    let panels = panels(report);
    if panels.is_empty() {
        return Err("no cell read any byte".into());
    }
    let columns = panels.len().min(2) as u32;
    let rows = (panels.len() as u32).div_ceil(columns);
    let root = SVGBackend::new(path, (PANEL.0 * columns, PANEL.1 * rows)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((rows as usize, columns as usize));
    for (panel, area) in panels.iter().zip(areas) {
        draw_panel(report, panel, &area)?;
    }
    root.present()?;
    Ok(())
}

/// One panel: a source's cells of one pattern and number of tasks.
struct Panel<'a> {
    source: &'a SourceReport,
    pattern: Pattern,
    tasks: usize,
}

fn panels(report: &Report) -> Vec<Panel<'_>> {
    let mut panels: Vec<Panel<'_>> = Vec::new();
    for source in &report.sources {
        for r in source.cells.iter().filter(|r| r.mb_per_second() > 0.0) {
            let known = panels.iter().any(|p| {
                std::ptr::eq(p.source, source)
                    && p.pattern == r.cell.pattern
                    && p.tasks == r.cell.tasks
            });
            if !known {
                panels.push(Panel {
                    source,
                    pattern: r.cell.pattern,
                    tasks: r.cell.tasks,
                });
            }
        }
    }
    panels
}

fn draw_panel<DB: plotters::prelude::DrawingBackend>(
    report: &Report,
    panel: &Panel<'_>,
    area: &plotters::drawing::DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    use plotters::prelude::*;

    struct Series {
        label: String,
        color: RGBAColor,
        width: u32,
        points: Vec<(f64, f64, bool)>,
    }
    let source = panel.source;
    let mut series: Vec<Series> = Vec::new();
    let cells = source.cells.iter().filter(|r| {
        r.mb_per_second() > 0.0 && r.cell.pattern == panel.pattern && r.cell.tasks == panel.tasks
    });
    for r in cells {
        let label = match r.cell.capacity {
            Some(c) => format!("{} ({c} B window)", r.cell.reader_label()),
            None => r.cell.reader_label(),
        };
        let point = (r.cell.read_size as f64, r.mb_per_second(), r.complete);
        if let Some(s) = series.iter_mut().find(|s| s.label == label) {
            s.points.push(point);
            continue;
        }
        let base = match r.cell.reader {
            ReaderKind::Buffered => RGBColor(31, 119, 180),
            ReaderKind::BufReader => RGBColor(255, 127, 14),
            ReaderKind::Unbuffered => RGBColor(214, 39, 40),
            ReaderKind::ByteLoop => RGBColor(44, 160, 44),
            ReaderKind::BufferedReadAhead => RGBColor(148, 103, 189),
            ReaderKind::Cached => RGBColor(140, 86, 75),
            ReaderKind::OpendalReader => RGBColor(23, 190, 207),
            ReaderKind::OpendalReaderTuned => RGBColor(188, 189, 34),
            ReaderKind::ObjectStoreBufReader => RGBColor(227, 119, 194),
        };
        // Windows smaller than the largest are drawn lighter and thinner.
        let largest =
            r.cell.capacity == report.capacities.last().copied() || r.cell.capacity.is_none();
        let (color, width) = if largest {
            (base.to_rgba(), 3)
        } else {
            (base.mix(0.55), 2)
        };
        series.push(Series {
            label,
            color,
            width,
            points: vec![point],
        });
    }
    let limit = source.limit.mb_per_second();
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max, mut y_min, mut y_max) = all.fold(
        (f64::MAX, f64::MIN, f64::MAX, f64::MIN),
        |(a, b, c, d), &(x, y, _)| (a.min(x), b.max(x), c.min(y), d.max(y)),
    );
    if limit > 0.0 {
        (y_min, y_max) = (y_min.min(limit), y_max.max(limit));
    }
    if x_min == x_max {
        (x_min, x_max) = (x_min / 2.0, x_max * 2.0);
    }

    let mut caption = format!(
        "{}: {} ({} bytes)",
        source.name, source.label, source.file_len
    );
    if panel.pattern != Pattern::Sequential {
        caption.push_str(&format!(", {} reads", panel.pattern));
    }
    if panel.tasks > 1 {
        caption.push_str(&format!(", {} tasks", panel.tasks));
    }
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (x_min / 1.5..x_max * 1.5).log_scale(),
            (y_min / 2.0..y_max * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("request size (bytes)")
        .y_desc("MB/s (10^6 bytes/s)")
        .x_label_formatter(&|x| tick(*x))
        .y_label_formatter(&|y| tick(*y))
        .draw()?;
    if limit > 0.0 {
        chart
            .draw_series(DashedLineSeries::new(
                [(x_min / 1.5, limit), (x_max * 1.5, limit)],
                8,
                5,
                BLACK.stroke_width(2),
            ))?
            .label("limit (1 MiB reads straight from the source)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    }
    for s in &series {
        let (color, width) = (s.color, s.width);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|&(x, y, _)| (x, y)),
                color.stroke_width(width),
            ))?
            .label(s.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(width))
            });
        chart.draw_series(s.points.iter().map(|&(x, y, complete)| {
            let style = if complete {
                color.filled()
            } else {
                color.stroke_width(2)
            };
            Circle::new((x, y), 4, style)
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", 11))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    if series.iter().any(|s| s.points.iter().any(|p| !p.2)) {
        area.draw(&Text::new(
            "hollow points: partial cells (time budget ran out)",
            (80, 30),
            ("sans-serif", 12),
        ))?;
    }
    Ok(())
}

/// An axis label: `1`, `100`, `0.1`, `0.001`, without float noise.
fn tick(v: f64) -> String {
    let decimals = if v >= 1.0 {
        0
    } else {
        (-v.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}
