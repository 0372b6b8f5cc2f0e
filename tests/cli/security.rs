//! What a tree written by someone else, and the paths a user names, can make ndup do: a found
//! `ndup.toml` only shapes the scan of its tree; names never reach a terminal or a text report
//! raw; `-o` never replaces what is not a regular file, nor an input.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};

use super::util::Dir;
use crate::corpus::text;

/// A tree with two identical documents, one of them under a name that tries to inject a line.
fn evil_tree(d: &Dir) -> &'static str {
    let body = text(7, 80);
    d.create("evil/a.md", &body);
    let name = "evil/x\ntouch PWNED\n#.md";
    d.create(name, &body);
    name
}

/// The attack of the hardening issue: a scanned tree's ndup.toml wrote the text report, file
/// names raw, into a file the user later sources.
#[test]
fn a_found_config_cannot_choose_where_the_report_goes() {
    let d = Dir::new();
    evil_tree(&d);
    let victim = d.path().join("victim/.bashrc");
    d.mkdir("victim");
    d.create(
        "evil/ndup.toml",
        format!("output = \"{}\"\nformat = \"text\"\n", victim.display()),
    );
    let run = d.scan().arg("evil").code(2);
    assert!(
        !victim.exists(),
        "the found config wrote {}",
        victim.display()
    );
    eqnice!("", run.stdout);
    eqnice!(
        vec![
            "ndup: evil/ndup.toml: `output` writes a file: a configuration found in the scanned \
             tree may only shape the scan; give it on the command line, or name this file with \
             --config"
        ],
        run.stderr_lines()
    );

    // Named with --config, the file is the user's own choice; the names are escaped.
    d.scan().args(["evil", "--config", "evil/ndup.toml"]).ok();
    let report = std::fs::read_to_string(&victim).unwrap();
    assert!(
        !report.lines().any(|l| l.starts_with("touch")),
        "a name broke a line of the text report:\n{report}"
    );
    assert!(report.contains("evil/x\\ntouch PWNED\\n#.md"), "{report}");
}

#[test]
fn a_found_config_may_not_write_read_outside_or_set_resources() {
    let d = Dir::new();
    d.create("tree/a.md", text(1, 60));
    d.create("tree/b.md", text(1, 60));
    d.create("list.txt", "tree/a.md\n");
    for (line, why) in [
        ("write-baseline = \"stolen.json\"", "writes a file"),
        ("index = \"stolen.db\"", "writes a file"),
        (
            "files-from = \"list.txt\"",
            "reads outside the scanned tree",
        ),
        ("follow = true", "reads outside the scanned tree"),
        ("threads = 4096", "sets the machine's resources"),
        ("max-memory = \"1T\"", "sets the machine's resources"),
        ("[scan]\noutput = \"stolen.json\"", "writes a file"),
    ] {
        d.create("tree/ndup.toml", line);
        let run = d.scan().arg("tree").code(2);
        assert!(run.stderr.contains(why), "{line}: {}", run.describe());
        assert!(run.stderr.contains("tree/ndup.toml"), "{}", run.describe());
        assert!(!d.path().join("stolen.json").exists());
        assert!(!d.path().join("stolen.db").exists());
    }
    // What shapes the scan is taken.
    d.create(
        "tree/ndup.toml",
        "threshold = 0.95\nformat = \"jsonl\"\nexclude = [\"b.md\", \"ndup.toml\"]\n",
    );
    let run = d.scan().arg("tree").ok();
    assert_eq!(run.params()["threshold"], 0.95, "{}", run.describe());
    assert_eq!(run.count("documents"), 1);
    // The command line may still say what the file may not.
    d.create("tree/ndup.toml", "threshold = 0.95\n");
    d.scan().args(["tree", "-o", "mine.json"]).ok();
    assert!(d.path().join("mine.json").exists());
}

#[test]
fn a_found_config_reads_a_baseline_only_inside_its_tree() {
    let d = Dir::new();
    let body = text(3, 60);
    d.create("tree/a.md", &body);
    d.create("tree/b.md", &body);
    d.scan()
        .args(["tree", "--write-baseline", "tree/base.json"])
        .ok();
    std::fs::copy(
        d.path().join("tree/base.json"),
        d.path().join("outside.json"),
    )
    .unwrap();

    d.create("tree/ndup.toml", "baseline = \"tree/base.json\"\n");
    let run = d.scan().arg("tree").ok();
    assert_eq!(run.pairs().len(), 0, "{}", run.describe());
    assert_eq!(run.count("baseline_pairs"), 1);

    d.create("tree/ndup.toml", "baseline = \"outside.json\"\n");
    let run = d.scan().arg("tree").code(2);
    assert!(
        run.stderr
            .contains("names outside.json, which is not a file inside the scanned tree"),
        "{}",
        run.describe()
    );
    // Nor through a link in the tree.
    d.link("../outside.json", "tree/link.json");
    d.create("tree/ndup.toml", "baseline = \"tree/link.json\"\n");
    d.scan().arg("tree").code(2);
    d.create("tree/ndup.toml", "stopwords = \"/etc/passwd\"\n");
    d.scan().arg("tree").code(2);
}

