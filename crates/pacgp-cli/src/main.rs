//! `pacgp` command-line tool.
mod plot;
fn main() {
    let fig = plot::Figure {
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        series: vec![plot::Series {
            name: "a".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
            style: plot::Style::Line,
        }],
    };
    plot::write_svg(&fig, std::path::Path::new("/tmp/t.svg")).unwrap();
}
