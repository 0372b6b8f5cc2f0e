//! `--format html` (scan) and `--html-report` (dedup): a self-contained page for a person. The
//! pages are read back with a small start-tag parser; the browser tests at the end load them in
//! headless Chromium and check the DOM the page's own script leaves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::util::{Dir, PLANTED_PAIRS, owned, parse_jsonl, planted};
use crate::corpus::{edited, prose, text};

/// `&amp;` and the other entities the report writes, decoded.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A start tag: where it is and its attributes (values decoded; a bare attribute is "").
#[derive(Debug)]
struct Tag {
    at: usize,
    attrs: BTreeMap<String, String>,
}

impl Tag {
    fn get(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }

    fn classes(&self) -> Vec<&str> {
        self.get("class").unwrap_or("").split_whitespace().collect()
    }
}

/// Every `<name ...>` start tag of `html`. Enough for what the report and Chromium write:
/// double-quoted values, no `>` inside a value (the report escapes it).
fn start_tags(html: &str, name: &str) -> Vec<Tag> {
    let open = format!("<{name}");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = html[from..].find(&open) {
        let at = from + i;
        let rest = &html[at + open.len()..];
        from = at + open.len();
        if !rest.starts_with([' ', '>', '\n']) {
            continue;
        }
        let end = rest.find('>').expect("a start tag ends");
        let mut attrs = BTreeMap::new();
        let mut s = rest[..end].trim();
        while !s.is_empty() {
            let name_end = s.find(['=', ' ', '\n']).unwrap_or(s.len());
            let name = s[..name_end].to_string();
            s = &s[name_end..];
            if let Some(v) = s.strip_prefix("=\"") {
                let close = v.find('"').expect("a closing quote");
                attrs.insert(name, unescape(&v[..close]));
                s = &v[close + 1..];
            } else {
                attrs.insert(name, String::new());
            }
            s = s.trim_start();
        }
        out.push(Tag { at, attrs });
    }
    out
}

/// The items (pairs, or dropped documents) of a page.
/// The listed items: those with their texts (`details`), then those without (`div`).
fn items(html: &str) -> Vec<Tag> {
    let mut items: Vec<Tag> = ["details", "div"]
        .iter()
        .flat_map(|tag| start_tags(html, tag))
        .filter(|t| t.classes().contains(&"item"))
        .collect();
    items.sort_by_key(|t| t.at);
    items
}

/// The items shown with their texts.
fn with_texts(html: &str) -> usize {
    items(html)
        .iter()
        .filter(|t| html[t.at..].starts_with("<details"))
        .count()
}

/// The markup of `item`, up to its end.
fn body<'h>(html: &'h str, item: &Tag) -> &'h str {
    let rest = &html[item.at..];
    &rest[..rest.find("</details>").expect("an item ends")]
}

/// The `(a, b)` ids of the items, sorted, as the pair list of a JSON-lines report.
fn item_ids(html: &str) -> Vec<(String, String)> {
    let mut ids: Vec<(String, String)> = items(html)
        .iter()
        .map(|t| {
            (
                t.get("data-a").unwrap().into(),
                t.get("data-b").unwrap().into(),
            )
        })
        .collect();
    ids.sort();
    ids
}

/// `ndup scan ARGS --format html -o report.html` in `d`; the page.
fn html_report(d: &Dir, args: &[&str]) -> String {
    d.scan()
        .args(args)
        .args(["--format", "html", "-o", "report.html"])
        .ok();
    d.read("report.html")
}

