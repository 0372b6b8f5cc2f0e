//! A self-contained HTML report, for a person reviewing near-duplicates: one file with no network
//! access, no external script, font or style sheet, so it opens from a CI artifact or an e-mail.
//!
//! It holds a summary (counts and parameters), a histogram of the reported similarities and the
//! S-curve of the banding (inline SVG, see `html/svg.rs`), the clusters largest first, and, for each
//! pair, the two normalized texts side by side with the differing words marked (`<del>` on the
//! left, `<ins>` on the right, see `html/diff.rs`). Everything is rendered here: the one inline script
//! only filters by id (also from the URL fragment, `report.html#filter=guide`) and sorts, so the
//! report reads the same with scripts off.
//!
//! **Texts.** The report reads each shown document again from its [`Origin`], as exact
//! verification does, and normalizes it as the scan did, so the diff shows what was compared.
//! A document that cannot be read again (deleted, changed into a binary file, standard input
//! that was not kept) is shown as such.
//!
//! **Bounds.** At most [`HtmlOptions::max_pairs`] pairs are shown with their texts, the most
//! similar first; up to [`LISTED_PER_SHOWN`] times as many more are listed (ids and measures)
//! without them, so that a report of many pairs still names them all and opens quickly; the
//! report says how many were left out past that; of each document at most
//! [`HtmlOptions::max_text_bytes`] of normalized text is compared; equal runs are collapsed and
//! each pair shows at most 1,000 words of each text. Texts
//! are read in batches, so memory follows a batch, not the report.
//!
//! **Safety.** Ids, paths and texts are the corpus's, so anyone may have written them: every one
//! is escaped for HTML (`&<>"'`), control characters and bidirectional overrides are shown as
//! escapes (`\x1b`, `\u{202e}`), and the page's Content-Security-Policy allows no script or
//! style but the report's own, by hash: markup that slipped through could not run.
//!
//! **Determinism.** No time, duration or absolute temporary path is written, and the diff has no
//! deadline, so the same input gives the same bytes whatever the thread count.

mod diff;
mod svg;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};

use rayon::prelude::*;

use super::records::ParamsRecord;
use super::sarif::{Group, largest_first, left_out};
use super::{ReportOptions, Reporter, printable};
use crate::candidates::lsh::LshParams;
use crate::dedup::{DedupReport, Fate};
use crate::find::ScanReport;
use crate::find::config::{Mode, ScanConfig};
use crate::model::{Pair, Skip};
use crate::sim::Measure;
use crate::source::records::{RecordOptions, parse_record};
use crate::source::{Document, Origin};
use crate::text::normalize::NormalizeOptions;

/// Pairs shown with their texts by default; up to [`LISTED_PER_SHOWN`] times as many more are
/// listed without them, and the rest are counted.
pub const DEFAULT_MAX_PAIRS: usize = 1_000;

/// Normalized text compared per document by default.
pub const DEFAULT_MAX_TEXT_BYTES: usize = 256 << 10;

/// Members listed per cluster; the rest are counted.
const MAX_CLUSTER_MEMBERS: usize = 100;

/// Skipped documents listed; the rest are counted.
const MAX_SKIPS: usize = 1_000;

/// Items open (their diff unfolded) when the page loads. Why: a closed `<details>` is not laid
/// out, so a report of thousands of pairs opens quickly, while the first ones are there to read.
const OPEN_ITEMS: usize = 20;

/// Items listed (without their texts) per item shown with its texts: a report of many pairs
/// still lists them all, up to this multiple, for a fraction of the bytes of the texts.
pub const LISTED_PER_SHOWN: usize = 10;

/// Items whose documents are read and rendered at once: the texts of one batch are in memory.
const BATCH_ITEMS: usize = 64;

/// The one inline script: filtering and sorting.
pub(crate) const SCRIPT: &str = include_str!("html/report.js");

/// The one style sheet.
pub(crate) const STYLE: &str = include_str!("html/report.css");

/// The Content-Security-Policy source of [`SCRIPT`]: its SHA-256, base64 (a test checks it).
pub(crate) const SCRIPT_HASH: &str = "sha256-1TbyF6XQDHJiNLCc/H9GgXGtC9PHzdkwJejYpPE2jfI=";

/// The Content-Security-Policy source of [`STYLE`] (a test checks it).
pub(crate) const STYLE_HASH: &str = "sha256-jzvSFWZQENLsNMHkSQKoBhqolAh5MFsPfmpVmJ48vF4=";

/// What an HTML report shows at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtmlOptions {
    /// Pairs (or dropped documents) shown with their texts, the most similar first.
    pub max_pairs: usize,
    /// Bytes of normalized text compared per document; the rest is left out, and said so.
    pub max_text_bytes: usize,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        HtmlOptions {
            max_pairs: DEFAULT_MAX_PAIRS,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
        }
    }
}