#[test]
fn control_characters_in_names_are_escaped_on_terminals_and_in_text() {
    let d = Dir::new();
    let name = evil_tree(&d);
    d.create("evil/\x1b[31mred.md", text(7, 80));
    d.create("evil/\x1b[32mbin.md", b"\0\x1b[2J");
    let run = d.scan().args(["evil", "--format", "text"]).ok();
    assert!(
        run.stdout.contains("evil/x\\ntouch PWNED\\n#.md"),
        "{}",
        run.describe()
    );
    assert!(!run.stdout.contains(name));
    assert!(!run.stdout.contains('\x1b') && !run.stderr.contains('\x1b'));
    assert!(
        run.stdout.contains("evil/\\x1b[31mred.md"),
        "{}",
        run.describe()
    );
    // JSON keeps the name itself, quoted as JSON quotes it.
    let run = d.scan().arg("evil").ok();
    assert!(run.pair("evil/a.md", name).is_some(), "{}", run.describe());
}

/// `-o /dev/null` as root replaced the system's device node with a regular file.
#[test]
fn output_to_a_device_writes_in_place() {
    let d = Dir::new();
    d.create("docs/a.md", text(5, 50));
    d.create("docs/b.md", text(5, 50));
    let null = d.path().join("null");
    let made = std::process::Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mknod unavailable (not root?): skipping");
        return;
    }
    d.scan().args(["docs", "-o", "null"]).ok();
    d.scan().args(["docs", "--write-baseline", "null"]).ok();
    d.ndup().args(["dedup", "docs", "-o", "null"]).ok();
    let m = std::fs::symlink_metadata(&null).unwrap();
    assert!(
        m.file_type().is_char_device(),
        "the device node was replaced"
    );
}

#[test]
fn output_follows_links_keeps_modes_and_dash_is_stdout() {
    let d = Dir::new();
    d.create("docs/a.md", text(5, 50));
    d.create("docs/b.md", text(5, 50));
    d.create("real.json", "");
    std::fs::set_permissions(
        d.path().join("real.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    d.link("real.json", "link.json");
    d.scan().args(["docs", "-o", "link.json"]).ok();
    assert!(
        std::fs::symlink_metadata(d.path().join("link.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(d.read("real.json").contains("\"type\":\"pair\""));
    let mode = std::fs::metadata(d.path().join("real.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);

    let run = d.scan().args(["docs", "-o", "-"]).ok();
    assert_eq!(run.pairs().len(), 1);
    assert!(!d.path().join("-").exists());
}

/// `ndup scan c.jsonl -o c.jsonl` replaced the corpus with the report.
#[test]
fn output_over_an_input_is_refused_before_any_work() {
    let d = Dir::new();
    let line = |id: u32| serde_json::json!({"id": id, "text": text(9, 40)}).to_string() + "\n";
    d.create("c.jsonl", line(1) + &line(2));
    let before = d.read("c.jsonl");
    for args in [
        vec!["c.jsonl", "-o", "c.jsonl"],
        vec!["c.jsonl", "-o", "./c.jsonl"],
        vec!["c.jsonl", "--write-baseline", "c.jsonl"],
    ] {
        let run = d.scan().args(&args).code(2);
        assert!(
            run.stderr.contains("would overwrite the input"),
            "{}",
            run.describe()
        );
        eqnice!("", run.stdout);
    }
    eqnice!(before, d.read("c.jsonl"));

    let run = d
        .scan()
        .args(["c.jsonl", "-o", "x.json", "--write-baseline", "./x.json"])
        .code(2);
    assert!(
        run.stderr
            .contains("--output and --write-baseline name the same place"),
        "{}",
        run.describe()
    );
    // A baseline is brought up to date by writing over the one read.
    d.scan()
        .args(["c.jsonl", "--write-baseline", "b.json"])
        .ok();
    d.scan()
        .args([
            "c.jsonl",
            "--baseline",
            "b.json",
            "--write-baseline",
            "b.json",
        ])
        .ok();

    // An unwritable destination fails at once, not after the scan.
    let run = d
        .scan()
        .args(["c.jsonl", "-o", "no/such/dir/r.json"])
        .code(2);
    eqnice!(
        vec!["ndup: no/such/dir/r.json: cannot write: No such file or directory"],
        run.stderr_lines()
    );
}

/// The whole of a hostile repository at once: an `ndup.toml` that shapes the scan within the
/// rules, a `.ndupignore`, names with control characters and a leading dash, and links to a
/// secret outside the tree and to an endless device. A scan of it writes nothing but its report,
/// reads nothing outside the tree, and ends in bounded memory.
#[test]
fn a_hostile_repository_is_scanned_within_its_walls() {
    let d = Dir::new();
    let body = text(50, 120);
    d.create("secret/key.txt", &body);
    d.create("repo/a.md", &body);
    d.create("repo/-rf.md", format!("{body} and more"));
    d.create("repo/x\n#.md", format!("{body} again"));
    d.create("repo/.ndupignore", "\u{feff}a.md -rf.md\n");
    d.create(
        "repo/ndup.toml",
        "threshold = 0.5\nformat = \"text\"\nmax-filesize = \"1M\"\n",
    );
    std::os::unix::fs::symlink(d.path().join("secret/key.txt"), d.path().join("repo/k.md"))
        .unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.path().join("repo/z.md")).unwrap();
    let before: Vec<_> = walk(d.path());
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 786432; \"$NDUP\" scan repo")
        .current_dir(d.path())
        .env("NDUP", super::util::ndup_bin())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // Links are not followed: the secret is no document, and nothing names it.
    assert!(
        !stdout.contains("key.txt") && !stdout.contains("k.md"),
        "{stdout}"
    );
    // The name with a newline cannot forge a line.
    assert!(stdout.contains(r"repo/x\n#.md"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with('#')), "{stdout}");
    // Nothing was written anywhere.
    assert_eq!(walk(d.path()), before);
}

/// Every path under `dir`, with its size.
fn walk(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            }
            out.push((e.path(), meta.len()));
        }
    }
    out.sort();
    out
}