#[test]
fn every_pair_is_in_the_report_with_its_texts_and_measures() {
    let d = planted();
    let html = html_report(&d, &["docs"]);
    let jsonl = d.scan().arg("docs").ok();
    eqnice!(owned(&PLANTED_PAIRS), item_ids(&html));
    eqnice!(jsonl.pair_ids(), item_ids(&html));
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(html.ends_with("</html>\n"));
    // The most similar first: the two exact copies, then the edits.
    let first = &items(&html)[0];
    eqnice!(
        ("docs/original.txt", "docs/sub/copy.txt"),
        (first.get("data-a").unwrap(), first.get("data-b").unwrap())
    );
    assert!(body(&html, first).contains("The normalized texts are identical (150 words)."));
    for item in items(&html) {
        let (a, b) = (item.get("data-a").unwrap(), item.get("data-b").unwrap());
        let p = jsonl.expect_pair(a, b);
        let markup = body(&html, &item);
        assert!(
            markup.contains(&format!("estimate {:.4}", p.estimate)),
            "{markup}"
        );
        match p.jaccard {
            Some(j) => assert!(markup.contains(&format!("jaccard {j:.4}")), "{markup}"),
            None => assert!(markup.contains("exact Jaccard not computed"), "{markup}"),
        }
        if a == "docs/edited.txt" {
            // Five words replaced: five passages struck out on the left, marked on the right.
            assert_eq!(markup.matches("<del>").count(), 5, "{markup}");
            assert_eq!(markup.matches("<ins>").count(), 5, "{markup}");
            assert!(markup.contains(
                "5 differing passages: 5 words only on the left, 5 words only on the right."
            ));
        }
    }
    // The summary, the parameters and both charts; the clusters; the skipped documents.
    for part in [
        "<th>documents</th><td class=\"num\">7</td>",
        "<th>pairs reported</th><td class=\"num\">3</td>",
        "<th>seed</th><td><code>42</code>",
        "<th>bands</th>",
        "aria-label=\"Histogram of the 3 reported similarities\"",
        "aria-label=\"S-curve of ",
        "threshold 0.80",
        "<h2>Clusters (1)</h2>",
        "<span class=\"muted\">3 documents, 3 pairs</span>",
        "<code class=\"id\">docs/logo.png</code>: binary file",
    ] {
        assert!(html.contains(part), "{part}\n{html}");
    }
    // One file: nothing is fetched, and only the report's own script and style may run.
    for outside in ["src=", "href=", "@import", "url(", "http://", "https://"] {
        assert!(!html.contains(outside), "{outside}");
    }
    assert!(html.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-"
    ));
}

#[test]
fn ids_and_texts_from_the_corpus_cannot_inject_markup() {
    let d = Dir::new();
    let hostile_text = |n: u64, v: u64| {
        // `v` differs between the two documents of a pair, so the markup is in what differs
        // (and its context), which the report shows.
        {
            format!(
                "{} <script>alert('text{v}')</script> <img src=x onerror=alert({v})> \
                 </td></tr></table> <!-- \" ' & \u{1b}[2J \u{202e}reversed{v} {}",
                text(n, 60),
                text(n + 1, 60)
            )
        }
    };
    let records = [
        json!({"id": "<script>alert('id')</script>", "text": hostile_text(1, 1)}),
        json!({"id": "\" onmouseover=\"alert(1)", "text": hostile_text(1, 2)}),
        json!({"id": "line\nbreak\u{1b}[31m\u{202e}", "text": hostile_text(5, 1)}),
        json!({"id": "x' onfocus='alert(2)", "text": hostile_text(5, 2)}),
    ];
    let corpus: String = records.iter().map(|r| format!("{r}\n")).collect();
    d.create("c.jsonl", corpus);
    // File names too: markup and quotes are legal in a Unix name.
    d.create("docs/<b onclick=alert(3)>.md", hostile_text(9, 1));
    d.create("docs/a\"b'c&d.md", hostile_text(9, 2));
    for (args, pairs) in [(vec!["c.jsonl"], 2), (vec!["docs"], 1)] {
        let html = html_report(&d, &args);
        assert_eq!(items(&html).len(), pairs, "{html}");
        // The report's own script is the only one, its own style the only style.
        assert_eq!(html.matches("<script").count(), 1);
        assert_eq!(html.matches("</script").count(), 1);
        assert_eq!(html.matches("<style").count(), 1);
        for bad in [
            "<img",
            "<b ",
            "</td></tr></table> ",
            "<!--",
            "\u{1b}",
            "\u{202e}",
            "onmouseover=\"",
            "onfocus='",
        ] {
            assert!(!html.contains(bad), "{bad:?} is in the page");
        }
        assert!(html.contains("&lt;script&gt;alert(&#39;text1&#39;)&lt;/script&gt;"));
        assert!(html.contains("<ins>&lt;script&gt;alert(&#39;text2&#39;)&lt;/script&gt;</ins>"));
        // Control characters are shown, not sent (the text is lowercased, as it was compared).
        assert!(html.contains("<span class=\"ctl\">\\x1b</span>[2j"));
    }
    let html = html_report(&d, &["c.jsonl"]);
    let ids = item_ids(&html)
        .into_iter()
        .flat_map(|(a, b)| [a, b])
        .collect::<Vec<_>>();
    // Ids are shown as the text report shows them, control characters escaped.
    for id in [
        "<script>alert('id')</script>",
        "\" onmouseover=\"alert(1)",
        "line\\nbreak\\x1b[31m\\u{202e}",
        "x' onfocus='alert(2)",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id:?} not in {ids:?}");
    }
    // A record is shown with its source and line.
    assert!(html.contains("<span class=\"muted\">(c.jsonl, line 1)</span>"));
}

