//! The harness: a temporary directory to build a tree in, the `ndup` binary run inside it, and
//! its output parsed back; and the trees several modules share. The generated text comes from
//! `crate::corpus` (tests/common/corpus.rs, shared with the library tests).
//!
//! Commands run with the temporary directory as their working directory and relative paths, so
//! document ids read like `docs/a.txt` and expected output can be written out in full.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process;
use std::time::Duration;

use serde_json::{Value, json};

use crate::corpus::{edited, text};

/// Asserts two values are equal, printing both in full (one per block) when they are not, which
/// reads better than `assert_eq!`'s single line for multi-line output.
macro_rules! eqnice {
    ($expected:expr, $got:expr) => {
        eqnice!($expected, $got, "")
    };
    ($expected:expr, $got:expr, $($ctx:tt)+) => {{
        let expected = &$expected;
        let got = &$got;
        if expected != got {
            panic!(
                "\n{}\n===== expected =====\n{:#?}\n===== got =====\n{:#?}\n====================\n",
                format!($($ctx)+),
                expected,
                got
            );
        }
    }};
}
/// Waits for a spawned command, asserts it exited 0, and returns its standard error.
pub fn wait_ok(child: &mut process::Child) -> String {
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr piped"), &mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "status {status:?}, stderr: {stderr}"
    );
    stderr
}

/// The path of the `ndup` binary Cargo built for these tests.
pub fn ndup_bin() -> &'static str {
    env!("CARGO_BIN_EXE_ndup")
}

/// A temporary directory in which a test builds its tree and runs `ndup`.
pub struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    /// A new, empty directory (removed when dropped).
    pub fn new() -> Dir {
        Dir {
            tmp: tempfile::Builder::new()
                .prefix("ndup-test-")
                .tempdir()
                .expect("create a temporary directory"),
        }
    }

    /// The directory's absolute path.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Writes a file (creating its parent directories) and returns its absolute path.
    pub fn create(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        std::fs::write(&path, contents).expect("write a test file");
        path
    }

    /// Creates a directory (and its parents).
    pub fn mkdir(&self, name: &str) {
        std::fs::create_dir_all(self.path().join(name)).expect("create a directory");
    }

    /// Creates a symbolic link `name` pointing at `target` (taken literally, so relative targets
    /// are relative to the link's directory).
    pub fn link(&self, target: &str, name: &str) {
        let path = self.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        std::os::unix::fs::symlink(target, path).expect("create a symbolic link");
    }

    /// Reads a file of the tree as text.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).expect("read a test file")
    }

    /// `ndup` with no arguments yet, run in this directory.
    pub fn ndup(&self) -> TestCommand {
        TestCommand {
            cwd: self.path().to_path_buf(),
            args: Vec::new(),
            envs: Vec::new(),
            stdin: None,
            timeout: None,
        }
    }

    /// `ndup scan`, run in this directory; add paths and flags with `arg`/`args`.
    pub fn scan(&self) -> TestCommand {
        let mut c = self.ndup();
        c.arg("scan");
        c
    }
}

/// A command about to be run: its arguments, environment and standard input.
pub struct TestCommand {
    cwd: PathBuf,
    args: Vec<OsString>,
    /// Variables set (`Some`) or removed (`None`), in order.
    envs: Vec<(OsString, Option<OsString>)>,
    stdin: Option<Vec<u8>>,
    timeout: Option<Duration>,
}

impl TestCommand {
    /// Adds one argument.
    pub fn arg(&mut self, a: impl AsRef<std::ffi::OsStr>) -> &mut Self {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        for a in args {
            self.arg(a);
        }
        self
    }

    /// Sets an environment variable.
    pub fn env(&mut self, k: &str, v: &str) -> &mut Self {
        self.envs.push((k.into(), Some(v.into())));
        self
    }

    /// Removes an environment variable.
    pub fn env_remove(&mut self, k: &str) -> &mut Self {
        self.envs.push((k.into(), None));
        self
    }

