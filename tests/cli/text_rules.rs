//! The text rules (`ndup::text::TEXT_RULES`): case folding, a leading byte-order mark, the one
//! shingle of a short word document; and indexes and shards made under older rules refused.

use serde_json::Value;

use super::util::Dir;
use crate::corpus::text;

const GREEK: &str = "Ο Σίσυφος κυλούσε την πέτρα του στην κορυφή του λόφου, και η πέτρα \
                     κυλούσε πάλι κάτω, ξανά και ξανά, για πάντα.";

/// `ndup compare A B` as JSON, with `flags`.
fn compare(d: &Dir, a: &str, b: &str, flags: &[&str]) -> Value {
    d.ndup()
        .args(["compare", a, b, "--format", "json"])
        .args(flags)
        .ok()
        .json()
}

/// An upper-case copy is the same text: a Greek final sigma and a German sharp s fold as their
/// capitals do. Exact mode pairs them at 1; without the case step they stay apart.
#[test]
fn upper_case_copies_are_the_same_text() {
    let d = Dir::new();
    d.create("docs/greek.txt", GREEK);
    d.create("docs/GREEK.txt", GREEK.to_uppercase());
    d.create("docs/strasse.txt", "Die große Straße");
    d.create("docs/STRASSE.txt", "DIE GROSSE STRASSE");
    d.create("docs/istanbul.txt", "İstanbul'da ılık bir akşam");
    d.create("docs/ISTANBUL.txt", "İSTANBUL'DA ILIK BIR AKŞAM");
    for (a, b) in [("greek", "GREEK"), ("strasse", "STRASSE")] {
        let v = compare(&d, &format!("docs/{a}.txt"), &format!("docs/{b}.txt"), &[]);
        assert_eq!(
            (v["jaccard"].as_f64(), v["estimate"].as_f64()),
            (Some(1.0), Some(1.0)),
            "{a}"
        );
        assert_eq!(v["params"]["normalize"], "nfkc+casefold+whitespace+trim");
        let v = compare(
            &d,
            &format!("docs/{a}.txt"),
            &format!("docs/{b}.txt"),
            &["--no-lowercase"],
        );
        assert!(v["jaccard"].as_f64().unwrap() < 0.5, "{a}: {v}");
    }
    // Default (not Turkic) folding: the capital I is i, so ILIK is not ılık; the dotted capital
    // keeps its dot, as it lowercased before.
    let v = compare(&d, "docs/istanbul.txt", "docs/ISTANBUL.txt", &[]);
    assert!(v["jaccard"].as_f64().unwrap() < 1.0, "{v}");
    let run = d.scan().args(["docs", "--exact", "-t", "1"]).ok();
    let mut pairs: Vec<(String, String)> = run
        .records()
        .iter()
        .filter(|r| r["type"] == "pair")
        .map(|r| {
            (
                r["a"].as_str().unwrap().into(),
                r["b"].as_str().unwrap().into(),
            )
        })
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            ("docs/GREEK.txt".to_string(), "docs/greek.txt".to_string()),
            (
                "docs/STRASSE.txt".to_string(),
                "docs/strasse.txt".to_string()
            ),
        ],
        "{}",
        run.describe()
    );
}

/// A leading byte-order mark is not text: a copy saved with one is the same document in
/// compare, an exact duplicate in dedup, and the same record in a JSON-lines corpus.
#[test]
fn a_byte_order_mark_is_not_text() {
    let d = Dir::new();
    d.create("c.txt", "OK\n");
    d.create("d.txt", b"\xef\xbb\xbfOK\n");
    let v = compare(&d, "c.txt", "d.txt", &[]);
    assert_eq!(
        (v["jaccard"].as_f64(), v["estimate"].as_f64()),
        (Some(1.0), Some(1.0))
    );
    let long = text(3, 200);
    d.create("docs/a.txt", &long);
    d.create("docs/a-bom.txt", format!("\u{feff}{long}"));
    d.create("docs/other.txt", text(4, 200));
    let run = d.ndup().args(["dedup", "docs", "-o", "-"]).ok();
    let drops: Vec<Value> = run
        .records()
        .into_iter()
        .filter(|r| r["type"] == "drop")
        .collect();
    assert_eq!(drops.len(), 1, "{}", run.describe());
    let mut copies = [drops[0]["id"].as_str(), drops[0]["kept"].as_str()];
    copies.sort();
    assert_eq!(
        copies,
        [Some("docs/a-bom.txt"), Some("docs/a.txt")],
        "{}",
        run.describe()
    );
    assert_eq!(drops[0]["reason"], "exact");
    // A record whose text begins with the mark (a JSON string may hold it): the same text.
    let lines = [
        serde_json::json!({"id": "plain", "text": long}).to_string(),
        serde_json::json!({"id": "bom", "text": format!("\u{feff}{long}")}).to_string(),
    ];
    d.create("c.jsonl", lines.join("\n") + "\n");
    let run = d.scan().args(["c.jsonl", "--verify", "exact"]).ok();
    let pair = run
        .records()
        .into_iter()
        .find(|r| r["type"] == "pair")
        .expect("the two records pair");
    assert_eq!(pair["jaccard"], 1.0, "{pair}");
}