/// The corpus of `determinism`, smaller: 20 families of an original, a light and a heavy edit
/// and a copy, in 4 directories.
fn families() -> Dir {
    let d = Dir::new();
    for f in 0..20u64 {
        let dir = format!("corpus/d{}", f % 4);
        let seed = 3000 + f;
        d.create(&format!("{dir}/f{f:02}-original.txt"), text(seed, 120));
        d.create(&format!("{dir}/f{f:02}-light.txt"), edited(seed, 120, 2));
        d.create(&format!("{dir}/f{f:02}-heavy.txt"), edited(seed, 120, 6));
        d.create(&format!("corpus/copies/f{f:02}-copy.txt"), text(seed, 120));
    }
    d
}

#[test]
fn the_report_is_byte_identical_across_runs_and_thread_counts() {
    let d = families();
    let run = |threads: &str| {
        d.scan()
            .args(["corpus", "--format", "html", "-j", threads])
            .ok()
            .stdout
    };
    let one = run("1");
    assert!(items(&one).len() >= 60, "{}", items(&one).len());
    eqnice!(one, run("2"));
    eqnice!(one, run("2"));
    // Nothing of this run in it: no temporary path, no time.
    let tmp = d.path().to_string_lossy().into_owned();
    assert!(!one.contains(&tmp));
    assert!(!one.contains(" s)") && !one.contains("elapsed"));
    // And the same through a file.
    eqnice!(one, html_report(&d, &["corpus", "-j", "2"]));
}

