//! The chart of a run: MB/s against request size, as SVG.

use std::path::Path;

use crate::plan::ReaderKind;
use crate::report::Report;

/// Draws `report` into the SVG file `path`: MB/s against request size, log scales, one line per
/// (reader, window): one colour per reader, the thinner, lighter line for the smaller window;
/// hollow points for partial cells.
///
/// # Errors
///
/// If no cell read any byte (nothing to draw), or if drawing or writing the file fails.
pub fn write_svg(report: &Report, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;

    struct Series {
        label: String,
        color: RGBAColor,
        width: u32,
        points: Vec<(f64, f64, bool)>,
    }
    let mut series: Vec<Series> = Vec::new();
    for r in report.cells.iter().filter(|r| r.mb_per_second() > 0.0) {
        let label = match r.cell.capacity {
            Some(c) => format!("{} ({c} B window)", r.cell.reader.name()),
            None => r.cell.reader.name().to_string(),
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
    if series.is_empty() {
        return Err("no cell read any byte".into());
    }
    let all = series.iter().flat_map(|s| s.points.iter());
    let (x_min, x_max, y_min, y_max) = all.fold(
        (f64::MAX, f64::MIN, f64::MAX, f64::MIN),
        |(a, b, c, d), &(x, y, _)| (a.min(x), b.max(x), c.min(y), d.max(y)),
    );

    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Sequential reads of {} ({} bytes)",
                report.source, report.file_len
            ),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
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
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    if report.has_partial() {
        root.draw(&Text::new(
            "hollow points: partial cells (time budget ran out)",
            (90, 620),
            ("sans-serif", 13),
        ))?;
    }
    root.present()?;
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