    /// Gives the command this standard input (otherwise it reads an empty pipe).
    pub fn stdin(&mut self, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// Kills the command if it runs longer than `secs`: a guard for tests of hangs, so a
    /// regression fails instead of blocking the suite (not a timing assertion).
    pub fn timeout(&mut self, secs: u64) -> &mut Self {
        self.timeout = Some(Duration::from_secs(secs));
        self
    }

    fn command(&self) -> process::Command {
        let mut cmd = process::Command::new(ndup_bin());
        cmd.current_dir(&self.cwd).args(&self.args);
        // The tests decide the thread count themselves when it matters.
        cmd.env_remove("RAYON_NUM_THREADS");
        for (k, v) in &self.envs {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd
    }

    /// The command line, for failure messages.
    fn describe(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.envs {
            match v {
                Some(v) => write!(s, "{}={} ", k.to_string_lossy(), v.to_string_lossy()),
                None => write!(s, "-u {} ", k.to_string_lossy()),
            }
            .unwrap();
        }
        s.push_str("ndup");
        for a in &self.args {
            write!(s, " {:?}", a.to_string_lossy()).unwrap();
        }
        s
    }

    /// Runs the command, whatever its exit status.
    pub fn run(&mut self) -> Run {
        let mut cmd = assert_cmd::Command::from_std(self.command());
        if let Some(bytes) = &self.stdin {
            cmd.write_stdin(bytes.clone());
        }
        if let Some(t) = self.timeout {
            cmd.timeout(t);
        }
        let out = cmd.output().expect("run ndup");
        Run {
            command: self.describe(),
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        }
    }

    /// Runs the command and asserts it exits with `code` (and did not panic).
    pub fn code(&mut self, code: i32) -> Run {
        let run = self.run();
        if run.code != Some(code) {
            panic!("expected exit code {code}\n{}", run.describe());
        }
        assert!(
            !run.stderr.contains("panicked"),
            "ndup panicked\n{}",
            run.describe()
        );
        run
    }

    /// Runs the command and asserts it succeeds (exit 0).
    pub fn ok(&mut self) -> Run {
        self.code(0)
    }

    /// Starts the command with its standard output and error piped, for tests that drive the
    /// pipes themselves or stop the process midway.
    pub fn spawn(&mut self) -> process::Child {
        self.command()
            .stdin(process::Stdio::null())
            .stdout(process::Stdio::piped())
            .stderr(process::Stdio::piped())
            .spawn()
            .expect("spawn ndup")
    }
}

/// A pair record.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub estimate: f64,
    pub jaccard: Option<f64>,
}

/// What a finished command printed.
pub struct Run {
    pub command: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Everything about the run, for failure messages.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        writeln!(s, "command: {}", self.command).unwrap();
        writeln!(s, "exit code: {:?}", self.code).unwrap();
        writeln!(s, "----- stdout -----\n{}", self.stdout).unwrap();
        writeln!(s, "----- stderr -----\n{}", self.stderr).unwrap();
        s
    }

    /// The whole of stdout parsed as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e})\n{}", self.describe()))
    }

    /// Every stdout line parsed as JSON (panics, showing the line, when one is not JSON).
    pub fn records(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| {
                    panic!("stdout line is not JSON ({e}): {l}\n{}", self.describe())
                })
            })
            .collect()
    }

    /// The records of one type, in order.
    pub fn of_type(&self, kind: &str) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["type"] == kind)
            .collect()
    }

    /// The params record, asserting it is the first line.
    pub fn params(&self) -> Value {
        let r = self.records();
        assert!(
            !r.is_empty() && r[0]["type"] == "params",
            "the first record must be params\n{}",
            self.describe()
        );
        r[0].clone()
    }

    /// The summary record, asserting it is the last line.
    pub fn summary(&self) -> Value {
        let r = self.records();
        let last = r.last().cloned().unwrap_or_default();
        assert!(
            last["type"] == "summary",
            "the last record must be the summary\n{}",
            self.describe()
        );
        last
    }

    /// The pair records.
    pub fn pairs(&self) -> Vec<Pair> {
        self.of_type("pair")
            .into_iter()
            .map(|r| Pair {
                a: r["a"].as_str().expect("a is a string").to_string(),
                b: r["b"].as_str().expect("b is a string").to_string(),
                estimate: r["estimate"].as_f64().expect("estimate is a number"),
                jaccard: r
                    .get("jaccard")
                    .map(|j| j.as_f64().expect("jaccard is a number")),
            })
            .collect()
    }

    /// The `(a, b)` ids of the pairs, in report order.
    pub fn pair_ids(&self) -> Vec<(String, String)> {
        self.pairs().into_iter().map(|p| (p.a, p.b)).collect()
    }

    /// The pair `a`-`b` (in either order), if reported.
    pub fn pair(&self, a: &str, b: &str) -> Option<Pair> {
        self.pairs()
            .into_iter()
            .find(|p| (p.a == a && p.b == b) || (p.a == b && p.b == a))
    }

    /// The pair `a`-`b`, which must be reported.
    pub fn expect_pair(&self, a: &str, b: &str) -> Pair {
        self.pair(a, b).unwrap_or_else(|| {
            panic!(
                "expected the pair {a} / {b} to be reported\n{}",
                self.describe()
            )
        })
    }

    /// Asserts the pair `a`-`b` is not reported.
    pub fn expect_no_pair(&self, a: &str, b: &str) {
        if let Some(p) = self.pair(a, b) {
            panic!("unexpected pair {p:?}\n{}", self.describe());
        }
    }

    /// The skip records as `(id, reason_kind, reason)`.
    pub fn skips(&self) -> Vec<(String, String, String)> {
        self.of_type("skip")
            .into_iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["reason_kind"].as_str().unwrap().to_string(),
                    r["reason"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The cluster records' members.
    pub fn clusters(&self) -> Vec<Vec<String>> {
        self.of_type("cluster")
            .into_iter()
            .map(|r| {
                let members: Vec<String> = r["members"]
                    .as_array()
                    .expect("members is an array")
                    .iter()
                    .map(|m| m.as_str().unwrap().to_string())
                    .collect();
                assert_eq!(r["size"].as_u64(), Some(members.len() as u64), "size");
                members
            })
            .collect()
    }

    /// A summary count.
    pub fn count(&self, field: &str) -> u64 {
        let s = self.summary();
        s[field]
            .as_u64()
            .unwrap_or_else(|| panic!("summary has no count {field}\n{}", self.describe()))
    }

    /// The stderr lines.
    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }
}