#[test]
fn past_the_limit_the_report_says_what_was_left_out() {
    let d = Dir::new();
    // Twelve pairs of a document and a copy with `i` words replaced: twelve similarities.
    for i in 0..12u64 {
        d.create(&format!("docs/p{i:02}-a.txt"), text(100 + i, 200));
        d.create(
            &format!("docs/p{i:02}-b.txt"),
            edited(100 + i, 200, i as usize),
        );
    }
    let all = html_report(&d, &["docs", "-t", "0.5", "--exact"]);
    assert_eq!(items(&all).len(), 12);
    assert!(!all.contains("id=\"left-out\""));
    // Five with their texts, the other seven listed without them.
    let html = html_report(
        &d,
        &["docs", "-t", "0.5", "--exact", "--html-max-pairs", "5"],
    );
    let listed = items(&html);
    assert_eq!(listed.len(), 12);
    assert!(!html.contains("id=\"left-out\""));
    let with_texts: Vec<&str> = listed
        .iter()
        .filter(|t| html[t.at..].starts_with("<details"))
        .map(|t| t.get("data-a").unwrap())
        .collect();
    // The most similar have their texts: the copies with the fewest edits.
    eqnice!(
        vec![
            "docs/p00-a.txt",
            "docs/p01-a.txt",
            "docs/p02-a.txt",
            "docs/p03-a.txt",
            "docs/p04-a.txt"
        ],
        with_texts
    );
    assert!(html.contains(
        "The texts of the 5 most similar pairs are shown; the next 7 (similarities from 0."
    ));
    // Past ten times the limit, the least similar are left out, and the report says so.
    let html = html_report(
        &d,
        &["docs", "-t", "0.5", "--exact", "--html-max-pairs", "1"],
    );
    assert_eq!(items(&html).len(), 10);
    let note = html
        .split("<p class=\"warn\" id=\"left-out\">")
        .nth(1)
        .expect("a note says what was left out");
    assert!(
        note.starts_with(
            "This report lists the 10 most similar of 12 pairs: 2 are left out, the least \
             similar, with similarities from 0."
        ),
        "{note}"
    );
    assert!(note.contains("(it lists at most 10 times <code>--html-max-pairs</code>, 1)"));
    // The summary and the histogram still count every pair.
    assert!(html.contains("<th>pairs reported</th><td class=\"num\">12</td>"));
    assert!(html.contains("Histogram of the 12 reported similarities"));
    // 0 shows none, and says so.
    let none = html_report(
        &d,
        &["docs", "-t", "0.5", "--exact", "--html-max-pairs", "0"],
    );
    assert_eq!(items(&none).len(), 0);
    assert!(none.contains("This report lists the 0 most similar of 12 pairs: 12 are left out"));
}

#[test]
fn a_long_document_shows_only_the_regions_that_differ() {
    let d = Dir::new();
    // About 200 KB of text, and a copy with three sentences changed.
    let words = crate::corpus::Rng::new(77).words(30_000);
    let mut copy = words.clone();
    for at in [1_000, 15_000, 29_000] {
        copy[at] = "changedword".into();
    }
    d.create("docs/long.txt", prose(&words));
    d.create("docs/long-copy.txt", prose(&copy));
    let html = html_report(&d, &["docs"]);
    assert!(d.read("docs/long.txt").len() > 190_000);
    let item = &items(&html)[0];
    let markup = body(&html, item);
    assert_eq!(
        markup.matches("<del>changedword</del>").count(),
        3,
        "{markup}"
    );
    assert_eq!(markup.matches("<tr class=\"gap\">").count(), 4, "{markup}");
    // 1,000 words before the first change, 8 of them shown.
    assert!(
        markup.contains("⋯ 992 words the same on both sides ⋯"),
        "{markup}"
    );
    assert!(markup.len() < 8_000, "{}", markup.len());
    assert!(html.len() < 40_000, "{}", html.len());
}