/// The HTML reporter. It reads documents again, so it needs the scan's normalization and
/// record fields: build it with [`Html::new`] from the configuration the scan ran with
/// ([`Html::default`] assumes the default configuration).
#[derive(Debug, Clone)]
pub struct Html {
    texts: Texts,
    options: HtmlOptions,
}

impl Default for Html {
    fn default() -> Self {
        Html::new(&ScanConfig::default(), HtmlOptions::default())
    }
}

impl Html {
    /// A reporter for scans made with `config`.
    pub fn new(config: &ScanConfig, options: HtmlOptions) -> Html {
        Html {
            texts: Texts {
                normalize: config.normalize,
                records: config.input.records.clone(),
                max_filesize: config.input.max_filesize,
                max_bytes: options.max_text_bytes.max(1),
            },
            options,
        }
    }

    /// Writes the report of a deduplication: each dropped document beside the one kept instead.
    pub fn write_dedup(&self, r: &DedupReport, w: &mut dyn Write) -> io::Result<()> {
        self.write_page(&dedup_page(r), &r.scan, w)
    }

    fn write_page(&self, page: &Page, r: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
        let mut out = String::with_capacity(64 << 10);
        head(&mut out, &page.title);
        out.push_str("<h1>");
        push_text(&mut out, &page.title, false);
        out.push_str("</h1>\n");
        summary(&mut out, page, r);
        clusters(&mut out, page, r, self.options.max_pairs);
        w.write_all(out.as_bytes())?;
        self.items(page, r, w)?;
        let mut out = String::new();
        skipped(&mut out, &r.skipped);
        let _ = write!(
            out,
            "<footer>Made by ndup {}. Every part of this page is in this one file; the script \
             only filters and sorts.</footer>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
            env!("CARGO_PKG_VERSION")
        );
        w.write_all(out.as_bytes())
    }

    /// The list of items, rendered a batch at a time (the texts of one batch in memory).
    fn items(&self, page: &Page, r: &ScanReport, w: &mut dyn Write) -> io::Result<()> {
        let total = page.items.len();
        let shown = total.min(self.options.max_pairs);
        let listed = total.min(self.options.max_pairs.saturating_mul(LISTED_PER_SHOWN));
        let mut out = String::new();
        let _ = write!(
            out,
            "<section id=\"list\">\n<h2>{} ({})</h2>\n",
            capitalized(page.plural),
            thousands(total as u64)
        );
        if total == 0 {
            let _ = writeln!(out, "<p class=\"note\">No {}.</p>", page.plural);
        } else {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", page.legend);
        }
        let range = |items: &[Item]| {
            (
                similarity_text(items.iter().filter_map(|i| i.score).reduce(f64::min)),
                similarity_text(items.iter().filter_map(|i| i.score).reduce(f64::max)),
            )
        };
        if shown < listed {
            let bare = &page.items[shown..listed];
            let (low, high) = range(bare);
            let _ = writeln!(
                out,
                "<p class=\"note\" id=\"without-texts\">The texts of the {} most similar {} are \
                 shown; the next {} (similarities from {low} to {high}) {} listed without them \
                 (<code>--html-max-pairs N</code> shows more).</p>",
                thousands(shown as u64),
                if shown == 1 {
                    page.singular
                } else {
                    page.plural
                },
                thousands(bare.len() as u64),
                if bare.len() == 1 { "is" } else { "are" },
            );
        }
        if listed < total {
            let left = &page.items[listed..];
            let (low, high) = range(left);
            let _ = writeln!(
                out,
                "<p class=\"warn\" id=\"left-out\">This report lists the {} most similar of {} \
                 {}: {} {} left out, the least similar, with similarities from {low} to {high} \
                 (it lists at most {} times <code>--html-max-pairs</code>, {}). {}</p>",
                thousands(listed as u64),
                thousands(total as u64),
                page.plural,
                thousands(left.len() as u64),
                if left.len() == 1 { "is" } else { "are" },
                LISTED_PER_SHOWN,
                thousands(shown as u64),
                page.everywhere,
            );
        }
        if total > 0 {
            let _ = writeln!(
                out,
                "<div id=\"controls\" class=\"controls\" hidden>\
                 <label>Filter by id or path <input id=\"filter\" type=\"search\" \
                 placeholder=\"part of an id or a path\" autocomplete=\"off\"></label>\
                 <label>Sort by <select id=\"sort\">\
                 <option value=\"sim-desc\">similarity, highest first</option>\
                 <option value=\"sim-asc\">similarity, lowest first</option>\
                 <option value=\"ids\">{}</option></select></label>\
                 <span id=\"count\" class=\"muted\"></span></div>",
                page.natural_order
            );
        }
        out.push_str("<div id=\"items\">\n");
        w.write_all(out.as_bytes())?;
        for (b, batch) in page.items[..shown].chunks(BATCH_ITEMS).enumerate() {
            let needed: BTreeSet<u32> = batch
                .iter()
                .filter(|i| !i.identical)
                .flat_map(|i| [i.a, i.b])
                .collect();
            let texts = self.texts.load(&r.documents, &needed);
            let rendered: Vec<String> = batch
                .par_iter()
                .enumerate()
                .map(|(j, item)| {
                    let order = b * BATCH_ITEMS + j;
                    render_item(page, r, item, order, Some(&texts), self.texts.max_bytes)
                })
                .collect();
            for s in rendered {
                w.write_all(s.as_bytes())?;
            }
        }
        let bare: Vec<String> = page.items[shown..listed]
            .par_iter()
            .enumerate()
            .map(|(j, item)| render_item(page, r, item, shown + j, None, self.texts.max_bytes))
            .collect();
        for s in bare {
            w.write_all(s.as_bytes())?;
        }
        w.write_all(b"</div>\n</section>\n")
    }
}

