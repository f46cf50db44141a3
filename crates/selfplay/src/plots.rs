//! The run's PNG plots (`plots/`): training loss and value accuracy by step, evaluation score
//! by generation, and Elo by generation from the arena results. Drawn with plotters' bitmap
//! backend and the bundled DejaVu Sans font (`assets/fonts`), so no system font or graphics
//! library is needed. Plots are derived from the CSV files and redrawn after every generation;
//! each is drawn in memory and written atomically (`camelot_tournament::write_png`), so a crash
//! never leaves a torn PNG.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use camelot_tournament::{
    fit_ratings, plot_elo_by_generation, read_results, register_bundled_font, write_png, FitOptions,
};
use plotters::prelude::*;

use crate::layout;
use crate::metrics::GAME_END_COLUMNS;

const WIDTH: u32 = 900;
const HEIGHT: u32 = 520;

/// One named line of a chart.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// Draws every plot of the run that its files allow; returns the paths written. A plot
/// whose data is missing (no training step yet, no evaluation) is skipped; a failure to draw
/// one is returned as text and leaves the others drawn.
pub fn draw_run_plots(root: &Path, rating_anchor: Option<&str>) -> (Vec<PathBuf>, Vec<String>) {
    let plots = root.join(layout::PLOTS);
    let mut written = Vec::new();
    let mut failures = Vec::new();
    if let Err(e) = std::fs::create_dir_all(&plots) {
        failures.push(format!("{}: {e}", plots.display()));
        return (written, failures);
    }
    let mut attempt = |name: &str, result: Result<bool, String>| match result {
        Ok(true) => written.push(plots.join(name)),
        Ok(false) => {}
        Err(e) => failures.push(format!("{}: {e}", plots.join(name).display())),
    };
    let metrics = read_columns(&root.join(layout::METRICS));
    attempt(
        "loss.png",
        metrics.as_ref().map_err(Clone::clone).and_then(|m| {
            let lines = ["loss", "policy_loss", "value_loss", "material_loss"]
                .iter()
                .filter_map(|c| series(m, "step", c))
                .collect::<Vec<_>>();
            draw_lines(&plots.join("loss.png"), "Training loss", "training step", "loss", &lines, None)
        }),
    );
    attempt(
        "value_accuracy.png",
        metrics.as_ref().map_err(Clone::clone).and_then(|m| {
            let lines = series(m, "step", "value_accuracy").into_iter().collect::<Vec<_>>();
            draw_lines(
                &plots.join("value_accuracy.png"),
                "Value accuracy (argmax of win/draw/loss = result)",
                "training step",
                "accuracy",
                &lines,
                Some((0.0, 1.0)),
            )
        }),
    );
    attempt(
        "evaluation.png",
        evaluation_series(&root.join(layout::GENERATIONS)).and_then(|lines| {
            draw_lines(
                &plots.join("evaluation.png"),
                "Evaluation score of each new network",
                "generation",
                "score",
                &lines,
                Some((0.0, 1.0)),
            )
        }),
    );
    let generations = read_columns(&root.join(layout::GENERATIONS));
    let by_generation = |name: &str, title: &str, y: &str, columns: &[&str], range: Option<(f64, f64)>| {
        generations.as_ref().map_err(Clone::clone).and_then(|g| {
            let lines = columns.iter().filter_map(|c| series(g, "generation", c)).collect::<Vec<_>>();
            draw_lines(&plots.join(name), title, "generation", y, &lines, range)
        })
    };
    attempt(
        "targets.png",
        by_generation(
            "targets.png",
            "New targets under the network that played them",
            "nats",
            &["target_entropy", "prior_entropy", "kl_target_prior"],
            None,
        ),
    );
    attempt(
        "value_calibration.png",
        by_generation(
            "value_calibration.png",
            "Value head on the new positions",
            "error",
            &["value_brier", "value_calibration_error"],
            None,
        ),
    );
    attempt(
        "solved.png",
        by_generation(
            "solved.png",
            "Solved test positions: value kept, result kept, value head exact",
            "share",
            &["value_kept", "result_kept", "value_head_accuracy"],
            Some((0.0, 1.0)),
        ),
    );
    attempt(
        "game_ends.png",
        by_generation("game_ends.png", "How self-play games end", "games", &GAME_END_COLUMNS, None),
    );
    attempt("elo.png", draw_elo(&root.join(layout::RESULTS), &plots.join("elo.png"), rating_anchor));
    (written, failures)
}

/// A CSV file as named columns of numbers (cells that are not numbers are left out).
type Columns = BTreeMap<String, Vec<Option<f64>>>;