#[test]
fn a_text_that_cannot_be_read_again_is_said_so() {
    let d = Dir::new();
    let corpus = [
        json!({"id": "a", "text": text(1, 150)}),
        json!({"id": "b", "text": edited(1, 150, 1)}),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect::<String>();
    // Standard input is kept for a second reading only when verification may read it again.
    let run = d
        .scan()
        .args(["-", "--verify", "signature", "--format", "html"])
        .stdin(corpus)
        .ok();
    let html = run.stdout;
    assert_eq!(items(&html).len(), 1);
    assert!(
        html.contains(
            "<code class=\"id\">a</code> could not be read again: standard input is read only \
             once (it was not kept)"
        ),
        "{html}"
    );
}

/// `docs/` with `a.md`, its exact copy `a-copy.md` (the same text in capitals), a
/// near-duplicate `a-edit.md` and an unrelated `b.md`.
fn dedup_tree() -> Dir {
    let d = Dir::new();
    d.create("docs/a.md", text(30, 150));
    d.create("docs/a-copy.md", text(30, 150).to_uppercase());
    d.create("docs/a-edit.md", edited(30, 150, 2));
    d.create("docs/b.md", text(31, 150));
    d
}

#[test]
fn dedup_writes_its_drop_list_as_html() {
    let d = dedup_tree();
    d.ndup()
        .args([
            "dedup",
            "docs",
            "-o",
            "list.jsonl",
            "--html-report",
            "drops.html",
        ])
        .ok();
    let list = parse_jsonl(&d.read("list.jsonl"));
    let mut drops: Vec<(String, String)> = list
        .iter()
        .filter(|r| r["type"] == "drop")
        .map(|r| {
            (
                r["id"].as_str().unwrap().into(),
                r["kept"].as_str().unwrap().into(),
            )
        })
        .collect();
    drops.sort();
    assert_eq!(drops.len(), 2, "{list:?}");
    let html = d.read("drops.html");
    // Each dropped document (left) beside the one kept instead (right).
    eqnice!(drops, item_ids(&html));
    for item in items(&html) {
        let markup = body(&html, &item);
        // `--keep first`: a-copy.md, first in walk order, is kept; a.md and a-edit.md go.
        assert_eq!(item.get("data-b"), Some("docs/a-copy.md"));
        if item.get("data-a") == Some("docs/a.md") {
            assert!(markup.contains("exact duplicate: the same text once normalized"));
            assert!(markup.contains("The normalized texts are identical."));
        } else {
            assert!(markup.contains("near duplicate: "), "{markup}");
            assert_eq!(markup.matches("<del>").count(), 2, "{markup}");
            assert!(markup.contains(
                "<th>dropped: <code class=\"id\">docs/a-edit.md</code></th>\
                 <th>kept: <code class=\"id\">docs/a-copy.md</code></th>"
            ));
        }
    }
    assert!(html.contains(
        "<th>dropped: exact duplicates (same normalized text)</th><td class=\"num\">1</td>"
    ));
    assert!(html.contains("<span class=\"muted\">3 documents</span>"));
    assert!(
        html.contains("<code class=\"id\">docs/a-copy.md</code> <span class=\"muted\">kept</span>")
    );
    // The same page whatever the output, and JSON lines in work the same way.
    d.ndup()
        .args([
            "dedup",
            "docs",
            "-o",
            "-",
            "--html-report",
            "again.html",
            "-j",
            "1",
        ])
        .ok();
    eqnice!(html, d.read("again.html"));
    let corpus = [
        json!({"id": "r1", "text": text(40, 150)}),
        json!({"id": "r2", "text": edited(40, 150, 1)}),
        json!({"id": "r3", "text": text(41, 150)}),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect::<String>();
    d.create("c.jsonl", corpus);
    let run = d
        .ndup()
        .args(["dedup", "c.jsonl", "-o", "kept.jsonl", "--html-report", "-"])
        .ok();
    eqnice!(
        vec![("r2".to_string(), "r1".to_string())],
        item_ids(&run.stdout)
    );
    assert!(run.stdout.contains("(c.jsonl, line 2)"));
    assert_eq!(d.read("kept.jsonl").lines().count(), 2);
}

#[test]
fn dedup_limits_its_report_and_refuses_to_write_it_over_the_output_or_an_input() {
    let d = dedup_tree();
    d.ndup()
        .args([
            "dedup",
            "docs",
            "-o",
            "list.jsonl",
            "--html-report",
            "drops.html",
        ])
        .args(["--html-max-pairs", "1"])
        .ok();
    let html = d.read("drops.html");
    assert_eq!((items(&html).len(), with_texts(&html)), (2, 1));
    assert!(html.contains(
        "The texts of the 1 most similar dropped document are shown; the next 1 (similarities"
    ));
    for (report, why) in [
        (
            "list.jsonl",
            "--output and --html-report name the same place",
        ),
        (
            "docs/b.md",
            "the HTML report would overwrite the input docs/b.md",
        ),
    ] {
        let run = d
            .ndup()
            .args(["dedup", "docs/a.md", "docs/b.md", "-o", "list.jsonl"])
            .args(["--html-report", report])
            .code(2);
        assert!(run.stderr.contains(why), "{}", run.describe());
    }
    let run = d
        .ndup()
        .args(["dedup", "docs", "-o", "-", "--html-report", "-"])
        .code(2);
    assert!(
        run.stderr.contains("name the same place"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_configuration_in_the_tree_may_lower_the_limit_but_not_raise_it_or_write_a_report() {
    let d = dedup_tree();
    d.create("docs/ndup.toml", "format = \"html\"\nhtml-max-pairs = 1\n");
    let run = d.scan().args(["docs", "--exclude", "ndup.toml"]).ok();
    assert!(run.stdout.starts_with("<!DOCTYPE html>"));
    assert_eq!(with_texts(&run.stdout), 1);
    // The command line still wins.
    let run = d
        .scan()
        .args(["docs", "--exclude", "ndup.toml", "--html-max-pairs", "10"])
        .ok();
    assert_eq!(with_texts(&run.stdout), 3);
    for (file, why) in [
        (
            "html-max-pairs = 5000\n",
            "`html-max-pairs` raises a limit above its default of 1000",
        ),
        ("html-report = \"x.html\"\n", "`html-report` writes a file"),
    ] {
        d.create("docs/ndup.toml", file);
        let run = d.ndup().args(["dedup", "docs", "-o", "list.jsonl"]).code(2);
        assert!(run.stderr.contains(why), "{}", run.describe());
    }
}

// ---------------------------------------------------------------------------------------------
// In a browser

/// Headless Chromium, when installed. Without it the browser tests print a note and pass,
/// unless `NDUP_REQUIRE_BROWSER` is set (as CI does, where it is installed): then they fail.
fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        if std::env::var_os("NDUP_REQUIRE_BROWSER").is_some() {
            panic!(
                "NDUP_REQUIRE_BROWSER is set but Chromium is not installed (apt-get install chromium)"
            );
        }
        eprintln!("note: Chromium is not installed: the browser test is skipped");
    }
    found
}

/// Chromium in `dir`: its profile, cache and crash reports stay there.
fn chromium_command(chromium: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(chromium);
    cmd.env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        .env("XDG_CACHE_HOME", dir)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs `cmd`, killing it after `secs` (a guard against a hung browser, not a timing check).
fn run_with_timeout(mut cmd: Command, secs: u64) -> (String, Duration) {
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start Chromium");
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::BufReader::new(stdout), &mut s).unwrap();
        s
    });
    let stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s).unwrap();
        s
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let elapsed = start.elapsed();
            let out = reader.join().unwrap();
            let err = errors.join().unwrap();
            assert!(status.success(), "Chromium failed: {status}\n{err}");
            return (out, elapsed);
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium ran longer than {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The DOM of `page` (with `fragment` after `#`, if any) once loaded and its script has run.
fn dump_dom(chromium: &Path, d: &Dir, page: &Path, fragment: &str) -> (String, Duration) {
    let mut url = format!("file://{}", page.display());
    if !fragment.is_empty() {
        url = format!("{url}#{fragment}");
    }
    let mut cmd = chromium_command(chromium, &d.path().join("browser"));
    cmd.args(["--dump-dom", &url]);
    run_with_timeout(cmd, 180)
}

/// The attributes of the `<body>` of a dumped DOM.
fn body_tag(dom: &str) -> Tag {
    start_tags(dom, "body").remove(0)
}

#[test]
fn chromium_shows_every_pair_marks_the_differences_and_filters_from_the_fragment() {
    let Some(chromium) = chromium() else { return };
    let d = Dir::new();
    // Four families: an original in guide/, an edited copy in archive/ (one word changed, so
    // the marked words are known) and, for two, an exact copy in mirror/.
    for f in 0..4u64 {
        let base = text(500 + f, 150);
        d.create(&format!("site/guide/page{f}.md"), &base);
        d.create(
            &format!("site/archive/page{f}-old.md"),
            base.replacen(' ', &format!(" zebra{f} "), 1),
        );
        if f % 2 == 0 {
            d.create(&format!("site/mirror/page{f}.md"), &base);
        }
    }
    let html = html_report(&d, &["site"]);
    let pairs = item_ids(&html);
    assert_eq!(pairs.len(), 8, "{pairs:?}");
    let page = d.path().join("report.html");

    let (dom, _) = dump_dom(&chromium, &d, &page, "");
    let page_body = body_tag(&dom);
    // The script ran: it says so, and showed the controls it drives.
    assert_eq!(page_body.get("data-script"), Some("ready"), "{dom}");
    assert!(
        start_tags(&dom, "div")
            .iter()
            .any(|t| t.get("id") == Some("controls") && t.get("hidden").is_none())
    );
    // Every pair is in the DOM, none hidden, and each edit is marked on its side.
    let shown = items(&dom);
    eqnice!(pairs, item_ids(&dom));
    assert!(shown.iter().all(|t| t.get("hidden").is_none()));
    for f in 0..4 {
        let old = format!("site/archive/page{f}-old.md");
        let item = shown
            .iter()
            .find(|t| {
                t.get("data-a") == Some(old.as_str())
                    && t.get("data-b") == Some(&*format!("site/guide/page{f}.md"))
            })
            .expect("the edit's pair");
        let markup = body(&dom, item);
        assert!(
            markup.contains(&format!("<del>zebra{f}</del>"))
                || markup.contains(&format!("<ins>zebra{f}</ins>")),
            "{markup}"
        );
    }
    assert!(
        dom.contains("<span id=\"count\" class=\"muted\">8 of 8 shown</span>"),
        "{dom}"
    );

    // `#filter=archive`: only the pairs with an archived page stay; the rest are hidden by the
    // script, which marks them.
    let (dom, _) = dump_dom(&chromium, &d, &page, "filter=archive");
    assert_eq!(body_tag(&dom).get("data-filter"), Some("archive"));
    let mut visible = 0;
    for t in items(&dom) {
        let hit = t.get("data-a").unwrap().contains("archive")
            || t.get("data-b").unwrap().contains("archive");
        assert_eq!(t.get("hidden").is_none(), hit, "{:?}", t.attrs);
        assert_eq!(t.classes().contains(&"filtered-out"), !hit, "{:?}", t.attrs);
        visible += usize::from(hit);
    }
    assert_eq!(visible, 6);
    assert!(dom.contains(">6 of 8 shown<"));
    // The clusters are filtered too: a cluster stays when one of its members matches.
    for t in start_tags(&dom, "li")
        .into_iter()
        .filter(|t| t.classes().contains(&"cluster"))
    {
        let hit = t.get("data-ids").unwrap().contains("archive");
        assert_eq!(t.get("hidden").is_none(), hit);
    }
    // A filter is decoded from the URL and matches case-insensitively; `sort` reorders.
    let (dom, _) = dump_dom(&chromium, &d, &page, "filter=PAGE1%2D&sort=sim-asc");
    let shown: Vec<Tag> = items(&dom)
        .into_iter()
        .filter(|t| t.get("hidden").is_none())
        .collect();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].get("data-a"), Some("site/archive/page1-old.md"));
    assert_eq!(body_tag(&dom).get("data-sort"), Some("sim-asc"));
    let sims: Vec<f64> = items(&dom)
        .iter()
        .map(|t| t.get("data-sim").unwrap().parse().unwrap())
        .collect();
    assert!(sims.windows(2).all(|w| w[0] <= w[1]), "{sims:?}");
}