impl Reporter for Html {
    /// The report of a scan: pairs, and the clusters they form (with or without `--clusters`).
    fn write(&self, r: &ScanReport, _opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        self.write_page(&scan_page(r), r, w)
    }
}

/// What a page shows, whatever made it.
struct Page {
    title: String,
    /// Rows of the summary table: a label and a value (plain text).
    summary: Vec<(&'static str, String)>,
    /// What the histogram counts, per pair: the similarity the threshold applies to.
    scores: Vec<f64>,
    /// Groups, largest first, with a note on each member (`kept`), if any.
    clusters: Vec<Group>,
    /// A dedup's page: each cluster's first member is the one kept, the items are drops.
    dedup: bool,
    /// The items, most similar first.
    items: Vec<Item>,
    /// What the items are: `pair`, `dropped document`.
    singular: &'static str,
    plural: &'static str,
    /// Where every item is listed, for a report that shows only some.
    everywhere: &'static str,
    /// Says what the two columns are.
    legend: &'static str,
    /// The name of the items' own order, for the sort menu.
    natural_order: &'static str,
    /// What the threshold measures (`Jaccard`, `containment`).
    measure: &'static str,
}

/// Two documents shown side by side.
struct Item {
    /// The left document.
    a: u32,
    /// The right document.
    b: u32,
    /// The similarity the threshold applies to, when known.
    score: Option<f64>,
    /// Position in the items' own order (pairs by id; dropped documents in input order).
    key: usize,
    /// The heading: the right document's relation to the left one (HTML).
    heading: String,
    /// The measures (plain text).
    measures: String,
    /// Known to be the same text once normalized: nothing to read.
    identical: bool,
}

/// What the threshold applies to: the exact Jaccard when known, else the estimate; with
/// containment, the larger of the two containments.
fn score(p: &Pair, measure: Measure) -> f64 {
    match measure {
        Measure::Jaccard => p.jaccard.unwrap_or(p.estimate),
        Measure::Containment => p.a_in_b.unwrap_or(0.0).max(p.b_in_a.unwrap_or(0.0)),
    }
}

/// `jaccard 0.9361 · estimate 0.8984`, or `estimate 0.9141 · exact Jaccard not computed`, and
/// the containments when measured.
fn pair_measures(p: &Pair) -> String {
    let mut s = match p.jaccard {
        Some(j) => format!("jaccard {j:.4} · estimate {:.4}", p.estimate),
        None => format!("estimate {:.4} · exact Jaccard not computed", p.estimate),
    };
    for (name, v) in [("a in b", p.a_in_b), ("b in a", p.b_in_a)] {
        if let Some(v) = v {
            let _ = write!(s, " · {name} {v:.4}");
        }
    }
    s
}

fn measure_name(m: Measure) -> &'static str {
    match m {
        Measure::Jaccard => "Jaccard",
        Measure::Containment => "containment",
    }
}

/// Items sorted most similar first (unknown similarity last), ties in their own order.
fn by_similarity(items: &mut [Item]) {
    items.sort_by(|x, y| {
        let (sx, sy) = (x.score.unwrap_or(-1.0), y.score.unwrap_or(-1.0));
        sy.total_cmp(&sx).then(x.key.cmp(&y.key))
    });
}

fn stats_rows(r: &ScanReport) -> Vec<(&'static str, String)> {
    let st = &r.stats;
    let mut rows = vec![("documents", thousands(st.documents))];
    if st.empty > 0 {
        rows.push(("empty documents (never paired)", thousands(st.empty)));
    }
    for (label, n) in [
        ("skipped: binary", st.skipped_binary),
        ("skipped: unreadable", st.skipped_unreadable),
        ("skipped: malformed records", st.skipped_malformed),
        ("skipped: too large", st.skipped_too_large),
    ] {
        if n > 0 {
            rows.push((label, thousands(n)));
        }
    }
    rows.push(("text read", crate::error::format_bytes(st.bytes)));
    rows
}

