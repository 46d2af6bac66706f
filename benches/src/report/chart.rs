//! The comparison charts of RESULTS.md (plotters, SVG): ours and the
//! original's published figures on one chart; hollow markers are points not
//! judgeable, dashed lines the original's, dotted grey lines references such
//! as the 50 ms tick. (The loadgen's own `--plot` draws each run alone.)

use super::verdict::p95;
use super::{Report, ReportError};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend's text.
    pub label: String,
    /// Its colour.
    pub color: RGBColor,
    /// (x, y, judgeable) points.
    pub points: Vec<(f64, f64, bool)>,
    /// Dashed: the original's figures.
    pub dashed: bool,
}

impl Series {
    fn new(label: &str, color: RGBColor, points: Vec<(f64, f64, bool)>, dashed: bool) -> Series {
        Series { label: label.into(), color, points, dashed }
    }
}

/// Where a chart's legend sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Legend {
    /// The upper left corner.
    Top,
    /// The lower left corner.
    Bottom,
}

/// A chart's words.
#[derive(Clone, Copy, Debug)]
pub struct Labels<'a> {
    /// Above the chart.
    pub title: &'a str,
    /// Under the x axis.
    pub x: &'a str,
    /// Beside the y axis.
    pub y: &'a str,
}

const GREY: RGBColor = RGBColor(0x88, 0x88, 0x88);
const LIGHT_GREY: RGBColor = RGBColor(0xbb, 0xbb, 0xbb);
const REF_GREY: RGBColor = RGBColor(0x66, 0x66, 0x66);
const BLUE_1: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const RED_1: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const PINK_1: RGBColor = RGBColor(0xff, 0x98, 0x96);

/// A 1, 2 or 5 × 10^k step giving about six intervals over `span`.
fn nice_step(span: f64) -> f64 {
    let raw = if span > 0.0 { span / 6.0 } else { 1.0 };
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag)
}

/// Draws `series` with reference lines `refs` (y, label) to `path`; false
/// (nothing written) when there is no point.
///
/// Errors: drawing or writing failed.
pub fn line_chart(
    path: &Path,
    labels: Labels<'_>,
    series: &[Series],
    refs: &[(f64, &str)],
    legend: Legend,
) -> Result<bool, ReportError> {
    let points: Vec<&(f64, f64, bool)> = series.iter().flat_map(|s| &s.points).collect();
    if points.is_empty() {
        return Ok(false);
    }
    let err = |e: &dyn std::fmt::Debug| ReportError::Write { path: path.to_owned(), detail: format!("{e:?}") };
    let x_max = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let y_max = points.iter().map(|p| p.1).chain(refs.iter().map(|r| r.0)).fold(0.0, f64::max) * 1.1;
    let (xs, ys) = (nice_step(x_max), nice_step(y_max));
    let (x_max, y_max) = ((x_max / xs).ceil() * xs, (y_max / ys).ceil() * ys);
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(labels.title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(labels.x)
        .y_desc(labels.y)
        .x_labels(((x_max / xs).round() as usize) + 1)
        .y_labels(((y_max / ys).round() as usize) + 1)
        .x_label_formatter(&|x| fmt_axis(*x))
        .y_label_formatter(&|y| fmt_axis(*y))
        .light_line_style(WHITE)
        .draw()
        .map_err(|e| err(&e))?;
    for (y, label) in refs {
        let style = REF_GREY.stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new([(0.0, *y), (x_max, *y)], 2, 3, style))
            .map_err(|e| err(&e))?
            .label(*label)
            .legend(move |(x, y)| DashedPathElement::new([(x, y), (x + 28, y)], 2, 3, style));
    }
    for s in series.iter().filter(|s| !s.points.is_empty()) {
        draw(&mut chart, s).map_err(|e| err(&e))?;
    }
    chart
        .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
        .map_err(|e| err(&e))?
        .label("hollow marker: not judgeable")
        .legend(|(x, y)| Circle::new((x + 14, y), 4, REF_GREY.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(match legend {
            Legend::Top => SeriesLabelPosition::UpperLeft,
            Legend::Bottom => SeriesLabelPosition::LowerLeft,
        })
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(true)
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One series: its line (dashed for the original's), a marker a point
/// (hollow when not judgeable), its legend entry.
fn draw(chart: &mut Chart<'_, '_>, s: &Series) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let mut line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (color, style) = (s.color, s.color.stroke_width(2));
    if s.dashed {
        chart
            .draw_series(DashedLineSeries::new(line, 6, 4, style))?
            .label(s.label.as_str())
            .legend(move |(x, y)| DashedPathElement::new([(x, y), (x + 28, y)], 6, 4, style));
    } else {
        chart
            .draw_series(LineSeries::new(line, style))?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 28, y)], style));
    }
    chart.draw_series(s.points.iter().map(|&(x, y, ok)| {
        let fill = if ok { color.filled() } else { WHITE.filled() };
        EmptyElement::at((x, y)) + Circle::new((0, 0), 5, fill) + Circle::new((0, 0), 5, color.stroke_width(2))
    }))?;
    Ok(())
}