/// The size a report of 10,000 pairs stays under.
const TEN_THOUSAND_PAIRS_MAX_BYTES: usize = 8 << 20;

#[test]
fn ten_thousand_pairs_stay_under_the_size_limit_and_load_in_the_browser() {
    let d = Dir::new();
    // 1,000 families of five 300-word documents, each copy with its own words replaced: every
    // family gives ten pairs, 10,000 in all.
    for f in 0..1_000u64 {
        let seed = 10_000 + f;
        let dir = format!("big/f{:03}", f / 10);
        d.create(&format!("{dir}/{f:04}-0.txt"), text(seed, 300));
        for e in 1..5 {
            d.create(&format!("{dir}/{f:04}-{e}.txt"), edited(seed, 300, e));
        }
    }
    let pairs = d
        .scan()
        .args(["big", "--exact", "--format", "csv"])
        .ok()
        .stdout
        .lines()
        .count()
        - 1;
    assert_eq!(pairs, 10_000);

    // By default the report shows the texts of the 1,000 most similar pairs and lists the
    // other 9,000 without them: every pair is there.
    let start = Instant::now();
    let html = html_report(&d, &["big", "--exact"]);
    let written = start.elapsed();
    assert_eq!(items(&html).len(), 10_000);
    assert!(html.contains(
        "The texts of the 1,000 most similar pairs are shown; the next 9,000 (similarities"
    ));
    assert!(!html.contains("id=\"left-out\""));
    assert!(
        html.len() < TEN_THOUSAND_PAIRS_MAX_BYTES,
        "{} bytes, over the limit of {TEN_THOUSAND_PAIRS_MAX_BYTES}",
        html.len()
    );
    eprintln!(
        "10,000 pairs: {} bytes of HTML, written in {:.2} s (scan included)",
        html.len(),
        written.as_secs_f64()
    );

    let Some(chromium) = chromium() else { return };
    let page = d.path().join("report.html");
    let (dom, wall) = dump_dom(&chromium, &d, &page, "filter=0042-");
    let body = body_tag(&dom);
    assert_eq!(body.get("data-script"), Some("ready"));
    assert_eq!(items(&dom).len(), 10_000);
    assert_eq!(
        items(&dom)
            .iter()
            .filter(|t| t.get("hidden").is_none())
            .count(),
        10
    );
    // How long the page took, for people (no assertion: a busy machine is slower): the load
    // event's time as the page itself measured it, and the whole browser run.
    eprintln!(
        "10,000 pairs in Chromium: load event at {} ms; the browser ran {:.2} s in all",
        body.get("data-load-ms").unwrap_or("?"),
        wall.as_secs_f64()
    );
}