fn scan_page(r: &ScanReport) -> Page {
    let measure = r.params.measure;
    let groups = largest_first(r, r.clusters());
    let mut summary = stats_rows(r);
    let st = &r.stats;
    summary.push(("candidate pairs", thousands(st.candidates)));
    if st.exact_checked > 0 {
        summary.push(("verified exactly", thousands(st.exact_checked)));
    }
    summary.push(("pairs reported", thousands(r.pairs.len() as u64)));
    if st.ignored_pairs > 0 {
        summary.push(("pairs accepted by .ndupignore", thousands(st.ignored_pairs)));
    }
    if st.baseline_pairs > 0 {
        summary.push((
            "pairs accepted by the baseline",
            thousands(st.baseline_pairs),
        ));
    }
    summary.push(("clusters", thousands(groups.len() as u64)));
    let mut items: Vec<Item> = r
        .pairs
        .iter()
        .enumerate()
        .map(|(key, p)| Item {
            a: p.a,
            b: p.b,
            score: Some(score(p, measure)),
            key,
            heading: "<span class=\"rel\">~</span>".into(),
            measures: pair_measures(p),
            identical: false,
        })
        .collect();
    by_similarity(&mut items);
    Page {
        title: format!(
            "ndup: {} among {}",
            count(r.pairs.len(), "near-duplicate pair"),
            count(r.stats.documents as usize, "document")
        ),
        summary,
        scores: r.pairs.iter().map(|p| score(p, measure)).collect(),
        clusters: groups,
        dedup: false,
        items,
        singular: "pair",
        plural: "pairs",
        everywhere: "The JSON-lines and text formats list them all.",
        legend: "Each pair shows its two normalized texts side by side: words only in the left \
                 one are struck out in red, words only in the right one are marked in green, and \
                 long runs of equal words are folded.",
        natural_order: "ids",
        measure: measure_name(measure),
    }
}

fn dedup_page(r: &DedupReport) -> Page {
    let s = &r.scan;
    let measure = s.params.measure;
    // Each kept document with the documents dropped for it, in input order.
    let mut drops: HashMap<u32, Vec<u32>> = HashMap::new();
    for (d, fate) in r.fates.iter().enumerate() {
        if let Fate::Exact { kept } | Fate::Near { kept } = *fate {
            drops.entry(kept).or_default().push(d as u32);
        }
    }
    let mut groups: Vec<Group> = drops
        .iter()
        .map(|(&kept, dropped)| {
            let mut members = vec![kept];
            members.extend(dropped);
            Group { members, pairs: 0 }
        })
        .collect();
    // Largest first; ties by the kept document's input order.
    groups.sort_by_key(|g| (std::cmp::Reverse(g.members.len()), g.members[0]));
    let direct: HashMap<(u32, u32), &Pair> = s
        .pairs
        .iter()
        .flat_map(|p| [((p.a, p.b), p), ((p.b, p.a), p)])
        .collect();
    let mut items = Vec::new();
    for (d, fate) in r.fates.iter().enumerate() {
        let d = d as u32;
        let (kept, exact) = match *fate {
            Fate::Kept => continue,
            Fate::Exact { kept } => (kept, true),
            Fate::Near { kept } => (kept, false),
        };
        let pair = direct.get(&(kept, d));
        let (score, measures) = match (exact, pair) {
            (true, _) => (
                Some(1.0),
                "exact duplicate: the same text once normalized".to_string(),
            ),
            (false, Some(p)) => (
                Some(self::score(p, measure)),
                format!("near duplicate: {}", pair_measures(p)),
            ),
            (false, None) => (
                None,
                "near duplicate through other members of its cluster (this pair was not \
                 measured)"
                    .to_string(),
            ),
        };
        items.push(Item {
            a: d,
            b: kept,
            score,
            key: d as usize,
            heading: "<span class=\"rel\">dropped for</span>".into(),
            measures,
            identical: exact,
        });
    }
    by_similarity(&mut items);
    let mut summary = stats_rows(s);
    summary.push(("kept", thousands(r.kept())));
    summary.push((
        "dropped: exact duplicates (same normalized text)",
        thousands(r.exact_dropped),
    ));
    summary.push(("dropped: near duplicates", thousands(r.near_dropped)));
    summary.push((
        "pairs verified between distinct texts",
        thousands(s.pairs.len() as u64),
    ));
    summary.push((
        "clusters with a dropped document",
        thousands(groups.len() as u64),
    ));
    Page {
        title: format!(
            "ndup dedup: {} of {} dropped",
            thousands(r.exact_dropped + r.near_dropped),
            count(s.documents.len(), "document")
        ),
        summary,
        scores: s.pairs.iter().map(|p| score(p, measure)).collect(),
        clusters: groups,
        dedup: true,
        items,
        singular: "dropped document",
        plural: "dropped documents",
        everywhere: "The output of ndup dedup lists them all.",
        legend: "Each dropped document is shown on the left beside the document kept instead on \
                 the right: words only in the dropped one are struck out in red, words only in \
                 the kept one are marked in green, and long runs of equal words are folded.",
        natural_order: "input order",
        measure: measure_name(measure),
    }
}

