//! Small inline SVG charts written by hand: XHTML-compatible markup (every element closed,
//! text escaped), no fonts or scripts to fetch, classes styled by the page's inline CSS.

use crate::escape;

/// Width and height of a chart, in CSS pixels.
pub(crate) const SIZE: (f64, f64) = (520.0, 340.0);
/// Room for the axes' ticks and labels: left, right, top, bottom.
const MARGIN: (f64, f64, f64, f64) = (62.0, 16.0, 14.0, 46.0);

/// A chart under construction: data ranges mapped onto the plot area.
pub(crate) struct Chart {
    x: (f64, f64),
    y: (f64, f64),
    body: String,
}

impl Chart {
    /// A chart over the data ranges `x` and `y` (an empty or degenerate range is widened).
    pub(crate) fn new(x: (f64, f64), y: (f64, f64)) -> Self {
        Self {
            x: widen(x),
            y: widen(y),
            body: String::new(),
        }
    }

    /// Horizontal pixel of data x.
    pub(crate) fn px(&self, x: f64) -> f64 {
        let w = SIZE.0 - MARGIN.0 - MARGIN.1;
        MARGIN.0 + (x - self.x.0) / (self.x.1 - self.x.0) * w
    }

    /// Vertical pixel of data y (up is larger).
    pub(crate) fn py(&self, y: f64) -> f64 {
        let h = SIZE.1 - MARGIN.2 - MARGIN.3;
        MARGIN.2 + (1.0 - (y - self.y.0) / (self.y.1 - self.y.0)) * h
    }

    /// A straight line between two data points.
    pub(crate) fn line(&mut self, a: (f64, f64), b: (f64, f64), class: &str) {
        self.body.push_str(&format!(
            "<line class=\"{class}\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
            self.px(a.0),
            self.py(a.1),
            self.px(b.0),
            self.py(b.1)
        ));
    }

    /// A polyline through data points (non-finite points left out).
    pub(crate) fn polyline(&mut self, points: &[(f64, f64)], class: &str) {
        let coords: Vec<String> = points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", self.px(x), self.py(y)))
            .collect();
        self.body.push_str(&format!(
            "<polyline class=\"{class}\" points=\"{}\"/>",
            coords.join(" ")
        ));
    }

    /// A dot at a data point, radius in pixels, with a tooltip.
    pub(crate) fn dot(&mut self, at: (f64, f64), r: f64, class: &str, title: &str) {
        self.body.push_str(&format!(
            "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r:.1}\"><title>{}</title></circle>",
            self.px(at.0),
            self.py(at.1),
            escape(title)
        ));
    }

    /// The finished SVG: axes with ticks and labels, then the marks, under an accessible
    /// title.
    pub(crate) fn finish(self, title: &str, x_label: &str, y_label: &str) -> String {
        let mut s = open_svg(SIZE, title);
        s.push_str(&self.axes(x_label, y_label));
        s.push_str(&self.body);
        s.push_str("</svg>");
        s
    }

    fn axes(&self, x_label: &str, y_label: &str) -> String {
        let (left, bottom) = (MARGIN.0, SIZE.1 - MARGIN.3);
        let (right, top) = (SIZE.0 - MARGIN.1, MARGIN.2);
        let mut s = format!(
            "<rect class=\"frame\" x=\"{left:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
            right - left,
            bottom - top
        );
        for t in ticks(self.x) {
            let x = self.px(t);
            s.push_str(&format!(
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                bottom + 15.0,
                tick_text(t)
            ));
        }
        for t in ticks(self.y) {
            let y = self.py(t);
            s.push_str(&format!(
                "<line class=\"grid\" x1=\"{left:.1}\" y1=\"{y:.1}\" x2=\"{right:.1}\" y2=\"{y:.1}\"/><text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 6.0,
                y + 4.0,
                tick_text(t)
            ));
        }
        s.push_str(&format!(
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            (left + right) / 2.0,
            SIZE.1 - 8.0,
            escape(x_label)
        ));
        s.push_str(&format!(
            "<text class=\"label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            (top + bottom) / 2.0,
            escape(y_label)
        ));
        s
    }
}

/// The opening tag of an inline SVG of `size` with an accessible title.
pub(crate) fn open_svg(size: (f64, f64), title: &str) -> String {
    format!(
        "<svg role=\"img\" width=\"{:.0}\" height=\"{:.0}\" viewBox=\"0 0 {:.0} {:.0}\"><title>{}</title>",
        size.0,
        size.1,
        size.0,
        size.1,
        escape(title)
    )
}