/// `ndup dedup --format html` writes the same report to --output that --html-report writes
/// beside the corpus; a `format` in ndup.toml for scan's formats leaves dedup alone, and a
/// [dedup] one applies.
#[test]
fn dedup_format_html_writes_the_report_to_the_output() {
    let d = dedup_tree();
    d.ndup()
        .args([
            "dedup",
            "docs",
            "-o",
            "list.jsonl",
            "--html-report",
            "drops.html",
        ])
        .ok();
    d.ndup()
        .args(["dedup", "docs", "--format", "html", "-o", "out.html"])
        .ok();
    assert_eq!(d.read("out.html"), d.read("drops.html"));
    let run = d
        .ndup()
        .args([
            "dedup",
            "docs",
            "--format",
            "html",
            "-o",
            "a.html",
            "--html-report",
            "b.html",
        ])
        .code(2);
    eqnice!(
        vec!["ndup: --format html already writes the HTML report to --output: drop --html-report"],
        run.stderr_lines()
    );

    d.create("docs/ndup.toml", "format = \"csv\"\n");
    d.ndup().args(["dedup", "docs", "-o", "list2.jsonl"]).ok();
    // The same list (ndup.toml, a file of the tree, is one more document kept).
    let without_toml: String = d
        .read("list2.jsonl")
        .lines()
        .filter(|l| !l.contains("docs/ndup.toml"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(without_toml, d.read("list.jsonl"));
    d.create(
        "docs/ndup.toml",
        "format = \"csv\"\n[dedup]\nformat = \"html\"\n",
    );
    d.ndup().args(["dedup", "docs", "-o", "out2.html"]).ok();
    assert!(d.read("out2.html").starts_with("<!DOCTYPE html>"));
}