/// `<!DOCTYPE html>` to `<body>`: the policy, the style.
fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         script-src '{SCRIPT_HASH}'; style-src '{STYLE_HASH}'; base-uri 'none'; \
         form-action 'none'\">\n<meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"ndup {}\">\n<title>",
        env!("CARGO_PKG_VERSION")
    );
    push_text(out, title, false);
    let _ = write!(out, "</title>\n<style>{STYLE}</style>\n</head>\n<body>\n");
}

fn summary(out: &mut String, page: &Page, r: &ScanReport) {
    out.push_str(
        "<section id=\"summary\" class=\"overview\">\n<div>\n<table class=\"kv\">\n\
         <caption class=\"muted\">Summary</caption>\n",
    );
    for (label, value) in &page.summary {
        out.push_str("<tr><th>");
        push_text(out, label, false);
        out.push_str("</th><td class=\"num\">");
        push_text(out, value, false);
        out.push_str("</td></tr>\n");
    }
    // The parameters are folded: they matter to reproduce a report, less to read it.
    out.push_str(
        "</table>\n<details class=\"params\"><summary>Parameters</summary>\n\
         <table class=\"kv\" id=\"params\">\n",
    );
    let params = serde_json::to_value(ParamsRecord::from(&r.params)).unwrap_or_default();
    if let serde_json::Value::Object(map) = params {
        for (k, v) in map {
            if k == "type" {
                continue;
            }
            out.push_str("<tr><th>");
            push_text(out, &k.replace('_', " "), false);
            out.push_str("</th><td><code>");
            let v = match v {
                serde_json::Value::String(s) => s,
                v => v.to_string(),
            };
            push_text(out, &v, false);
            out.push_str("</code></td></tr>\n");
        }
    }
    out.push_str("</table>\n</details>\n</div>\n");
    charts(out, page, r);
    out.push_str("</section>\n");
}

fn charts(out: &mut String, page: &Page, r: &ScanReport) {
    let p = &r.params;
    out.push_str("<figure id=\"histogram\">");
    out.push_str(&svg::histogram(&page.scores, p.threshold, page.measure));
    let _ = writeln!(
        out,
        "<figcaption>The {} similarity of each of the {} (the exact value where it was \
         computed, else the estimate), against the threshold.</figcaption></figure>",
        page.measure,
        count(page.scores.len(), "reported pair")
    );
    match (p.bands, p.rows) {
        (Some(bands), Some(rows)) => {
            out.push_str("<figure id=\"s-curve\">");
            out.push_str(&svg::s_curve(LshParams { bands, rows }, p.threshold));
            let _ = writeln!(
                out,
                "<figcaption>The banding: a pair of Jaccard similarity s becomes a candidate \
                 with probability 1 - (1 - s<sup>{rows}</sup>)<sup>{bands}</sup>. Pairs left of \
                 the threshold are rarely proposed; pairs right of it rarely missed.\
                 </figcaption></figure>"
            );
        }
        _ => {
            let why = match p.mode {
                Mode::Exact => {
                    "Exact mode joins the shingle sets: every pair at or above the threshold is \
                     found, so there is no banding and no S-curve."
                }
                Mode::Minhash => {
                    "The sample sketches find candidates through an inverted index of sampled \
                     shingles, not bands, so there is no S-curve."
                }
            };
            let _ = writeln!(
                out,
                "<figure id=\"s-curve\"><figcaption>{why}</figcaption></figure>"
            );
        }
    }
}

fn clusters(out: &mut String, page: &Page, r: &ScanReport, max: usize) {
    let groups = &page.clusters;
    let _ = write!(
        out,
        "<section id=\"clusters\">\n<h2>Clusters ({})</h2>\n",
        thousands(groups.len() as u64)
    );
    if groups.is_empty() {
        out.push_str("<p class=\"note\">No clusters.</p>\n</section>\n");
        return;
    }
    out.push_str(if page.dedup {
        "<p class=\"note\">Each kept document with the documents dropped for it, largest group \
         first.</p>\n"
    } else {
        "<p class=\"note\">Documents joined by reported pairs (connected components), largest \
         first.</p>\n"
    });
    let shown = groups.len().min(max);
    out.push_str("<ol class=\"clusters\">\n");
    for g in &groups[..shown] {
        let ids: Vec<String> = g
            .members
            .iter()
            .map(|&d| printable(r.id(d)).into_owned())
            .collect();
        out.push_str("<li class=\"cluster\" data-ids=\"");
        push_text(out, &ids.join("\n"), true);
        out.push_str("\"><span class=\"muted\">");
        out.push_str(&count(g.members.len(), "document"));
        if !page.dedup {
            out.push_str(", ");
            out.push_str(&count(g.pairs, "pair"));
        }
        out.push_str("</span>\n<ul>");
        for (i, id) in ids.iter().take(MAX_CLUSTER_MEMBERS).enumerate() {
            out.push_str("<li><code class=\"id\">");
            push_text(out, id, false);
            out.push_str("</code>");
            if page.dedup {
                out.push_str(if i == 0 {
                    " <span class=\"muted\">kept</span>"
                } else {
                    " <span class=\"muted\">dropped</span>"
                });
            }
            out.push_str("</li>");
        }
        push_more(out, ids.len(), MAX_CLUSTER_MEMBERS);
        out.push_str("</ul></li>\n");
    }
    out.push_str("</ol>\n");
    if shown < groups.len() {
        let rest = &groups[shown..];
        let what = if page.dedup {
            // Dedup's groups are not made of reported pairs: count their documents only.
            format!(
                "{} ({})",
                count(rest.len(), "cluster"),
                count(rest.iter().map(|g| g.members.len()).sum(), "document")
            )
        } else {
            left_out(rest).1
        };
        let _ = writeln!(
            out,
            "<p class=\"warn\">The {} largest clusters are listed; left out: {what}.</p>",
            thousands(shown as u64)
        );
    }
    out.push_str("</section>\n");
}