/// One bar of a horizontal bar chart: its label, its segments (value, CSS class, tooltip)
/// laid end to end from 0, and the text after it.
pub(crate) struct Bar {
    pub(crate) label: String,
    pub(crate) segments: Vec<(f64, &'static str, String)>,
    pub(crate) value_text: String,
}

impl Bar {
    /// A bar of one segment `value` of CSS class `class`, its tooltip `what` and the value to
    /// four places, the value to four places after it.
    pub(crate) fn one(label: &str, value: f64, class: &'static str, what: &str) -> Self {
        Self {
            label: label.into(),
            segments: vec![(value, class, format!("{what} {value:.4}"))],
            value_text: format!("{value:.4}"),
        }
    }

    /// A certificate's bar: the risk on the sample, then the gap up to the bound (each a
    /// segment: value, CSS class, tooltip), and `≤ bound` after it.
    pub(crate) fn certificate(
        label: &str,
        risk: (f64, &'static str, String),
        gap: (f64, &'static str, String),
        bound: f64,
    ) -> Self {
        Self {
            label: label.into(),
            segments: vec![risk, gap],
            value_text: format!("≤ {bound:.4}"),
        }
    }
}

/// Horizontal bars on a common scale from 0 to `max`, one row each, with a label column on
/// the left and the value on the right; `marks` are vertical reference lines (value, label).
pub(crate) fn bars(title: &str, bars: &[Bar], max: f64, marks: &[(f64, String)]) -> String {
    let (label_w, value_w, row) = (300.0, 90.0, 26.0);
    let width = 860.0;
    let plot_w = width - label_w - value_w;
    let height = 40.0 + row * bars.len() as f64 + 18.0 * marks.len() as f64;
    let scale = |v: f64| label_w + (v.max(0.0) / max.max(f64::MIN_POSITIVE)).min(1.0) * plot_w;
    let mut s = open_svg((width, height), title);
    for (i, b) in bars.iter().enumerate() {
        let y = 10.0 + row * i as f64;
        s.push_str(&format!(
            "<text class=\"barlabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            label_w - 8.0,
            y + 14.0,
            escape(&b.label)
        ));
        let mut from = 0.0;
        for (v, class, tip) in &b.segments {
            if !v.is_finite() {
                continue;
            }
            let (x0, x1) = (scale(from), scale(from + v));
            s.push_str(&format!(
                "<rect class=\"{class}\" x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"18\"><title>{}</title></rect>",
                (x1 - x0).max(0.0),
                escape(tip)
            ));
            from += v;
        }
        s.push_str(&format!(
            "<text class=\"barvalue\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            scale(from) + 6.0,
            y + 14.0,
            escape(&b.value_text)
        ));
    }
    let bottom = 10.0 + row * bars.len() as f64;
    s.push_str(&format!(
        "<line class=\"axis\" x1=\"{label_w:.1}\" y1=\"6\" x2=\"{label_w:.1}\" y2=\"{bottom:.1}\"/>"
    ));
    // The scale's ends, under the bars: 0 and the common maximum.
    for (x, v) in [(label_w, 0.0), (label_w + plot_w, max)] {
        s.push_str(&format!(
            "<line class=\"axis\" x1=\"{x:.1}\" y1=\"{bottom:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 4.0,
            bottom + 14.0,
            tick_text(v)
        ));
    }
    for (k, (v, label)) in marks.iter().enumerate() {
        let x = scale(*v);
        s.push_str(&format!(
            "<line class=\"mark\" x1=\"{x:.1}\" y1=\"6\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/><text class=\"marklabel\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 30.0 + 18.0 * k as f64,
            escape(label)
        ));
    }
    s.push_str("</svg>");
    s
}

/// One square of a heat map: its shade in [0, 1], the text in it and its tooltip.
pub(crate) struct Cell {
    pub(crate) shade: f64,
    pub(crate) text: String,
    pub(crate) tip: String,
}

/// A heat map of `cells` (row-major), rows labelled on the left under `row_axis`, columns
/// labelled on top (slanted, so long names fit) under `column_axis`; a square's fill opacity
/// is its shade, its text white on a dark square.
pub(crate) fn heatmap(
    title: &str,
    labels: (&[String], &[String]),
    axes: (&str, &str),
    cells: &[Vec<Cell>],
) -> String {
    let (rows, columns) = labels;
    let side = 48.0;
    let longest = rows.iter().chain(columns).map(|l| l.chars().count()).max();
    let text_w = (7.0 * longest.unwrap_or(1) as f64 + 12.0).min(240.0);
    let (left, top) = (24.0 + text_w, 30.0 + 0.65 * text_w);
    let width = left + side * columns.len() as f64 + 0.8 * text_w;
    let height = top + side * rows.len() as f64 + 12.0;
    let mut s = open_svg((width, height), title);
    for (j, name) in columns.iter().enumerate() {
        let x = left + side * (j as f64 + 0.5);
        s.push_str(&format!(
            "<text class=\"barlabel\" transform=\"translate({x:.1} {:.1}) rotate(-40)\">{}</text>",
            top - 6.0,
            escape(name)
        ));
    }
    for (i, name) in rows.iter().enumerate() {
        let y = top + side * i as f64;
        s.push_str(&format!(
            "<text class=\"barlabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + side / 2.0 + 4.0,
            escape(name)
        ));
        for (j, c) in cells[i].iter().enumerate() {
            let x = left + side * j as f64;
            s.push_str(&format!(
                "<rect class=\"cell\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{side:.1}\" height=\"{side:.1}\" fill-opacity=\"{:.3}\"><title>{}</title></rect><text class=\"{}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                c.shade.clamp(0.0, 1.0),
                escape(&c.tip),
                if c.shade > 0.55 { "count dark" } else { "count" },
                x + side / 2.0,
                y + side / 2.0 + 4.0,
                escape(&c.text)
            ));
        }
    }
    s.push_str(&format!(
        "<rect class=\"frame\" x=\"{left:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
        side * columns.len() as f64,
        side * rows.len() as f64
    ));
    s.push_str(&format!(
        "<text class=\"label\" x=\"{:.1}\" y=\"14\" text-anchor=\"middle\">{}</text>",
        left + side * columns.len() as f64 / 2.0,
        escape(axes.1)
    ));
    s.push_str(&format!(
        "<text class=\"label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        top + side * rows.len() as f64 / 2.0,
        escape(axes.0)
    ));
    s.push_str("</svg>");
    s
}

/// A range with room around it: a point becomes a unit interval, nothing becomes [0, 1].
fn widen((a, b): (f64, f64)) -> (f64, f64) {
    if !(a.is_finite() && b.is_finite()) || a > b {
        (0.0, 1.0)
    } else if a == b {
        (a - 0.5, b + 0.5)
    } else {
        (a, b)
    }
}

/// About five round tick values inside the range (steps of 1, 2 or 5 times a power of ten).
fn ticks((a, b): (f64, f64)) -> Vec<f64> {
    let raw = (b - a) / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    let first = (a / step).ceil() as i64;
    let last = (b / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick's label: up to 3 decimals, no trailing zeros.
fn tick_text(t: f64) -> String {
    let s = format!("{t:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        assert_eq!(
            ticks((0.0, 1.0)),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        let t = ticks((3.7, 48.2));
        assert_eq!(t, vec![10.0, 20.0, 30.0, 40.0]);
        assert_eq!(tick_text(0.6000000000000001), "0.6");
        assert_eq!(tick_text(-0.0), "0");
    }

    #[test]
    fn chart_maps_the_range_onto_the_plot_area() {
        let c = Chart::new((0.0, 2.0), (5.0, 5.0));
        assert_eq!(c.px(0.0), MARGIN.0);
        assert_eq!(c.px(2.0), SIZE.0 - MARGIN.1);
        // A degenerate y range is widened to a unit interval around it.
        assert_eq!(c.py(5.5), MARGIN.2);
        assert_eq!(c.py(4.5), SIZE.1 - MARGIN.3);
    }

    #[test]
    fn heatmap_has_a_square_per_cell_and_escapes_its_labels() {
        let labels = ["a<b".to_string(), "c".to_string()];
        let cell = |shade: f64, text: &str| Cell {
            shade,
            text: text.into(),
            tip: format!("tip {text}"),
        };
        let cells = vec![
            vec![cell(0.75, "3"), cell(0.25, "1")],
            vec![cell(0.0, "0"), cell(1.5, "2")],
        ];
        let s = heatmap("t", (&labels, &labels), ("rows", "columns"), &cells);
        assert_eq!(s.matches("<rect class=\"cell\"").count(), 4);
        assert_eq!(s.matches(">a&lt;b</text>").count(), 2);
        assert!(!s.contains("a<b"));
        // A shade above 1 is drawn as 1; the text is white on the dark squares only.
        assert!(s.contains("fill-opacity=\"1.000\""));
        assert_eq!(s.matches("class=\"count dark\"").count(), 2);
        assert_eq!(s.matches("class=\"count\"").count(), 2);
    }
}