/// A word or stop-word document too short for a shingle is one shingle of its words, so
/// punctuation is ignored there as in longer ones; one without a word is its whole text and
/// is not empty.
#[test]
fn short_word_documents_ignore_punctuation() {
    let d = Dir::new();
    d.create("h1.txt", "Hello, world!");
    d.create("h2.txt", "hello world");
    d.create("p1.txt", "!!!");
    d.create("p2.txt", "???");
    for kind in ["word", "stopword"] {
        let v = compare(&d, "h1.txt", "h2.txt", &["--shingle", kind]);
        assert_eq!(
            (v["jaccard"].as_f64(), v["estimate"].as_f64()),
            (Some(1.0), Some(1.0)),
            "{kind}"
        );
        let v = compare(&d, "p1.txt", "p2.txt", &["--shingle", kind]);
        assert_eq!(
            (v["shingles_a"].as_u64(), v["jaccard"].as_f64()),
            (Some(1), Some(0.0)),
            "{kind}"
        );
    }
    // Stop-word shingles: a long document without a stop word compares by its word 3-shingles,
    // so an edited copy is still near.
    let words: Vec<String> = (0..60).map(|i| format!("item{i}")).collect();
    let mut edited = words.clone();
    edited[30] = "changed".into();
    d.create("list.txt", words.join(", "));
    d.create("list-edited.txt", edited.join(", "));
    let v = compare(
        &d,
        "list.txt",
        "list-edited.txt",
        &["--shingle", "stopword"],
    );
    assert_eq!(v["shingles_a"], 58, "{v}");
    assert!(v["jaccard"].as_f64().unwrap() > 0.85, "{v}");
    // Scans agree: the estimate and the exact value, and no document counted empty.
    let run = d
        .scan()
        .args(["h1.txt", "h2.txt", "p1.txt", "p2.txt", "--shingle", "word"])
        .args(["--verify", "exact", "-t", "0.5"])
        .ok();
    let records = run.records();
    let pairs: Vec<&Value> = records.iter().filter(|r| r["type"] == "pair").collect();
    assert_eq!(pairs.len(), 1, "{}", run.describe());
    assert_eq!(
        (pairs[0]["jaccard"].as_f64(), pairs[0]["estimate"].as_f64()),
        (Some(1.0), Some(1.0))
    );
    assert_eq!(records.last().unwrap()["empty"], 0);
}

/// The parameters as an ndup of text rules 1 wrote them: no `text_rules`.
fn as_written_by_rules_1(params: &str) -> String {
    let old = params.replace(",\"text_rules\":2", "");
    assert_ne!(old, params, "{params}");
    old
}

/// An index built under older text rules (here: its parameters as such an ndup wrote them) is
/// refused by query and update, naming the normalization; so are such signature shards.
#[test]
fn indexes_and_shards_of_older_text_rules_are_refused() {
    let d = Dir::new();
    d.create("c/a.txt", text(1, 100));
    d.create("c/b.txt", text(2, 100));
    d.ndup()
        .args(["index", "build", "--index", "i.db", "c"])
        .ok();
    let conn = rusqlite::Connection::open(d.path().join("i.db")).unwrap();
    let params: String = conn
        .query_row("SELECT value FROM meta WHERE key = 'params'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let old = as_written_by_rules_1(&params);
    let fingerprint = serde_json::from_str::<ndup::index::SigningParams>(&old)
        .unwrap()
        .fingerprint();
    conn.execute("UPDATE meta SET value = ?1 WHERE key = 'params'", [&old])
        .unwrap();
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'fingerprint'",
        [&fingerprint],
    )
    .unwrap();
    drop(conn);
    const WHY: &str = "index was built with normalization nfkc+lowercase+whitespace+trim under \
                       text rules 1 (an older ndup's: make it again with this one), this run uses \
                       normalization nfkc+casefold+whitespace+trim under text rules 2";
    for args in [
        &["query", "--index", "i.db", "c/a.txt"][..],
        &["index", "update", "--index", "i.db", "c"],
        &["scan", "c", "--index", "i.db"],
    ] {
        let r = d.ndup().args(args).code(2);
        assert!(r.stderr.contains(WHY), "{args:?}\n{}", r.describe());
        assert!(r.stderr.contains("rebuild the index"), "{}", r.describe());
    }

    // Shards: the same parameters, patched in place in the Parquet footer (blank-padded to the
    // same length, so the file stays whole).
    d.ndup().args(["sign", "c", "--out", "s"]).ok();
    let path = d.path().join("s/part-00000.parquet");
    let mut bytes = std::fs::read(&path).unwrap();
    let key = b",\"text_rules\":2";
    let mut found = 0;
    while let Some(at) = bytes.windows(key.len()).position(|w| w == key) {
        bytes[at..at + key.len()].fill(b' ');
        found += 1;
    }
    assert!(found > 0);
    std::fs::write(&path, bytes).unwrap();
    let r = d.scan().args(["--signatures", "s"]).code(2);
    assert!(
        r.stderr.contains(
            "signed with normalization nfkc+lowercase+whitespace+trim under text rules 1"
        ),
        "{}",
        r.describe()
    );
}