fn skipped(out: &mut String, skips: &[Skip]) {
    if skips.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section id=\"skipped\">\n<h2>Skipped ({})</h2>\n<ul>\n",
        thousands(skips.len() as u64)
    );
    for s in skips.iter().take(MAX_SKIPS) {
        out.push_str("<li><code class=\"id\">");
        push_id(out, &s.id);
        out.push_str("</code>: ");
        push_text(out, &printable(&s.reason), false);
        out.push_str("</li>\n");
    }
    if push_more(out, skips.len(), MAX_SKIPS) {
        out.push('\n');
    }
    out.push_str("</ul>\n</section>\n");
}

/// The list item saying how many of `len` items a list of at most `max` left out; false (and
/// nothing written) when none was.
fn push_more(out: &mut String, len: usize, max: usize) -> bool {
    if len <= max {
        return false;
    }
    let _ = write!(
        out,
        "<li class=\"more\">and {} more</li>",
        thousands((len - max) as u64)
    );
    true
}

/// One item: its heading (a `<summary>`), then both texts side by side.
fn render_item(
    page: &Page,
    r: &ScanReport,
    item: &Item,
    order: usize,
    texts: Option<&HashMap<u32, Loaded>>,
    max_bytes: usize,
) -> String {
    let mut out = String::with_capacity(4096);
    let (a, b) = (r.id(item.a), r.id(item.b));
    // Past the items with texts, a bare line: the ids and measures, a fraction of the markup.
    let tag = if texts.is_some() { "details" } else { "div" };
    let _ = write!(
        out,
        "<{tag} class=\"item\" id=\"item-{}\" data-order=\"{order}\" data-key=\"{}\" data-sim=\"{}\"",
        order + 1,
        item.key,
        item.score.map(|s| format!("{s:.6}")).unwrap_or_default()
    );
    out.push_str(" data-a=\"");
    push_id(&mut out, a);
    out.push_str("\" data-b=\"");
    push_id(&mut out, b);
    out.push('"');
    if order < OPEN_ITEMS && texts.is_some() {
        out.push_str(" open");
    }
    let summary = if texts.is_some() { "summary" } else { "p" };
    let _ = write!(out, ">\n<{summary}><span class=\"n\">{}</span>", order + 1);
    out.push_str("<code class=\"id\">");
    push_id(&mut out, a);
    out.push_str("</code> ");
    out.push_str(&item.heading);
    out.push_str(" <code class=\"id\">");
    push_id(&mut out, b);
    out.push_str("</code><span class=\"measures\">");
    push_text(&mut out, &item.measures, false);
    let Some(texts) = texts else {
        out.push_str("</span></p></div>\n");
        return out;
    };
    out.push_str("</span></summary>\n<div class=\"body\">\n");
    let (ta, tb) = (texts.get(&item.a), texts.get(&item.b));
    for (doc, t) in [(item.a, ta), (item.b, tb)] {
        if let Some(Loaded::Text { bytes, .. }) = t
            && *bytes > max_bytes
        {
            out.push_str("<p class=\"note\">Only the first ");
            out.push_str(&crate::error::format_bytes(max_bytes as u64));
            out.push_str(" of the normalized text of <code class=\"id\">");
            push_id(&mut out, r.id(doc));
            out.push_str("</code> (");
            out.push_str(&crate::error::format_bytes(*bytes as u64));
            out.push_str(") is compared here.</p>\n");
        }
    }
    out.push_str("<table class=\"diff\">\n<thead><tr>");
    for (doc, label) in [(item.a, page_left(page)), (item.b, page_right(page))] {
        out.push_str("<th>");
        if let Some(label) = label {
            out.push_str(label);
            out.push(' ');
        }
        out.push_str("<code class=\"id\">");
        push_id(&mut out, r.id(doc));
        out.push_str("</code>");
        if let Origin::Record { source, line, .. } = &r.documents[doc as usize].origin {
            out.push_str(" <span class=\"muted\">(");
            push_text(&mut out, &printable(source.name()), false);
            let _ = write!(out, ", line {line})</span>");
        }
        out.push_str("</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    if item.identical {
        out.push_str(
            "<tr class=\"same\"><td colspan=\"2\">The normalized texts are identical.</td></tr>\n",
        );
    } else {
        match (ta, tb) {
            (Some(Loaded::Text { text: x, .. }), Some(Loaded::Text { text: y, .. })) => {
                let c = diff::write_rows(&mut out, x, y);
                if c.passages > 0 {
                    out.push_str("<tr class=\"same\"><td colspan=\"2\">");
                    let _ = write!(
                        out,
                        "{}: {} only on the left, {} only on the right.",
                        count(c.passages, "differing passage"),
                        count(c.removed, "word"),
                        count(c.added, "word"),
                    );
                    out.push_str("</td></tr>\n");
                }
            }
            _ => {
                for (doc, t) in [(item.a, ta), (item.b, tb)] {
                    let why = match t {
                        Some(Loaded::Missing(why)) => why.as_str(),
                        Some(Loaded::Text { .. }) => continue,
                        None => "it was not read",
                    };
                    out.push_str("<tr class=\"missing\"><td colspan=\"2\"><code class=\"id\">");
                    push_id(&mut out, r.id(doc));
                    out.push_str("</code> could not be read again: ");
                    push_text(&mut out, &printable(why), false);
                    out.push_str("</td></tr>\n");
                }
            }
        }
    }
    out.push_str("</tbody>\n</table>\n</div>\n</details>\n");
    out
}

fn page_left(page: &Page) -> Option<&'static str> {
    page.dedup.then_some("dropped:")
}