fn read_columns(path: &Path) -> Result<Columns, String> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let headers: Vec<String> =
        reader.headers().map_err(|e| format!("{}: {e}", path.display()))?.iter().map(str::to_string).collect();
    let mut columns: Columns = headers.iter().map(|h| (h.clone(), Vec::new())).collect();
    for record in reader.records() {
        let record = record.map_err(|e| format!("{}: {e}", path.display()))?;
        for (h, cell) in headers.iter().zip(record.iter()) {
            if let Some(column) = columns.get_mut(h) {
                column.push(cell.trim().parse::<f64>().ok().filter(|v| v.is_finite()));
            }
        }
    }
    Ok(columns)
}

fn series(columns: &Columns, x: &str, y: &str) -> Option<Series> {
    let (xs, ys) = (columns.get(x)?, columns.get(y)?);
    let points: Vec<(f64, f64)> = xs.iter().zip(ys).filter_map(|(a, b)| Some(((*a)?, (*b)?))).collect();
    (!points.is_empty()).then(|| Series { name: y.replace('_', " "), points })
}

/// The per-opponent scores of `generations.csv` (`evaluation_scores`: `000002=0.550 greedy=0.900
/// gate: ...`), one series per opponent; the previous network's column is named `previous`.
fn evaluation_series(path: &Path) -> Result<Vec<Series>, String> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let headers = reader.headers().map_err(|e| format!("{}: {e}", path.display()))?.clone();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let (Some(generation), Some(scores)) = (column("generation"), column("evaluation_scores")) else {
        return Ok(Vec::new());
    };
    let mut by_opponent: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("{}: {e}", path.display()))?;
        let Some(g) = record.get(generation).and_then(|g| g.parse::<f64>().ok()) else { continue };
        let text = record.get(scores).unwrap_or("");
        let text = text.split(" gate:").next().unwrap_or("");
        for item in text.split_whitespace() {
            let Some((name, score)) = item.split_once('=') else { continue };
            let Ok(score) = score.parse::<f64>() else { continue };
            // Older runs named the previous network by its number.
            let name = if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) { "previous" } else { name };
            by_opponent.entry(format!("vs {name}")).or_default().push((g, score));
        }
    }
    Ok(by_opponent.into_iter().map(|(name, points)| Series { name, points }).collect())
}

fn draw_elo(results: &Path, out: &Path, anchor: Option<&str>) -> Result<bool, String> {
    if !results.exists() {
        return Ok(false);
    }
    let rows = read_results(results).map_err(|e| e.to_string())?;
    if rows.is_empty() {
        return Ok(false);
    }
    // Until the anchor has played (a run's first generations), the default anchor.
    let anchor = anchor.filter(|a| rows.iter().any(|r| r.white == *a || r.black == *a));
    let options = FitOptions { anchor: anchor.map(str::to_string), ..FitOptions::default() };
    let table = fit_ratings(&rows, &options).map_err(|e| e.to_string())?;
    plot_elo_by_generation(&table, out, WIDTH, HEIGHT).map_err(|e| e.to_string())?;
    Ok(true)
}

/// A line chart of `lines` into `path` (drawn in memory, written by the one PNG writer);
/// `Ok(false)` when there is nothing to draw.
fn draw_lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Series],
    y_range: Option<(f64, f64)>,
) -> Result<bool, String> {
    if lines.iter().all(|s| s.points.is_empty()) {
        return Ok(false);
    }
    register_bundled_font();
    let all = || lines.iter().flat_map(|s| s.points.iter());
    let x_min = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max).max(x_min + 1.0);
    let (y_min, y_max) = y_range.unwrap_or_else(|| {
        let lo = all().map(|p| p.1).fold(f64::INFINITY, f64::min).min(0.0);
        let hi = all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        (lo, hi + (hi - lo).abs() * 0.05 + 1e-6)
    });
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut pixels = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x_min..x_max, y_min..y_max)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, line) in lines.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(line.points.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(line.name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
            if line.points.len() <= 40 {
                chart
                    .draw_series(line.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(|e| err(&e))?;
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    write_png(path, pixels, WIDTH, HEIGHT).map_err(|e| err(&e))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluation_scores_become_one_series_per_opponent() {
        let dir = std::env::temp_dir().join(format!("camelot-plots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("generations.csv");
        std::fs::write(
            &path,
            "generation,evaluation,evaluation_scores\n1,x,000000=0.550 greedy=0.900\n\
             2,x,\"000001=0.600 greedy=1.000 gate: promoted vs 000001 after 12 pairs (60.0%, LLR +2.96)\"\n",
        )
        .expect("write");
        let series = evaluation_series(&path).expect("parsed");
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["vs greedy", "vs previous"]);
        assert_eq!(series[0].points, [(1.0, 0.9), (2.0, 1.0)]);
        assert_eq!(series[1].points, [(1.0, 0.55), (2.0, 0.6)]);
        let png = dir.join("evaluation.png");
        assert!(draw_lines(&png, "t", "x", "y", &series, Some((0.0, 1.0))).expect("drawn"));
        let bytes = std::fs::read(&png).expect("png");
        assert_eq!(&bytes[1..4], b"PNG");
        // No temporary file is left beside it.
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["evaluation.png", "generations.csv"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
