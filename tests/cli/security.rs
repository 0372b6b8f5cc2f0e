//! What a tree written by someone else, and the paths a user names, can make ndup do: a found
//! `ndup.toml` only shapes the scan of its tree; names never reach a terminal or a text report
//! raw; `-o` never replaces what is not a regular file, nor an input.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};

use super::util::{Dir, owned};
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
    // Refused even when the command line gives the same flag, which would win: the file is
    // judged, not only what takes effect.
    for (line, flag) in [
        ("threads = 1", &["-j", "2"][..]),
        ("follow = true", &["-L"][..]),
        ("output = \"stolen.json\"", &["-o", "mine.json"][..]),
    ] {
        d.create("tree/ndup.toml", line);
        let run = d.scan().arg("tree").args(flag).code(2);
        assert!(run.stderr.contains("tree/ndup.toml"), "{}", run.describe());
        assert!(!d.path().join("mine.json").exists());
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
fn a_tree_config_or_ignore_file_linking_out_of_the_tree_is_refused() {
    // A stranger's tree could link its `ndup.toml` or `.ndupignore` to any file the user can
    // read, whose pieces a parse error would print (a key name, a line's glob count).
    let d = Dir::new();
    let body = text(3, 60);
    d.create("tree/a.md", &body);
    d.create("tree/b.md", &body);
    d.create("secret.txt", "SECRET_TOKEN = 1\n");
    for name in ["ndup.toml", ".ndupignore"] {
        d.link("../secret.txt", &format!("tree/{name}"));
        let run = d.scan().arg("tree").code(2);
        assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
        assert!(
            run.stderr.contains(&format!("tree/{name}: a link to "))
                && run.stderr.contains("secret.txt, outside the scanned tree")
                && !run.stderr.contains("SECRET_TOKEN"),
            "{}",
            run.describe()
        );
        std::fs::remove_file(d.path().join("tree").join(name)).unwrap();
    }
    // Nor is one that is no regular file (a FIFO would block the run), nor a device.
    let fifo = d.path().join("tree/ndup.toml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let run = d.scan().arg("tree").timeout(20).code(2);
    assert_eq!(run.stderr, "ndup: tree/ndup.toml: not a regular file\n");
    std::fs::remove_file(&fifo).unwrap();
    d.link("/dev/zero", "tree/ndup.toml");
    let run = d.scan().arg("tree").code(2);
    assert!(
        run.stderr.contains("a link to /dev/zero, outside"),
        "{}",
        run.describe()
    );
    std::fs::remove_file(&fifo).unwrap();
    // A link inside the tree is read, and so is a tree reached through a link.
    d.create("tree/conf/shared.toml", "threshold = 0.99\n");
    d.link("conf/shared.toml", "tree/ndup.toml");
    d.create("tree/conf/ignore", "a.md b.md\n");
    d.link("conf/ignore", "tree/.ndupignore");
    d.link("tree", "via");
    for root in ["tree", "via"] {
        let run = d.scan().arg(root).ok();
        assert_eq!(run.records()[0]["threshold"], 0.99, "{}", run.describe());
        assert_eq!(run.count("ignored_pairs"), 1, "{}", run.describe());
    }
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

/// A private key outside the scanned tree, and a tree that tracks a link to it: with an
/// `ndup.toml` asking for an HTML report of containment at 0.5, and a file with the key's first
/// lines, the CI recipe `git ls-files -z '*.md' | ndup scan --files-from - -0` copied the whole
/// key into the report.
fn a_key_and_a_tree_linking_to_it() -> (Dir, Dir) {
    let home = Dir::new();
    let head = "-----BEGIN OPENSSH PRIVATE KEY-----\n\
                b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn\n";
    let key = home.create(
        "id_rsa",
        format!(
            "{head}NhAAAAAwEAAQAAAYEAxTHEPRIVATEPARTofTHEKEY\n-----END OPENSSH PRIVATE KEY-----\n"
        ),
    );
    let repo = Dir::new();
    repo.link(key.to_str().unwrap(), "notes.md");
    repo.create("a.md", head);
    let body = text(31, 80);
    repo.create("b.md", &body);
    repo.create("c.md", &body);
    repo.create(
        "ndup.toml",
        "containment = true\nthreshold = 0.5\nformat = \"html\"\n",
    );
    (home, repo)
}

const OUTSIDE: &str = "symlink to a file outside the working directory; -L follows it";

/// A record file is read under the same rule: a tree's `x.jsonl` linking out of the working
/// directory is skipped by a scan and by an index, unless -L.
#[test]
fn a_record_file_linking_out_of_the_tree_is_skipped_unless_following_links() {
    let home = Dir::new();
    let secret = home.create(
        "secret.jsonl",
        format!("{}\n", serde_json::json!({"id": "s", "text": text(32, 80)})),
    );
    let repo = Dir::new();
    repo.link(secret.to_str().unwrap(), "notes.jsonl");
    repo.create(
        "a.jsonl",
        format!("{}\n", serde_json::json!({"id": "a", "text": text(32, 80)})),
    );
    let skip = vec![(
        "notes.jsonl".to_string(),
        "unreadable".to_string(),
        OUTSIDE.to_string(),
    )];
    for args in [
        &["a.jsonl", "notes.jsonl"][..],
        &["--files-from", "-", "--jsonl"],
    ] {
        let run = repo.scan().args(args).stdin("a.jsonl\nnotes.jsonl\n").ok();
        eqnice!(skip, run.skips());
        assert!(run.pair_ids().is_empty(), "{}", run.describe());
        let followed = repo
            .scan()
            .args(args)
            .arg("-L")
            .stdin("a.jsonl\nnotes.jsonl\n")
            .ok();
        eqnice!(owned(&[("a", "s")]), followed.pair_ids());
    }
    let run = repo
        .ndup()
        .args([
            "index",
            "build",
            "a.jsonl",
            "notes.jsonl",
            "--index",
            "i.db",
        ])
        .ok();
    assert!(run.stdout.contains("notes.jsonl"), "{}", run.describe());
    let query = repo
        .ndup()
        .args(["query", "--index", "i.db", "a.jsonl"])
        .ok();
    assert!(!query.stdout.contains(r#""s""#), "{}", query.describe());
}

#[test]
fn a_listed_or_named_link_out_of_the_tree_is_skipped_unless_following_links() {
    let (_home, repo) = a_key_and_a_tree_linking_to_it();
    let list = "a.md\0b.md\0c.md\0notes.md\0";
    let run = repo
        .scan()
        .args(["--files-from", "-", "-0"])
        .stdin(list)
        .ok();
    assert!(
        run.stdout.starts_with("<!DOCTYPE html>"),
        "{}",
        run.describe()
    );
    assert!(
        !run.stdout.contains("privatepartofthekey"),
        "{}",
        run.describe()
    );
    // The skip is listed, by name and reason only.
    assert!(
        run.stdout.contains(&format!("notes.md</code>: {OUTSIDE}")),
        "{}",
        run.describe()
    );
    assert!(run.stdout.contains("c.md"), "{}", run.describe());
    let lines = run.stderr_lines();
    eqnice!(format!("ndup: notes.md: {OUTSIDE}"), lines[0]);
    assert!(
        lines[1].contains("1 skipped (1 unreadable)"),
        "{}",
        run.describe()
    );
    // The same as JSON lines, and named on the command line as the shell's `*.md` names them.
    let skip = vec![(
        "notes.md".to_string(),
        "unreadable".to_string(),
        OUTSIDE.to_string(),
    )];
    for run in [
        repo.scan()
            .args(["--files-from", "-", "-0", "--format", "jsonl"])
            .stdin(list)
            .ok(),
        repo.scan()
            .args(["a.md", "b.md", "c.md", "notes.md", "--format", "jsonl"])
            .ok(),
    ] {
        eqnice!(skip, run.skips());
        eqnice!(owned(&[("b.md", "c.md")]), run.pair_ids());
    }
    // Named alone, nothing is left to read.
    let run = repo.scan().arg("notes.md").code(2);
    eqnice!(
        vec![format!(
            "ndup: no document could be read: notes.md: {OUTSIDE}"
        )],
        run.stderr_lines()
    );
    // -L follows it, as asked: the report then holds the key (what the default prevents; the
    // report shows normalized, lower-case, texts).
    let run = repo
        .scan()
        .args(["-L", "--files-from", "-", "-0"])
        .stdin(list)
        .ok();
    assert!(
        run.stdout.contains("privatepartofthekey"),
        "{}",
        run.describe()
    );
    let run = repo
        .scan()
        .args(["-L", "a.md", "notes.md", "--format", "jsonl"])
        .ok();
    assert!(run.pair("a.md", "notes.md").is_some(), "{}", run.describe());
    assert!(run.skips().is_empty(), "{}", run.describe());
}

#[test]
fn links_inside_the_tree_and_links_outside_the_working_directory_are_followed() {
    let (home, repo) = a_key_and_a_tree_linking_to_it();
    std::fs::remove_file(repo.path().join("ndup.toml")).unwrap();
    let body = text(32, 80);
    repo.create("d.md", &body);
    repo.create("sub/e.md", &body);
    repo.link("sub/e.md", "inner.md");
    repo.link("sub", "subdir");
    // A link to a directory outside, and a path through it.
    home.create("private/x.md", &body);
    repo.link(home.path().join("private").to_str().unwrap(), "docs");
    let through = "a file outside the working directory, through a symlink; -L follows it";
    let run = repo
        .scan()
        .args(["--files-from", "-"])
        .stdin("d.md\ninner.md\ndocs/x.md\ndocs\n")
        .ok();
    eqnice!(owned(&[("d.md", "inner.md")]), run.pair_ids());
    eqnice!(
        vec![
            (
                "docs".to_string(),
                "unreadable".to_string(),
                "symlink to a directory outside the working directory; -L follows it".to_string()
            ),
            (
                "docs/x.md".to_string(),
                "unreadable".to_string(),
                through.to_string()
            ),
        ],
        run.skips()
    );
    // A directory of the tree reached through a link of the tree is walked.
    let run = repo.scan().args(["d.md", "subdir"]).ok();
    eqnice!(owned(&[("d.md", "subdir/e.md")]), run.pair_ids());
    // A path typed elsewhere is read wherever it is, through links that are not the tree's.
    home.link("private", "alias");
    let far = home.path().join("alias/x.md");
    let run = repo.scan().arg("d.md").arg(&far).ok();
    assert!(
        run.pair("d.md", far.to_str().unwrap()).is_some(),
        "{}",
        run.describe()
    );
    let run = repo.scan().arg("d.md").arg(home.path()).ok();
    assert_eq!(run.count("documents"), 3, "{}", run.describe());
    assert!(run.skips().is_empty(), "{}", run.describe());
}

/// `ndup scan <(cmd)` names `/dev/fd/63`, a link to `/proc/self/fd/63`, itself a link to
/// `pipe:[...]`: none of them the tree's. The pipe is read in full, even when `cmd` is slow to
/// write (its read waits, though the pipe was opened not to).
#[test]
fn process_substitution_is_read_in_full() {
    let d = Dir::new();
    d.create("a.md", text(33, 80));
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("timeout 20 \"$NDUP\" scan <(cat a.md) <(sleep 1; cat a.md) --format csv")
        .current_dir(d.path())
        .env("NDUP", super::util::ndup_bin())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let rows: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{stdout}{stderr}");
    assert!(rows[0].starts_with("/dev/fd/"), "{stdout}");
    assert_eq!(rows[0].split(',').nth(2), Some("1"), "{stdout}");
    assert!(!stderr.contains("skipped"), "{stderr}");
}

#[test]
fn a_tree_ndupignore_or_config_of_too_many_globs_is_refused() {
    let d = Dir::new();
    let body = text(34, 80);
    d.create("docs/a.md", &body);
    d.create("docs/b.md", &body);
    d.create("docs/.ndupignore", "a*.md b*.md\n".repeat(5_001));
    let run = d.scan().arg("docs").code(2);
    eqnice!("", run.stdout);
    eqnice!(
        vec!["ndup: docs/.ndupignore: more than 10,000 patterns"],
        run.stderr_lines()
    );
    // Up to the limit, the file is used.
    d.create("docs/.ndupignore", "a*.md b*.md\n".repeat(5_000));
    let run = d.scan().arg("docs").ok();
    assert_eq!(run.count("ignored_pairs"), 1, "{}", run.describe());
    std::fs::remove_file(d.path().join("docs/.ndupignore")).unwrap();

    let globs = |n: usize| {
        let list: Vec<String> = (0..n).map(|i| format!("\"*[!q]{i}*\"")).collect();
        format!("exclude = [{}]\n", list.join(", "))
    };
    d.create("docs/ndup.toml", globs(10_001));
    let run = d.scan().arg("docs").code(2);
    eqnice!(
        vec!["ndup: docs/ndup.toml: more than 10,000 patterns"],
        run.stderr_lines()
    );
    d.create("docs/ndup.toml", globs(100));
    assert_eq!(d.scan().arg("docs").ok().pairs().len(), 1);
    // A glob the scan cannot build is blamed on the file that gave it.
    let long = format!("\"{}\"", "*a".repeat(10_000));
    d.create(
        "docs/ndup.toml",
        format!("exclude = [{}]\n", vec![long; 12].join(", ")),
    );
    let run = d.scan().arg("docs").code(2);
    eqnice!(
        vec!["ndup: docs/ndup.toml: invalid parameters: invalid glob: error building NFA"],
        run.stderr_lines()
    );
    let long = format!("\"{}\"", "*a".repeat(70_000));
    d.create("docs/ndup.toml", format!("glob = [{long}, {long}]\n"));
    let run = d.scan().arg("docs").code(2);
    eqnice!(
        vec!["ndup: docs/ndup.toml: more than 256 KiB of patterns"],
        run.stderr_lines()
    );
}
