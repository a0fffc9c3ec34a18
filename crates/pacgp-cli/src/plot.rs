//! SVG figures for the `reproduce` experiments (plotters, SVG backend: no system fonts).

use anyhow::{Context, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
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

impl Series {
    /// A series drawn as a line through `points`.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
            style: Style::Line,
        }
    }

    /// A series drawn as markers at `points`.
    pub fn points(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
            style: Style::Points,
        }
    }
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

/// Width and height of the chart itself, in pixels (the legend is drawn to its right).
const CHART: (u32, u32) = (800, 520);
/// Legend font size in pixels, and the width allowed per character (an upper estimate for
/// sans-serif: the SVG backend has no font metrics to measure with).
const LEGEND_FONT: u32 = 13;
const LEGEND_CHAR_PX: u32 = 6;

/// Width of the legend column: room for the longest series name after its glyph.
fn legend_width(fig: &Figure) -> u32 {
    let longest = fig.series.iter().map(|s| s.name.chars().count()).max();
    longest.map_or(0, |c| 48 + LEGEND_CHAR_PX * c as u32)
}

/// Draw `fig` as an SVG file at `path`: the chart, and its legend in a column to the right of
/// the plot area, where it can cover no data.
pub fn write_svg(fig: &Figure, path: &Path) -> Result<()> {
    let width = CHART.0 + legend_width(fig);
    let root = SVGBackend::new(path, (width, CHART.1)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let (chart, legend) = root.split_horizontally(CHART.0);
    draw(fig, &chart).with_context(|| format!("drawing {}", path.display()))?;
    draw_legend(fig, &legend).with_context(|| format!("drawing {}", path.display()))?;
    root.present()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The colour of series `i` (the same in the chart and the legend).
fn color_of(i: usize) -> RGBAColor {
    Palette99::pick(i).to_rgba()
}

/// One legend row per series, top-aligned with the plot area: the series' glyph, then its name.
fn draw_legend<DB: DrawingBackend>(
    fig: &Figure,
    area: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("{e:?}");
    let font = ("sans-serif", LEGEND_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (x, top, row) = (8, 56, LEGEND_FONT as i32 + 9);
    for (i, s) in fig.series.iter().enumerate() {
        let color = color_of(i);
        let y = top + row * i as i32;
        match &s.style {
            Style::Line => area
                .draw(&PathElement::new(
                    vec![(x, y), (x + 22, y)],
                    color.stroke_width(2),
                ))
                .map_err(err)?,
            Style::Points => area
                .draw(&Circle::new((x + 11, y), 3, color.filled()))
                .map_err(err)?,
            Style::Band { .. } => area
                .draw(&Rectangle::new(
                    [(x, y - 5), (x + 22, y + 5)],
                    color.mix(0.2).filled(),
                ))
                .map_err(err)?,
        }
        let label = Text::new(s.name.clone(), (x + 30, y), font.clone());
        area.draw(&label).map_err(err)?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    fig: &Figure,
    root: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
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
        let color = color_of(i);
        match &s.style {
            Style::Line => {
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().copied(),
                        color.stroke_width(2),
                    ))
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            }
            Style::Points => {
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                    )
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            }
            Style::Band { upper } => {
                let mut poly: Vec<(f64, f64)> = s.points.clone();
                poly.extend(s.points.iter().zip(upper).rev().map(|(&(x, _), &u)| (x, u)));
                let fill = color.mix(0.2);
                chart
                    .draw_series(std::iter::once(Polygon::new(poly, fill.filled())))
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers after each `key="` in an SVG text, in order.
    fn attr(svg: &str, key: &str) -> Vec<f64> {
        svg.split(&format!(" {key}=\""))
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap().parse().unwrap())
            .collect()
    }

    /// Data that fills every corner of the plot (where an inside legend would sit) leaves the
    /// legend's names to the right of every data mark, and each name is written once.
    #[test]
    fn legend_is_drawn_beside_the_data_not_over_it() {
        let grid: Vec<(f64, f64)> = (0..21)
            .flat_map(|i| (0..21).map(move |j| (i as f64, j as f64)))
            .collect();
        let fig = Figure {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![
                Series::points("every grid point", grid.clone()),
                Series::line(
                    "a diagonal line",
                    (0..21).map(|i| (i as f64, i as f64)).collect(),
                ),
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.svg");
        write_svg(&fig, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        let cx = attr(&svg, "cx");
        // 441 data circles and one legend glyph.
        assert_eq!(cx.len(), grid.len() + 1);
        let data_right = cx[..grid.len()].iter().cloned().fold(f64::MIN, f64::max);
        assert!(data_right < f64::from(CHART.0));
        for name in ["every grid point", "a diagonal line"] {
            assert_eq!(svg.matches(name).count(), 1, "{name}");
            let before = &svg[..svg.find(name).unwrap()];
            let x = attr(&before[before.rfind("<text").unwrap()..], "x")[0];
            assert!(
                x > data_right + 20.0,
                "{name} at x = {x}, data up to {data_right}"
            );
        }
        let width = attr(&svg, "width")[0];
        assert!(width >= f64::from(CHART.0 + legend_width(&fig)) - 0.5);
    }
}
