//! SVG figures for the `reproduce` experiments (plotters, SVG backend: no system fonts).

use anyhow::{Context, Result};
use plotters::prelude::*;
use std::path::Path;

/// How a series is drawn.
#[derive(Clone, Debug)]
pub enum Style {
    /// Connected line.
    Line,
    /// Unconnected markers.
    Points,
    /// Shaded band between `lower` and `upper` (given as the points' y; `upper` here).
    Band {
        /// Upper edge, same x as the series' points.
        upper: Vec<f64>,
    },
}

/// One named series of (x, y) points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Data.
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub style: Style,
}

/// A single 2-D chart.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Caption.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Series to draw, in order.
    pub series: Vec<Series>,
}

fn extent(fig: &Figure) -> ((f64, f64), (f64, f64)) {
    let mut xs = (f64::INFINITY, f64::NEG_INFINITY);
    let mut ys = (f64::INFINITY, f64::NEG_INFINITY);
    for s in &fig.series {
        for &(x, y) in &s.points {
            if x.is_finite() && y.is_finite() {
                xs = (xs.0.min(x), xs.1.max(x));
                ys = (ys.0.min(y), ys.1.max(y));
            }
        }
        if let Style::Band { upper } = &s.style {
            for &u in upper.iter().filter(|u| u.is_finite()) {
                ys = (ys.0.min(u), ys.1.max(u));
            }
        }
    }
    let pad = |(a, b): (f64, f64)| {
        if !a.is_finite() {
            (0.0, 1.0)
        } else if a == b {
            (a - 0.5, b + 0.5)
        } else {
            let p = 0.05 * (b - a);
            (a - p, b + p)
        }
    };
    (pad(xs), pad(ys))
}

/// Draw `fig` as an SVG file at `path`.
pub fn write_svg(fig: &Figure, path: &Path) -> Result<()> {
    let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
    draw(fig, &root).with_context(|| format!("drawing {}", path.display()))?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn draw<DB: DrawingBackend>(
    fig: &Figure,
    root: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let ((x0, x1), (y0, y1)) = extent(fig);
    let mut chart = ChartBuilder::on(root)
        .caption(&fig.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    chart
        .configure_mesh()
        .x_desc(&fig.x_label)
        .y_desc(&fig.y_label)
        .draw()
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    for (i, s) in fig.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        match &s.style {
            Style::Line => {
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().copied(),
                        color.stroke_width(2),
                    ))
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?
                    .label(&s.name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            }
            Style::Points => {
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                    )
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?
                    .label(&s.name)
                    .legend(move |(x, y)| Circle::new((x + 9, y), 3, color.filled()));
            }
            Style::Band { upper } => {
                let mut poly: Vec<(f64, f64)> = s.points.clone();
                poly.extend(s.points.iter().zip(upper).rev().map(|(&(x, _), &u)| (x, u)));
                let fill = color.mix(0.2);
                chart
                    .draw_series(std::iter::once(Polygon::new(poly, fill.filled())))
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?
                    .label(&s.name)
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 4), (x + 18, y + 4)], fill.filled())
                    });
            }
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    Ok(())
}
