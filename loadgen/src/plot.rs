//! `--plot FILE.svg`: snapshot gap percentiles against players (plotters, SVG).

use plotters::prelude::*;
use std::path::Path;

/// One measured point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GapPoint {
    /// Players connected.
    pub players: f64,
    /// Own-shard snapshot gap p95, ms.
    pub own_p95: f64,
    /// Own-shard snapshot gap p99, ms.
    pub own_p99: f64,
    /// Relayed snapshot gap p95, ms (None: no relayed snapshots).
    pub relayed_p95: Option<f64>,
    /// Whether the point is judgeable (loadgen CPU under the threshold).
    pub judgeable: bool,
}

/// Draws the gap chart to `path`. `tick_ms` draws the ideal gap as a reference line.
///
/// Errors: drawing or writing the file failed.
pub fn gap_chart(path: &Path, points: &[GapPoint], tick_ms: f64) -> anyhow::Result<()> {
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let max_x = points.iter().map(|p| p.players).fold(1.0, f64::max) * 1.1;
    let max_y =
        points.iter().flat_map(|p| [p.own_p99, p.own_p95, p.relayed_p95.unwrap_or(0.0)]).fold(tick_ms * 1.5, f64::max)
            * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("snapshot gap vs players", ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc("players")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .y_desc("snapshot gap, ms")
        .draw()
        .map_err(draw_err)?;
    let tick = [(0.0, tick_ms), (max_x, tick_ms)];
    chart
        .draw_series(LineSeries::new(tick, BLACK.mix(0.6).stroke_width(2)))
        .map_err(draw_err)?
        .label(format!("one tick, {tick_ms:.0} ms"))
        .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.mix(0.6).stroke_width(2)));
    series(&mut chart, points.iter().map(|p| (p.players, p.own_p95, p.judgeable)), BLUE, "own shard p95")?;
    series(&mut chart, points.iter().map(|p| (p.players, p.own_p99, p.judgeable)), CYAN, "own shard p99")?;
    let relayed: Vec<_> = points.iter().filter_map(|p| p.relayed_p95.map(|v| (p.players, v, p.judgeable))).collect();
    if !relayed.is_empty() {
        series(&mut chart, relayed.into_iter(), RED, "relayed p95")?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(draw_err)?;
    root.present().map_err(draw_err)?;
    Ok(())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A line with a dot per point; not-judgeable points are hollow.
fn series(
    chart: &mut Chart<'_, '_>,
    pts: impl Iterator<Item = (f64, f64, bool)>,
    color: RGBColor,
    label: &str,
) -> anyhow::Result<()> {
    let pts: Vec<_> = pts.collect();
    chart
        .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), color.stroke_width(2)))
        .map_err(draw_err)?
        .label(label)
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
    chart
        .draw_series(pts.iter().map(|&(x, y, ok)| {
            let style = if ok { color.filled() } else { color.stroke_width(1) };
            Circle::new((x, y), 4, style)
        }))
        .map_err(draw_err)?;
    Ok(())
}

fn draw_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::anyhow!("plot: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_an_svg_with_every_series() {
        let dir = std::env::temp_dir().join(format!("mino-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp dir");
        let path = dir.join("gap.svg");
        let points = [
            GapPoint { players: 100.0, own_p95: 51.0, own_p99: 52.0, relayed_p95: Some(52.5), judgeable: true },
            GapPoint { players: 1000.0, own_p95: 58.0, own_p99: 70.0, relayed_p95: Some(60.0), judgeable: false },
        ];
        gap_chart(&path, &points, 50.0).expect("draws");
        let svg = std::fs::read_to_string(&path).expect("written");
        assert!(svg.starts_with("<svg"));
        for label in ["own shard p95", "own shard p99", "relayed p95", "players"] {
            assert!(svg.contains(label), "{label}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