fn page_right(page: &Page) -> Option<&'static str> {
    page.dedup.then_some("kept:")
}

/// A document read again: its normalized text, cut to the limit, and the length it had.
enum Loaded {
    Text {
        text: String,
        /// Bytes of the whole normalized text.
        bytes: usize,
    },
    /// Why it could not be read.
    Missing(String),
}

/// How documents are read again: as the scan read them.
#[derive(Debug, Clone)]
struct Texts {
    normalize: NormalizeOptions,
    records: RecordOptions,
    max_filesize: Option<u64>,
    max_bytes: usize,
}

impl Texts {
    /// The documents `needed` of `docs`, read again: files in parallel, records with one pass
    /// per source (a compressed one is decompressed once per batch, not once per record).
    fn load(&self, docs: &[Document], needed: &BTreeSet<u32>) -> HashMap<u32, Loaded> {
        let files: Vec<u32> = needed
            .iter()
            .copied()
            .filter(|&d| matches!(docs[d as usize].origin, Origin::File(_)))
            .collect();
        let mut out: HashMap<u32, Loaded> = files
            .par_iter()
            .map(|&d| {
                let Origin::File(path) = &docs[d as usize].origin else {
                    unreachable!("filtered above")
                };
                let loaded = match crate::source::files::read_document(path, self.max_filesize) {
                    Ok(crate::source::files::Read::Text(t)) => self.prepare(&t),
                    Ok(crate::source::files::Read::Binary) => {
                        Loaded::Missing("it is binary now".into())
                    }
                    Err(e) => Loaded::Missing(crate::model::io_reason(&e)),
                };
                (d, loaded)
            })
            .collect();
        let by_source = crate::source::records::by_source(docs, needed.iter().copied());
        let fields = self.records.fields();
        for (source, mut wanted) in by_source {
            wanted.sort_unstable();
            let offsets: Vec<u64> = wanted.iter().map(|&(o, _)| o).collect();
            match source.read_at(&offsets) {
                Ok(lines) => {
                    for ((_, d), line) in wanted.iter().zip(lines) {
                        let loaded = match parse_record(&line, &fields) {
                            Ok(rec) => self.prepare(&rec.text),
                            Err(why) => Loaded::Missing(why),
                        };
                        out.insert(*d, loaded);
                    }
                }
                Err(e) => {
                    let why = crate::model::io_reason(&e);
                    for (_, d) in wanted {
                        out.insert(d, Loaded::Missing(why.clone()));
                    }
                }
            }
        }
        for &d in needed {
            if let Origin::Text { texts, index } = &docs[d as usize].origin {
                let loaded = match texts.text(*index) {
                    Some(t) => self.prepare(t),
                    None => Loaded::Missing("it has no text now".into()),
                };
                out.insert(d, loaded);
            }
        }
        out
    }

    /// `raw` as the scan compared it (`ndup:ignore` regions removed, normalized), cut to
    /// `max_bytes` at a character boundary, preferably at white space.
    fn prepare(&self, raw: &str) -> Loaded {
        let mut text = String::new();
        crate::text::prepare_into(raw, &self.normalize, &mut text);
        let bytes = text.len();
        if bytes > self.max_bytes {
            let mut end = self.max_bytes;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            if !text[end..].starts_with(char::is_whitespace)
                && let Some(space) = text[..end].rfind(char::is_whitespace)
                && end - space < 256
            {
                end = space;
            }
            text.truncate(end);
        }
        Loaded::Text { text, bytes }
    }
}