/// The exact Jaccard similarity of two texts under the default pipeline, computed by the library.
pub fn library_jaccard(config: &ndup::find::config::ScanConfig, a: &str, b: &str) -> f64 {
    let p = ndup::find::Pipeline::new(config.clone()).unwrap();
    ndup::sim::jaccard(&p.shingle_set(a), &p.shingle_set(b))
}

/// The signature estimate of two texts under `config`, computed by the library.
pub fn library_estimate(config: &ndup::find::config::ScanConfig, a: &str, b: &str) -> f64 {
    let p = ndup::find::Pipeline::new(config.clone()).unwrap();
    let sign = |t| ndup::Signature::from_parts(config.sketch_params(), p.signature(t).unwrap());
    sign(a).unwrap().jaccard(&sign(b).unwrap()).unwrap()
}

/// The planted tree most tests share, under `docs/`:
///
/// - `original.txt`, 150 made-up words; `edited.txt`, the same with four words replaced (exact
///   Jaccard about 0.87, in the band where `auto` verifies exactly); `sub/copy.txt`, an exact copy;
/// - `unrelated-1.txt`, `unrelated-2.txt`: other text;
/// - `logo.png`: binary (a NUL byte); `empty.txt` and `blank.txt` (white space only): empty.
pub fn planted() -> Dir {
    let d = Dir::new();
    d.create("docs/original.txt", text(1, 150));
    d.create("docs/edited.txt", edited(1, 150, 5));
    d.create("docs/sub/copy.txt", text(1, 150));
    d.create("docs/unrelated-1.txt", text(2, 150));
    d.create("docs/unrelated-2.txt", text(3, 150));
    d.create("docs/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10");
    d.create("docs/empty.txt", "");
    d.create("docs/blank.txt", " \n\t \n");
    d
}

/// The pairs planted in [`planted`], as reported: `a` < `b`, sorted.
pub const PLANTED_PAIRS: [(&str, &str); 3] = [
    ("docs/edited.txt", "docs/original.txt"),
    ("docs/edited.txt", "docs/sub/copy.txt"),
    ("docs/original.txt", "docs/sub/copy.txt"),
];

/// `(a, b)` as owned strings, for comparing with [`Run::pair_ids`].
pub fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// A second planted tree, of Markdown pages: two near-duplicate pairs (`docs/a.md` and
/// `docs/a copy.md`, `docs/b.md` and `docs/old/b.md`, each with one word replaced) and a lone
/// page, `docs/c.md` (`text(42, 150)`).
pub fn planted_pages() -> Dir {
    let d = Dir::new();
    d.create("docs/a.md", text(40, 150));
    d.create("docs/a copy.md", edited(40, 150, 1));
    d.create("docs/b.md", text(41, 150));
    d.create("docs/old/b.md", edited(41, 150, 1));
    d.create("docs/c.md", text(42, 150));
    d
}

/// The pairs planted in [`planted_pages`], as reported.
pub const PLANTED_PAGE_PAIRS: [(&str, &str); 2] = [
    ("docs/a copy.md", "docs/a.md"),
    ("docs/b.md", "docs/old/b.md"),
];

