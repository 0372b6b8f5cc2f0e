//! The two charts of the HTML report, as inline SVG: a histogram of the reported similarities,
//! and the S-curve of the LSH banding with the threshold marked. They hold only numbers ndup
//! computed (no id or text), written with a fixed number of decimals so that the same report
//! gives the same bytes.

use std::fmt::Write as _;

use crate::candidates::lsh::LshParams;

/// The drawing: a 480 x 240 view box, the plot inside these margins.
const WIDTH: f64 = 480.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 18.0;
const BOTTOM: f64 = 42.0;

/// Bars of the histogram.
const BINS: usize = 20;

fn plot_w() -> f64 {
    WIDTH - LEFT - RIGHT
}

fn plot_h() -> f64 {
    HEIGHT - TOP - BOTTOM
}

/// The open tag of a chart, with its accessible name.
fn open(out: &mut String, label: &str) {
    let _ = writeln!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         role=\"img\" aria-label=\"{label}\">"
    );
}

/// The axes, ticks along x from `lo` to 1 (every 0.1) and `y_ticks` as (value in 0..=1, label).
fn axes(out: &mut String, lo: f64, x_label: &str, y_ticks: &[(f64, String)], y_label: &str) {
    let (x0, y0) = (LEFT, TOP + plot_h());
    for (v, label) in y_ticks {
        let y = y0 - v * plot_h();
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
            x0 + plot_w(),
            x0 - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        out,
        "<path class=\"axis\" d=\"M{x0:.1} {TOP:.1} V{y0:.1} H{:.1}\"/>",
        x0 + plot_w()
    );
    // Ticks every 0.1 from the first multiple of 0.1 at or above `lo`.
    let first = (lo * 10.0).round() as i64;
    for t in first..=10 {
        let v = t as f64 / 10.0;
        let x = x_at(v, lo);
        let _ = writeln!(
            out,
            "<line class=\"axis\" x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v:.1}</text>",
            y0 + 4.0,
            y0 + 16.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{x_label}</text>\
         <text x=\"12\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1})\">{y_label}</text>",
        LEFT + plot_w() / 2.0,
        HEIGHT - 6.0,
        TOP + plot_h() / 2.0,
        TOP + plot_h() / 2.0
    );
}

/// The x of value `v` on an axis from `lo` to 1.
fn x_at(v: f64, lo: f64) -> f64 {
    LEFT + (v - lo) / (1.0 - lo) * plot_w()
}

/// A dashed vertical line at `v`, labelled at `label_y` (a share of the plot's height from its
/// top), where the label does not cross what is drawn.
fn mark(out: &mut String, v: f64, lo: f64, label: &str, label_y: f64) {
    let x = x_at(v.clamp(lo, 1.0), lo);
    let anchor = if x > LEFT + plot_w() * 0.8 {
        "end"
    } else {
        "start"
    };
    let dx = if anchor == "end" { -4.0 } else { 4.0 };
    let _ = writeln!(
        out,
        "<line class=\"mark\" x1=\"{x:.1}\" y1=\"{TOP:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
         <text class=\"mark-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{label}</text>",
        TOP + plot_h(),
        x + dx,
        TOP + 10.0 + label_y * (plot_h() - 20.0)
    );
}

/// The lower end of the histogram's axis: the smaller of the threshold and the lowest score,
/// down to a multiple of 0.1 (at most 0.9, so the axis is never empty).
pub(crate) fn histogram_low(scores: &[f64], threshold: f64) -> f64 {
    let min = scores
        .iter()
        .copied()
        .fold(threshold.clamp(0.0, 1.0), f64::min);
    ((min * 10.0).floor() / 10.0).clamp(0.0, 0.9)
}

/// The bar of `score` among [`BINS`] bars from `lo` to 1 (1 itself in the last).
pub(crate) fn bin_of(score: f64, lo: f64) -> usize {
    let w = (1.0 - lo) / BINS as f64;
    (((score - lo) / w).floor().max(0.0) as usize).min(BINS - 1)
}

/// A histogram of `scores` (what the threshold measured, per reported pair) with `threshold`
/// marked; `what` names the measure (`Jaccard`, `containment`).
pub(crate) fn histogram(scores: &[f64], threshold: f64, what: &str) -> String {
    let mut out = String::new();
    open(
        &mut out,
        &format!("Histogram of the {} reported similarities", scores.len()),
    );
    let lo = histogram_low(scores, threshold);
    let mut counts = [0usize; BINS];
    for &s in scores {
        counts[bin_of(s, lo)] += 1;
    }
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let mut ticks = vec![(0.0, "0".to_string()), (1.0, super::thousands(max as u64))];
    if max >= 4 && max % 2 == 0 {
        ticks.push((0.5, super::thousands(max as u64 / 2)));
    }
    axes(&mut out, lo, &format!("{what} similarity"), &ticks, "pairs");
    let w = (1.0 - lo) / BINS as f64;
    let bar = plot_w() / BINS as f64;
    for (i, &n) in counts.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let h = n as f64 / max as f64 * plot_h();
        let from = lo + w * i as f64;
        let _ = writeln!(
            out,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\">\
             <title>{from:.3} to {:.3}: {}</title></rect>",
            LEFT + bar * i as f64 + 1.0,
            TOP + plot_h() - h,
            bar - 2.0,
            from + w,
            super::count(n, "pair")
        );
    }
    mark(
        &mut out,
        threshold,
        lo,
        &format!("threshold {threshold:.2}"),
        0.0,
    );
    out.push_str("</svg>");
    out
}