/// Appends `s` escaped for HTML text or a double-quoted attribute: `&<>"'` as entities, control
/// characters (but newlines and tabs when `newlines`) and bidirectional overrides as visible
/// escapes (`\x1b`, `\u{202e}`), so that no text of a document can become markup or reorder
/// what is shown.
pub(crate) fn push_text(out: &mut String, s: &str, newlines: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' if newlines => out.push(c),
            c if c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str("<span class=\"ctl\">");
                out.push_str(&printable(c.encode_utf8(&mut [0; 4])));
                out.push_str("</span>");
            }
            c => out.push(c),
        }
    }
}

/// Appends an id as [`printable`] shows it, escaped for HTML.
fn push_id(out: &mut String, id: &str) {
    // `printable` leaves no character that `push_text` would mark: only the escaping remains.
    push_text(out, &printable(id), false);
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and `word`, plural unless `n` is 1: `1 pair`, `1,024 pairs`.
pub(crate) fn count(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{} {word}s", thousands(n as u64))
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn similarity_text(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".into(), |v| format!("{v:.4}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    fn base64(bytes: &[u8]) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    fn csp_hash(s: &str) -> String {
        use sha2::Digest;
        format!("sha256-{}", base64(&sha2::Sha256::digest(s.as_bytes())))
    }

    #[test]
    fn the_policy_allows_exactly_this_script_and_this_style() {
        assert_eq!(base64(b"any carnal pleas"), "YW55IGNhcm5hbCBwbGVhcw==");
        assert_eq!(
            csp_hash(SCRIPT),
            SCRIPT_HASH,
            "report.js changed: put its hash in SCRIPT_HASH"
        );
        assert_eq!(
            csp_hash(STYLE),
            STYLE_HASH,
            "report.css changed: put its hash in STYLE_HASH"
        );
        // The hashed text is what the page holds, byte for byte.
        let mut out = Vec::new();
        Html::default()
            .write(&sample(), &ReportOptions::default(), &mut out)
            .unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains(&format!("<style>{STYLE}</style>")));
        assert!(page.contains(&format!("script-src '{SCRIPT_HASH}'")));
        assert!(!page.contains("unsafe-inline"));
        // Nothing in the script or style could end its element early.
        assert!(!SCRIPT.contains("</"));
        assert!(!STYLE.contains("</"));
    }

    #[test]
    fn escaping_leaves_no_markup_and_shows_control_characters() {
        let mut out = String::new();
        push_text(&mut out, "<script>alert('x')</script> & \"q\"", false);
        assert_eq!(
            out,
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        let mut out = String::new();
        push_text(&mut out, "a\nb\u{1b}[31m\u{202e}c", true);
        assert_eq!(
            out,
            "a\nb<span class=\"ctl\">\\x1b</span>[31m<span class=\"ctl\">\\u{202e}</span>c"
        );
        let mut out = String::new();
        push_id(&mut out, "x\n<i>\u{0}.md");
        assert_eq!(out, "x\\n&lt;i&gt;\\x00.md");
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(count(1, "pair"), "1 pair");
        assert_eq!(count(10_000, "pair"), "10,000 pairs");
    }

    #[test]
    fn a_long_text_is_cut_at_white_space_within_the_limit() {
        let texts = Texts {
            normalize: NormalizeOptions::default(),
            records: RecordOptions::default(),
            max_filesize: None,
            max_bytes: 10,
        };
        let Loaded::Text { text, bytes } = texts.prepare("Alpha  Beta gamma delta") else {
            panic!()
        };
        assert_eq!((text.as_str(), bytes), ("alpha beta", 22));
        let Loaded::Text { text, .. } = texts.prepare("ééééééééé") else {
            panic!()
        };
        assert_eq!(text, "ééééé");
    }

    #[test]
    fn pairs_are_listed_most_similar_first_and_cut_at_the_limit() {
        let r = sample();
        let html = Html::new(
            &ScanConfig::default(),
            HtmlOptions {
                max_pairs: 1,
                ..Default::default()
            },
        );
        let mut out = Vec::new();
        html.write(&r, &ReportOptions::default(), &mut out).unwrap();
        let page = String::from_utf8(out).unwrap();
        // docs/a.md ~ docs/b, "quoted".md (jaccard 0.9) before docs/a.md ~ docs/c.md (0.8125).
        // Both are listed; only the first with its texts.
        assert_eq!(page.matches("<details class=\"item\"").count(), 1);
        assert_eq!(page.matches("<div class=\"item\"").count(), 1);
        assert!(
            page.contains("data-b=\"docs/b, &quot;quoted&quot;.md\""),
            "{page}"
        );
        assert!(page.contains(
            "The texts of the 1 most similar pair are shown; the next 1 (similarities from 0."
        ));
        assert!(!page.contains("id=\"left-out\""));
        assert!(page.contains("docs/x</code>: Permission denied"));
        // The files are not there: each text says so.
        assert!(page.contains("could not be read again"));
    }
}
