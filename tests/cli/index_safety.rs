//! The index where it cannot be written, and index files that are not usable: `ndup query` on a
//! read-only file or directory, and damaged, truncated or foreign files given to `query`,
//! `index add|update|remove` and `scan --index`.
//!
//! Read-only access is tested by running `ndup` as the unprivileged user `nobody` through
//! `setpriv`, since root ignores permission bits: those tests need root and `setpriv`, and are
//! skipped (saying so on stderr) without them.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use super::util::{Dir, Run, ndup_bin, wait_ok};
use crate::corpus::{Rng, edited, text};

const SETPRIV: &str = "/usr/bin/setpriv";
const NOBODY: u32 = 65534;

/// Writes a file an hour old: out of the index's racy window, so an unchanged file is known by
/// its size and mtime.
fn write_old(d: &Dir, name: &str, content: &str) {
    let path = d.create(name, content);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

/// A corpus in `c/` of five unrelated documents, and `q.txt`, a near copy of `c/d3.txt`.
fn corpus() -> Dir {
    let d = Dir::new();
    for i in 0..5 {
        write_old(&d, &format!("c/d{i}.txt"), &text(i, 300));
    }
    write_old(&d, "q.txt", &edited(3, 300, 2));
    d
}

/// Builds the index of `c/` at `index`.
fn build(d: &Dir, index: &str) {
    d.ndup()
        .args(["index", "build", "c", "--index", index, "-q"])
        .ok();
}

/// `(query, indexed)` of each match record.
fn matches(run: &Run) -> Vec<(String, String)> {
    run.of_type("match")
        .iter()
        .map(|m| {
            (
                m["query"].as_str().unwrap().to_string(),
                m["indexed"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn planted_match() -> Vec<(String, String)> {
    vec![("q.txt".into(), "c/d3.txt".into())]
}

fn chmod(d: &Dir, name: &str, mode: u32) {
    fs::set_permissions(d.path().join(name), fs::Permissions::from_mode(mode)).unwrap();
}

/// The files SQLite would put beside `ix/i.db`.
fn sidecars(d: &Dir) -> Vec<String> {
    ["ix/i.db-wal", "ix/i.db-shm", "ix/i.db-journal"]
        .into_iter()
        .filter(|f| d.path().join(f).exists())
        .map(String::from)
        .collect()
}

/// True when the tests can run `ndup` as `nobody` in `d`: running as root (so a file created
/// here belongs to uid 0), `setpriv` installed, and every directory above `d` traversable by
/// others. Says why on stderr when not.
fn can_drop_privileges(d: &Dir) -> bool {
    let probe = d.create("probe", "");
    let root = fs::metadata(&probe).unwrap().uid() == 0;
    fs::remove_file(probe).unwrap();
    if !root {
        eprintln!("skipped: not running as root, so permission bits cannot be tested");
        return false;
    }
    if !Path::new(SETPRIV).exists() {
        eprintln!("skipped: {SETPRIV} is missing");
        return false;
    }
    // The temporary directory is private (0700); everything above it must be traversable.
    chmod(d, ".", 0o755);
    for dir in d.path().ancestors().skip(1) {
        let mode = fs::metadata(dir).unwrap().mode();
        if mode & 0o001 == 0 {
            eprintln!("skipped: {} is not traversable by others", dir.display());
            return false;
        }
    }
    let ok = Command::new(SETPRIV)
        .args(unprivileged())
        .arg(ndup_bin())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: nobody cannot run {}", ndup_bin());
    }
    ok
}

fn unprivileged() -> [String; 3] {
    [
        format!("--reuid={NOBODY}"),
        format!("--regid={NOBODY}"),
        "--clear-groups".into(),
    ]
}

/// Runs `ndup args` in `d` as the user `nobody`.
fn as_nobody(d: &Dir, args: &[&str]) -> Run {
    let out = Command::new(SETPRIV)
        .args(unprivileged())
        .arg(ndup_bin())
        .args(args)
        .current_dir(d.path())
        .env_remove("RAYON_NUM_THREADS")
        .output()
        .expect("run setpriv");
    Run {
        command: format!("(as nobody) ndup {args:?}"),
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

fn expect_code(run: Run, code: i32) -> Run {
    assert_eq!(run.code, Some(code), "{}", run.describe());
    assert!(!run.stderr.contains("panicked"), "{}", run.describe());
    run
}

const QUERY: [&str; 5] = ["query", "--index", "ix/i.db", "q.txt", "-q"];

#[test]
fn a_read_only_index_file_in_a_read_only_directory_can_be_queried() {
    let d = corpus();
    if !can_drop_privileges(&d) {
        return;
    }
    d.mkdir("ix");
    build(&d, "ix/i.db");
    let before = fs::read(d.path().join("ix/i.db")).unwrap();
    chmod(&d, "ix/i.db", 0o444);
    chmod(&d, "ix", 0o555);

    let r = expect_code(as_nobody(&d, &QUERY), 0);
    assert_eq!(matches(&r), planted_match(), "{}", r.describe());
    assert_eq!(r.stderr, "", "{}", r.describe());
    // Exact verification reads the indexed file again, and --fail-on-duplicates still gates.
    let mut args = QUERY.to_vec();
    args.extend(["--verify", "exact", "--fail-on-duplicates"]);
    let r = expect_code(as_nobody(&d, &args), 1);
    assert_eq!(matches(&r), planted_match(), "{}", r.describe());
    assert!(r.of_type("match")[0]["jaccard"].as_f64().unwrap() > 0.9);

    assert_eq!(sidecars(&d), Vec::<String>::new());
    assert_eq!(fs::read(d.path().join("ix/i.db")).unwrap(), before);

    // A writer cannot work there, says why, and leaves the index as it was.
    write_old(&d, "c/d4.txt", &text(44, 300));
    for args in [
        vec!["index", "update", "c", "--index", "ix/i.db"],
        vec!["scan", "c", "--index", "ix/i.db"],
    ] {
        let r = expect_code(as_nobody(&d, &args), 2);
        assert_eq!(
            r.stderr,
            "ndup: ix/i.db: cannot write the index, its file or directory is read-only \
             (attempt to write a readonly database)\n",
            "{}",
            r.describe()
        );
    }
    assert_eq!(sidecars(&d), Vec::<String>::new());
    assert_eq!(fs::read(d.path().join("ix/i.db")).unwrap(), before);
    chmod(&d, "ix", 0o755);
}

#[test]
fn a_writable_index_in_a_read_only_directory_can_be_queried() {
    // SQLite cannot create the -wal and -shm files a WAL database is read with, even though the
    // index file itself could be written.
    let d = corpus();
    if !can_drop_privileges(&d) {
        return;
    }
    d.mkdir("ix");
    build(&d, "ix/i.db");
    chown(d.path().join("ix/i.db"), Some(NOBODY), Some(NOBODY)).unwrap();
    let before = fs::read(d.path().join("ix/i.db")).unwrap();
    chmod(&d, "ix", 0o555);
    let r = expect_code(as_nobody(&d, &QUERY), 0);
    assert_eq!(matches(&r), planted_match(), "{}", r.describe());
    assert_eq!(sidecars(&d), Vec::<String>::new());
    assert_eq!(fs::read(d.path().join("ix/i.db")).unwrap(), before);
    chmod(&d, "ix", 0o755);
}

#[test]
fn a_read_only_index_file_in_a_writable_directory_can_be_queried() {
    let d = corpus();
    if !can_drop_privileges(&d) {
        return;
    }
    d.mkdir("ix");
    build(&d, "ix/i.db");
    let before = fs::read(d.path().join("ix/i.db")).unwrap();
    chmod(&d, "ix/i.db", 0o444);
    chmod(&d, "ix", 0o777);
    let r = expect_code(as_nobody(&d, &QUERY), 0);
    assert_eq!(matches(&r), planted_match(), "{}", r.describe());
    assert_eq!(fs::read(d.path().join("ix/i.db")).unwrap(), before);
}

#[test]
fn an_index_that_cannot_be_read_is_named_with_the_reason() {
    let d = corpus();
    if !can_drop_privileges(&d) {
        return;
    }
    d.mkdir("ix");
    build(&d, "ix/i.db");
    chmod(&d, "ix/i.db", 0o600);
    for args in [
        QUERY.to_vec(),
        vec!["index", "update", "c", "--index", "ix/i.db"],
    ] {
        let r = expect_code(as_nobody(&d, &args), 2);
        assert_eq!(
            r.stderr,
            "ndup: ix/i.db: cannot read the index: Permission denied\n",
            "{}",
            r.describe()
        );
    }
}

#[test]
fn a_read_only_query_never_ignores_changes_still_in_the_write_ahead_log() {
    let d = corpus();
    if !can_drop_privileges(&d) {
        return;
    }
    d.mkdir("w");
    build(&d, "w/i.db");
    // A committed change left in the log, as by a writer killed before it merged it: c/d3.txt
    // removed. The index file and its log are copied while the writer holds them open.
    let conn = rusqlite::Connection::open(d.path().join("w/i.db")).unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch(
        "BEGIN IMMEDIATE;
         DELETE FROM band WHERE doc IN (SELECT id FROM doc WHERE name = 'c/d3.txt');
         DELETE FROM doc WHERE name = 'c/d3.txt';
         COMMIT;",
    )
    .unwrap();
    d.mkdir("ix");
    fs::copy(d.path().join("w/i.db"), d.path().join("ix/i.db")).unwrap();
    fs::copy(d.path().join("w/i.db-wal"), d.path().join("ix/i.db-wal")).unwrap();
    drop(conn);
    assert!(fs::metadata(d.path().join("ix/i.db-wal")).unwrap().len() > 0);
    chmod(&d, "ix", 0o555);

    // Reading the file alone would report c/d3.txt, which the index no longer holds.
    let r = expect_code(as_nobody(&d, &QUERY), 2);
    assert_eq!(
        r.stderr,
        "ndup: ix/i.db: cannot read the index: its write-ahead log ix/i.db-wal holds changes that \
         cannot be read without creating a -shm file beside it, and its directory is read-only; \
         make the directory writable, or run a command that writes the index once, which merges \
         the log into it\n",
        "{}",
        r.describe()
    );
    assert_eq!(sidecars(&d), ["ix/i.db-wal"]);

    // Where the -shm file can be made, the change is seen.
    chmod(&d, "ix", 0o777);
    let r = expect_code(as_nobody(&d, &QUERY), 0);
    assert_eq!(
        matches(&r),
        Vec::<(String, String)>::new(),
        "{}",
        r.describe()
    );
}

/// Index files that are not usable, each with the reason the message gives, and whether every
/// command finds it out when it opens the index (`false`: only those that read every row).
fn unusable(d: &Dir) -> Vec<(&'static str, &'static str, bool)> {
    build(d, "good.db");
    let good = fs::read(d.path().join("good.db")).unwrap();

    let mut rng = Rng::new(24);
    let noise: Vec<u8> = (0..8192).map(|_| (rng.next_u64() >> 56) as u8).collect();
    d.create("noise.db", &noise);
    d.create("notes.txt", "remember the milk\n");
    rusqlite::Connection::open(d.path().join("app.db"))
        .unwrap()
        .execute_batch("CREATE TABLE users(name TEXT); INSERT INTO users VALUES ('ann');")
        .unwrap();
    // Cut in half, and cut inside its first page.
    d.create("half.db", &good[..good.len() / 2]);
    d.create("stub.db", &good[..1000]);
    // Pages overwritten.
    let mut pages = good.clone();
    pages[100..6000].fill(0xAB);
    d.create("pages.db", &pages);
    // Stored text that is no longer UTF-8, the structure intact: in the parameters, read when
    // the index is opened, and in a document id (its row and the index of ids).
    let spoil = |what: &[u8], at: usize| {
        let mut bytes = good.clone();
        let mut found = 0;
        for i in 0..bytes.len() - what.len() {
            if &bytes[i..i + what.len()] == what {
                bytes[i + at] = 0xFF;
                found += 1;
            }
        }
        assert!(
            found > 0,
            "{} is stored as it is",
            String::from_utf8_lossy(what)
        );
        bytes
    };
    d.create("params.db", spoil(b"\"shingle\"", 3));
    d.create("id.db", spoil(b"c/d1.txt", 3));
    // A table without a column the commands use.
    fs::write(d.path().join("schema.db"), &good).unwrap();
    rusqlite::Connection::open(d.path().join("schema.db"))
        .unwrap()
        .execute_batch("ALTER TABLE doc DROP COLUMN bands")
        .unwrap();

    let not_sqlite = "not an ndup index (not a SQLite database)";
    let malformed = "the index is corrupt (database disk image is malformed)";
    let utf8 = "the index is corrupt (a stored text is not valid UTF-8)";
    vec![
        ("noise.db", not_sqlite, true),
        ("notes.txt", not_sqlite, true),
        (
            "app.db",
            "not an ndup index (a SQLite database of another application)",
            true,
        ),
        ("half.db", malformed, true),
        ("stub.db", malformed, true),
        ("pages.db", malformed, true),
        ("params.db", utf8, true),
        ("id.db", utf8, false),
        (
            "schema.db",
            "the index is corrupt (the doc table does not have the columns ndup writes)",
            true,
        ),
    ]
}

/// The one line `ndup` prints for the unusable index `file`.
fn message(file: &str, what: &str) -> String {
    let advice = if what.starts_with("not an ndup index") {
        ", so it is left untouched; use another file, or remove this one and rebuild the index \
         with `ndup index build`"
    } else {
        "; remove it and rebuild it with `ndup index build`"
    };
    format!("ndup: {file}: {what}{advice}\n")
}

#[test]
fn unusable_index_files_are_named_with_how_to_rebuild() {
    let d = corpus();
    for (file, what, at_open) in unusable(&d) {
        let before = fs::read(d.path().join(file)).unwrap();
        let mut commands = vec![
            vec!["index", "add", "c/d1.txt", "--index", file],
            vec!["index", "update", "c", "--index", file],
            vec!["scan", "c", "--index", file],
        ];
        if at_open {
            commands.extend([
                vec!["query", "--index", file, "q.txt"],
                vec!["query", "--index", file, "-"],
                vec!["index", "build", "c", "--index", file],
                vec!["index", "remove", "c/d1.txt", "--index", file],
            ]);
        }
        for args in commands {
            let r = d.ndup().args(&args).stdin("some text").code(2);
            assert_eq!(r.stdout, "", "{}", r.describe());
            eqnice!(message(file, what), r.stderr, "{args:?}");
        }
        assert_eq!(
            fs::read(d.path().join(file)).unwrap(),
            before,
            "{file} was changed"
        );
    }
}

/// Replaces `name` with a FIFO nobody writes to: opening it to read blocks.
fn fifo_in_place_of(d: &Dir, name: &str) {
    let path = d.path().join(name);
    fs::remove_file(&path).unwrap();
    let made = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(made.success());
}

/// An indexed file or record file replaced by a FIFO hung `query --verify exact`, which opened
/// it to read the document again; a file turned into one endless line was read whole.
#[test]
fn documents_are_read_again_only_from_regular_files_and_lines_within_bounds() {
    let d = corpus();
    build(&d, "i.db");
    let line = serde_json::json!({"id": "r", "text": text(3, 300)}).to_string() + "\n";
    write_old(&d, "r.jsonl", &line);
    d.ndup()
        .args(["index", "add", "r.jsonl", "--index", "i.db", "-q"])
        .ok();
    fifo_in_place_of(&d, "c/d3.txt");
    fifo_in_place_of(&d, "r.jsonl");
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "q.txt", "--verify", "exact"])
        .timeout(60)
        .ok();
    let mut skips = r.skips();
    skips.sort();
    let why = "could not be read again for exact verification: not a regular file";
    assert_eq!(
        skips,
        [
            ("c/d3.txt".into(), "unreadable".into(), why.into()),
            ("r".into(), "unreadable".into(), why.into()),
        ],
        "{}",
        r.describe()
    );
    // The estimate still decides.
    assert_eq!(matches(&r).len(), 2, "{}", r.describe());

    // A record file that became one line longer than --max-line-length: not read into memory.
    fs::remove_file(d.path().join("r.jsonl")).unwrap();
    d.create("r.jsonl", "x".repeat(1 << 20));
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "q.txt", "--verify", "exact"])
        .args(["--max-line-length", "1000"])
        .ok();
    assert_eq!(
        r.skips(),
        [
            ("c/d3.txt".into(), "unreadable".into(), why.into()),
            (
                "r".into(),
                "unreadable".into(),
                "could not be read again for exact verification: \
             the line at byte 0 is longer than 1000 bytes"
                    .into()
            ),
        ],
        "{}",
        r.describe()
    );
}

/// Two commands creating one index at once: one failed at once with "the index is busy", or
/// with "not an ndup index", having seen the other's schema half written.
#[test]
fn two_writers_creating_one_index_both_succeed() {
    let d = corpus();
    write_old(&d, "c2/e.txt", &text(40, 300));
    for round in 0..10 {
        let index = format!("new{round}.db");
        let mut first = d
            .ndup()
            .args(["index", "add", "c", "--index", &index, "-q"])
            .spawn();
        let second = d
            .ndup()
            .args(["index", "add", "c2", "--index", &index, "-q"])
            .run();
        wait_ok(&mut first);
        assert_eq!(second.code, Some(0), "round {round}: {}", second.describe());
        let r = d.ndup().args(["query", "--index", &index, "c2/e.txt"]).ok();
        assert_eq!(r.summary()["indexed"], 6, "round {round}");
    }
}
