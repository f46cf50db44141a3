//! The Elo-by-generation plot (PNG), drawn with plotters' bitmap backend and a bundled font
//! (DejaVu Sans, `assets/fonts`), so no system font or graphics library is needed. The picture
//! is drawn into memory, encoded as PNG and written with [`camelot_rules::fsio::write_atomic`],
//! so a reader never sees a half-written plot.

use crate::error::TournamentError;
use crate::ratings::{generation_of, RatingTable};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Registers the bundled DejaVu Sans as plotters' `sans-serif` (once per process), so that
/// every plot of the project draws text without a system font.
pub fn register_bundled_font() {
    REGISTER.call_once(|| {
        // The font is bundled and known to parse; a failure would only lose the labels.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Draws Elo against generation for every checkpoint player in `table` (generation parsed from
/// `models/NNNNNN`), with 95% error bars, and the other players as labelled horizontal lines;
/// writes a PNG of `width` x `height` pixels to `path` (replacing it atomically).
pub fn plot_elo_by_generation(
    table: &RatingTable,
    path: &Path,
    width: u32,
    height: u32,
) -> Result<(), TournamentError> {
    register_bundled_font();
    let mut points: Vec<(u64, f64, f64)> =
        table.players.iter().filter_map(|p| generation_of(&p.spec).map(|g| (g, p.elo, p.ci95))).collect();
    if points.is_empty() {
        return Err(TournamentError::NoGenerations);
    }
    points.sort_by_key(|p| p.0);
    let baselines: Vec<(&str, f64)> =
        table.players.iter().filter(|p| generation_of(&p.spec).is_none()).map(|p| (p.spec.as_str(), p.elo)).collect();
    let err = |e: &dyn std::fmt::Display| TournamentError::Draw { path: path.to_path_buf(), reason: e.to_string() };

    let x_max = points.iter().map(|p| p.0).max().unwrap_or(0).max(1) as f64;
    let lows = points.iter().map(|p| p.1 - p.2).chain(baselines.iter().map(|b| b.1));
    let highs = points.iter().map(|p| p.1 + p.2).chain(baselines.iter().map(|b| b.1));
    let y_min = lows.fold(f64::INFINITY, f64::min);
    let y_max = highs.fold(f64::NEG_INFINITY, f64::max);
    let pad = ((y_max - y_min) * 0.08).max(20.0);

    let mut pixels = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Elo by generation (95% intervals)", ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..x_max + 0.5, (y_min - pad)..(y_max + pad))
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc(format!("Elo ({} = 0)", table.anchor))
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, (name, elo)) in baselines.iter().enumerate() {
            let color = Palette99::pick(i + 1).to_rgba();
            chart
                .draw_series(LineSeries::new([(-0.5, *elo), (x_max + 0.5, *elo)], color.stroke_width(1)))
                .map_err(|e| err(&e))?
                .label(name.to_string())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
        }
        let blue = RGBColor(31, 90, 180);
        chart
            .draw_series(LineSeries::new(points.iter().map(|p| (p.0 as f64, p.1)), blue.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label("checkpoints")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], blue.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&(g, elo, ci)| {
                PathElement::new([(g as f64, elo - ci), (g as f64, elo + ci)], blue.stroke_width(1))
            }))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(points.iter().map(|&(g, elo, _)| Circle::new((g as f64, elo), 4, blue.filled())))
            .map_err(|e| err(&e))?;
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    write_png(path, pixels, width, height)
}

/// Encodes an RGB buffer of `width` x `height` pixels as PNG and writes it to `path`
/// atomically, replacing the file there: the one way every plot of the project reaches disk.
pub fn write_png(path: &Path, pixels: Vec<u8>, width: u32, height: u32) -> Result<(), TournamentError> {
    let err = |reason: String| TournamentError::Draw { path: path.to_path_buf(), reason };
    let image = image::RgbImage::from_raw(width, height, pixels)
        .ok_or_else(|| err(format!("the pixel buffer does not hold {width} x {height} RGB pixels")))?;
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageOutputFormat::Png).map_err(|e| err(format!("encoding the PNG: {e}")))?;
    camelot_rules::fsio::write_atomic(path, png.get_ref(), true).map_err(TournamentError::io(path))
}