/// A JSON-lines corpus: `a` and `a2` near-duplicates, `b` and `b2` near-duplicates, `c` alone
/// (120 words each, one replaced in the copies).
pub fn planted_jsonl() -> String {
    [
        json!({"id": "a", "text": text(1, 120)}),
        json!({"id": "b", "text": text(2, 120)}),
        json!({"id": "c", "text": text(3, 120)}),
        json!({"id": "a2", "text": edited(1, 120, 1)}),
        json!({"id": "b2", "text": edited(2, 120, 1)}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}

/// Every line of a JSON-lines text parsed (a report written to a file, say).
pub fn parse_jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `bytes` compressed with gzip.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// `bytes` compressed with zstd.
pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

impl Dir {
    /// `ndup` with no arguments yet, run in the subdirectory `sub` of this directory (so that
    /// relative paths given to it are names inside `sub`, a leading `-` and all).
    pub fn ndup_in(&self, sub: &str) -> TestCommand {
        let mut c = self.ndup();
        c.cwd = self.path().join(sub);
        c
    }
}

/// What a command run by [`TestCommand::run_limited`] did, its output kept as bytes, since
/// hostile input may make it anything.
pub struct RawRun {
    pub command: String,
    pub status: process::ExitStatus,
    /// Killed for running longer than its timeout.
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl RawRun {
    /// Everything about the run, for failure messages (each output cut to its first `max`
    /// bytes, shown lossily).
    pub fn describe(&self, max: usize) -> String {
        let cut = |b: &[u8]| {
            let s = String::from_utf8_lossy(&b[..b.len().min(max)]).into_owned();
            if b.len() > max {
                format!("{s}\n... ({} bytes in all)", b.len())
            } else {
                s
            }
        };
        let mut s = String::new();
        writeln!(s, "command: {}", self.command).unwrap();
        writeln!(s, "status: {}", self.status).unwrap();
        if self.timed_out {
            writeln!(s, "(killed: timed out)").unwrap();
        }
        writeln!(s, "----- stdout -----\n{}", cut(&self.stdout)).unwrap();
        writeln!(s, "----- stderr -----\n{}", cut(&self.stderr)).unwrap();
        s
    }
}

impl TestCommand {
    /// Runs the command, whatever its exit status, with its address space limited to `bytes`
    /// (`RLIMIT_AS`), so memory that grows without bound ends in a failed allocation (an abort,
    /// not an exit code) instead of taking the machine. The timeout (60 s unless set) always
    /// applies; standard input is empty unless given, and closed either way.
    pub fn run_limited(&mut self, bytes: u64) -> RawRun {
        use std::os::unix::process::CommandExt;
        let mut cmd = self.command();
        // SAFETY: the closure only makes one system call, which is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || limit_address_space(bytes));
        }
        let timeout = self.timeout.unwrap_or(Duration::from_secs(60));
        let mut cmd = assert_cmd::Command::from_std(cmd);
        cmd.write_stdin(self.stdin.clone().unwrap_or_default())
            .timeout(timeout);
        let start = std::time::Instant::now();
        let out = cmd.output().expect("run ndup");
        RawRun {
            command: self.describe(),
            timed_out: out.status.code().is_none() && start.elapsed() >= timeout,
            status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
        }
    }
}

/// Sets this process's `RLIMIT_AS` to `bytes` (soft and hard), without the `libc` crate: Linux's
/// `struct rlimit` is two `unsigned long`s, and `RLIMIT_AS` is 9 on the architectures listed.
/// Elsewhere it does nothing.
fn limit_address_space(bytes: u64) -> std::io::Result<()> {
    #[cfg(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "arm",
            target_arch = "riscv64"
        )
    ))]
    {
        use std::ffi::{c_int, c_ulong};
        unsafe extern "C" {
            fn setrlimit(resource: c_int, rlim: *const [c_ulong; 2]) -> c_int;
        }
        const RLIMIT_AS: c_int = 9;
        let limit = c_ulong::try_from(bytes).unwrap_or(c_ulong::MAX);
        // SAFETY: a valid pointer to a `struct rlimit` for the duration of the call.
        if unsafe { setrlimit(RLIMIT_AS, &[limit, limit]) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    let _ = bytes;
    Ok(())
}

/// The long options (`--threshold`, ...) that a `--help` text lists, sorted and distinct.
pub fn long_options(help: &str) -> Vec<String> {
    let mut listed: Vec<String> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2 && !w.ends_with('-'))
        .map(str::to_string)
        .filter(|w| help.contains(&format!("  {w}")) || help.contains(&format!(", {w}")))
        .collect();
    listed.sort();
    listed.dedup();
    listed
}