/// An axis label: whole numbers with separators from 10 up, else as is.
fn fmt_axis(v: f64) -> String {
    if v.abs() >= 10.0 || v == 0.0 {
        super::fmt::fixed(v, 0)
    } else {
        super::fmt::general(v)
    }
}

impl Report {
    /// The three comparison charts, into `dir`.
    pub(super) fn charts(&self, dir: &Path) -> Result<(), ReportError> {
        let file = |name: &str| -> PathBuf { dir.join(name) };
        let judged = |connected: usize, y: Option<f64>, judgeable: bool| y.map(|y| (connected as f64, y, judgeable));
        let orig = &self.raw.original;
        line_chart(
            &file("gap-vs-original.svg"),
            Labels { title: "snapshot gap p95 against players", x: "players", y: "snapshot gap p95, ms" },
            &[
                Series::new(
                    "original: two c7a.large (AWS)",
                    GREY,
                    orig.gap_p95_ms.rows.iter().map(|r| (r.players as f64, r.p95_ms, r.judgeable)).collect(),
                    true,
                ),
                Series::new(
                    "ours: one shard",
                    BLUE_1,
                    self.raw
                        .one
                        .iter()
                        .filter_map(|(s, _)| {
                            let m = &s.measured;
                            judged(m.connected, p95(&m.snapshot_gap_ms), m.judgeable)
                        })
                        .collect(),
                    false,
                ),
                Series::new(
                    "ours: two shards + Redis, own",
                    RED_1,
                    self.raw
                        .two
                        .iter()
                        .filter_map(|(s, _)| {
                            let m = &s.measured;
                            judged(m.connected, p95(&m.snapshot_gap_ms), m.judgeable)
                        })
                        .collect(),
                    false,
                ),
                Series::new(
                    "ours: two shards + Redis, relayed",
                    PINK_1,
                    self.raw
                        .two
                        .iter()
                        .filter_map(|(s, _)| {
                            let m = &s.measured;
                            judged(m.connected, p95(&m.relayed_snapshot_gap_ms), m.judgeable)
                        })
                        .collect(),
                    false,
                ),
            ],
            &[(50.0, "one tick, 50 ms")],
            Legend::Top,
        )?;
        line_chart(
            &file("ticks-vs-original.svg"),
            Labels { title: "ticks per second, one process", x: "players", y: "ticks per second" },
            &[
                Series::new(
                    "original: loopback TCP (desktop)",
                    GREY,
                    orig.ticks_per_s.rows.iter().map(|r| (r.players as f64, r.loopback_tcp, true)).collect(),
                    true,
                ),
                Series::new(
                    "original: Unix socket (desktop)",
                    LIGHT_GREY,
                    orig.ticks_per_s.rows.iter().map(|r| (r.players as f64, r.unix_socket, true)).collect(),
                    true,
                ),
                Series::new(
                    "ours: loopback TCP, one shard",
                    BLUE_1,
                    self.raw
                        .one
                        .iter()
                        .filter_map(|(s, w)| {
                            let ticks = w.as_ref()?.shards.get("a")?.ticks_per_s;
                            Some((s.players as f64, ticks, s.measured.judgeable))
                        })
                        .collect(),
                    false,
                ),
            ],
            &[(20.0, "the tick rate, 20 a second")],
            Legend::Bottom,
        )?;
        let cpu = |steps: &[super::load::Sampled<mino_loadgen::report::StepReport>]| -> Vec<(f64, f64, bool)> {
            steps
                .iter()
                .filter_map(|(s, _)| {
                    let m = &s.measured;
                    let total = m.server.as_ref()?.cpu_per_frame_us.total;
                    (total != 0.0).then_some((m.connected as f64, total, m.judgeable))
                })
                .collect()
        };
        line_chart(
            &file("cpu-per-frame-vs-original.svg"),
            Labels { title: "server CPU per delivered frame", x: "players", y: "µs per frame" },
            &[
                Series::new(
                    "original: server (AWS)",
                    GREY,
                    orig.cpu_per_frame_us.rows.iter().map(|r| (r.players as f64, r.server_us, true)).collect(),
                    true,
                ),
                Series::new(
                    "original: nginx (AWS)",
                    LIGHT_GREY,
                    orig.cpu_per_frame_us.rows.iter().map(|r| (r.players as f64, r.nginx_us, true)).collect(),
                    true,
                ),
                Series::new("ours: one shard, user + sys", BLUE_1, cpu(&self.raw.one), false),
                Series::new("ours: two shards, user + sys", RED_1, cpu(&self.raw.two), false),
            ],
            &[],
            Legend::Top,
        )?;
        Ok(())
    }
}