/// The S-curve of `lsh`: the probability that a pair of Jaccard similarity s becomes a
/// candidate, 1 - (1 - s^r)^b, with `threshold` marked and the point where the curve crosses
/// one half.
pub(crate) fn s_curve(lsh: LshParams, threshold: f64) -> String {
    let mut out = String::new();
    open(
        &mut out,
        &format!(
            "S-curve of {} bands of {} rows: probability of being a candidate against Jaccard similarity",
            lsh.bands, lsh.rows
        ),
    );
    let ticks: Vec<(f64, String)> = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|&v| (v, format!("{v:.2}")))
        .collect();
    axes(&mut out, 0.0, "Jaccard similarity", &ticks, "P(candidate)");
    out.push_str("<polyline class=\"curve\" points=\"");
    for i in 0..=100 {
        let s = i as f64 / 100.0;
        let p = lsh.candidate_probability(s);
        let _ = write!(
            out,
            "{}{:.1},{:.1}",
            if i == 0 { "" } else { " " },
            x_at(s, 0.0),
            TOP + plot_h() * (1.0 - p)
        );
    }
    out.push_str("\"/>\n");
    let half = lsh.half_point();
    let (x, y) = (x_at(half, 0.0), TOP + plot_h() * 0.5);
    let _ = writeln!(
        out,
        "<circle class=\"dot\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\"><title>P = 0.5 at {half:.3}</title></circle>\
         <text class=\"mark-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">P = ½ at {half:.2}</text>",
        x - 6.0,
        y + 4.0
    );
    mark(
        &mut out,
        threshold,
        0.0,
        &format!("threshold {threshold:.2}"),
        // Right of the threshold the curve is near the top: the label goes lower.
        0.6,
    );
    let p = lsh.candidate_probability(threshold);
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\">{} bands × {} rows; P at threshold {p:.3}</text>",
        LEFT + 8.0,
        TOP + plot_h() - 8.0,
        lsh.bands,
        lsh.rows
    );
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_cover_the_axis_and_one_falls_in_the_last() {
        assert_eq!(histogram_low(&[0.93, 0.85], 0.8), 0.8);
        assert_eq!(histogram_low(&[0.42], 0.8), 0.4);
        assert_eq!(histogram_low(&[], 1.0), 0.9);
        assert_eq!(bin_of(0.8, 0.8), 0);
        assert_eq!(bin_of(1.0, 0.8), BINS - 1);
        assert_eq!(bin_of(0.0, 0.8), 0);
        assert_eq!(bin_of(0.905, 0.8), 10);
    }

    #[test]
    fn the_histogram_has_one_bar_per_filled_bin_and_the_threshold() {
        let svg = histogram(&[0.81, 0.81, 0.95, 1.0], 0.8, "Jaccard");
        assert_eq!(svg.matches("<rect class=\"bar\"").count(), 3, "{svg}");
        assert!(svg.contains("threshold 0.80"));
        assert!(svg.contains("2 pairs</title>"));
        assert!(svg.starts_with("<svg class=\"chart\""));
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn the_s_curve_runs_from_zero_to_one() {
        let svg = s_curve(LshParams { bands: 18, rows: 7 }, 0.8);
        let points = svg.split("points=\"").nth(1).unwrap();
        let points: Vec<&str> = points[..points.find('"').unwrap()].split(' ').collect();
        assert_eq!(points.len(), 101);
        // P(0) = 0 at the bottom of the plot, P(1) = 1 at its top.
        assert_eq!(points[0], format!("{LEFT:.1},{:.1}", TOP + plot_h()));
        assert_eq!(points[100], format!("{:.1},{TOP:.1}", LEFT + plot_w()));
        assert!(svg.contains("18 bands × 7 rows"));
        assert!(svg.contains("threshold 0.80"));
    }
}
