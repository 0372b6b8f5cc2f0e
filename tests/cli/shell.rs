//! Shell integration: completions, manual pages, `--color` and the progress bar.

use std::process::Command;

use super::util::{Dir, long_options, ndup_bin};
use crate::corpus::text;

/// Asks bash's completion function (as `complete -F` would call it) what `words` complete to,
/// the last word being the one under the cursor.
fn bash_completions(d: &Dir, words: &[&str]) -> Vec<String> {
    let script = d.ndup().args(["completions", "bash"]).ok().stdout;
    d.create("ndup.bash", script);
    let words_q: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let line = words.join(" ");
    let program = format!(
        "source ./ndup.bash\n\
         COMP_WORDS=({words})\n\
         COMP_CWORD={cword}\n\
         COMP_LINE='{line}'\n\
         COMP_POINT={point}\n\
         _ndup ndup '{cur}' '{prev}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        words = words_q.join(" "),
        cword = words.len() - 1,
        point = line.len(),
        cur = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(program)
        .current_dir(d.path())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_flags_and_commands() {
    let d = Dir::new();
    let th = bash_completions(&d, &["ndup", "scan", "--th"]);
    assert_eq!(th, ["--threshold", "--threads"]);
    assert_eq!(
        bash_completions(&d, &["ndup", "scan", "--thres"]),
        ["--threshold"]
    );
    let commands = bash_completions(&d, &["ndup", "s"]);
    assert_eq!(commands, ["scan", "sign"]);
    let index = bash_completions(&d, &["ndup", "index", "b"]);
    assert_eq!(index, ["build"]);
}

#[test]
fn every_shell_gets_a_script_that_knows_the_flags() {
    let d = Dir::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = d.ndup().args(["completions", shell]).ok();
        assert!(
            run.stdout.contains("threshold") && run.stdout.contains("max-filesize"),
            "{shell}: {}",
            run.describe()
        );
    }
    let run = d.ndup().args(["completions", "tcsh"]).code(2);
    assert!(
        run.stderr.contains("invalid value 'tcsh'"),
        "{}",
        run.describe()
    );
}

/// Every command's help, paired with its manual page: `ndup man scan` has every flag of
/// `ndup scan --help`, and so on for every command and `ndup` itself.
#[test]
fn every_man_page_lists_every_flag_of_its_help() {
    let d = Dir::new();
    let commands: &[&[&str]] = &[
        &[],
        &["scan"],
        &["tune"],
        &["compare"],
        &["dedup"],
        &["index"],
        &["index", "build"],
        &["index", "add"],
        &["index", "update"],
        &["index", "remove"],
        &["query"],
        &["completions"],
        &["man"],
    ];
    for words in commands {
        let help = d.ndup().args(*words).arg("--help").ok().stdout;
        let page = d.ndup().arg("man").args(*words).ok().stdout;
        let title = std::iter::once("ndup")
            .chain(words.iter().copied())
            .collect::<Vec<_>>()
            .join("-");
        assert!(page.contains(&format!(".TH {title} 1")), "{title}: {page}");
        let flags = long_options(&help);
        assert!(flags.len() >= 3, "{title}: {help}");
        for flag in flags {
            // roff escapes each dash.
            let roff = flag.replace('-', "\\-");
            assert!(page.contains(&roff), "{title}: {flag} is not in the page");
        }
    }
}

#[test]
fn man_dir_writes_every_page_and_a_wrong_command_is_an_error() {
    let d = Dir::new();
    d.mkdir("man1");
    d.ndup().args(["man", "--dir", "man1"]).ok();
    let mut names: Vec<String> = std::fs::read_dir(d.path().join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for page in [
        "ndup.1",
        "ndup-scan.1",
        "ndup-index-build.1",
        "ndup-query.1",
    ] {
        assert!(names.iter().any(|n| n == page), "{page} not in {names:?}");
    }
    assert_eq!(
        d.read("man1/ndup-scan.1"),
        d.ndup().args(["man", "scan"]).ok().stdout
    );
    let run = d.ndup().args(["man", "nope"]).code(2);
    eqnice!(
        vec!["ndup: no manual page for `ndup nope`: see `ndup --help` for the commands"],
        run.stderr_lines()
    );
    // A missing directory is made; a file in the way is an error.
    d.ndup().args(["man", "--dir", "new/man1"]).ok();
    assert!(d.path().join("new/man1/ndup-tune.1").is_file());
    d.create("file", "x");
    let run = d.ndup().args(["man", "--dir", "file"]).code(2);
    eqnice!(vec!["ndup: file: File exists"], run.stderr_lines());
}

fn two_copies() -> Dir {
    let d = Dir::new();
    let body = text(70, 150);
    d.create("docs/a.md", &body);
    d.create("docs/b.md", &body);
    d
}

const ESC: char = '\u{1b}';

#[test]
fn color_always_colours_a_pipe_despite_no_color_and_never_never_colours() {
    let d = two_copies();
    let report = |color: &str, no_color: Option<&str>| {
        let mut cmd = d.ndup();
        cmd.args(["--color", color, "scan", "docs", "--format", "text"]);
        match no_color {
            Some(v) => cmd.env("NO_COLOR", v),
            None => cmd.env_remove("NO_COLOR"),
        };
        cmd.ok().stdout
    };
    // The tests' stdout is a pipe: `auto` does not colour it.
    assert!(!report("auto", None).contains(ESC));
    assert!(!report("never", None).contains(ESC));
    let coloured = report("always", Some("1"));
    assert!(
        coloured.contains(&format!("{ESC}[1mdocs/a.md{ESC}[0m")),
        "{coloured:?}"
    );
    // The flag is global: after the command too, and as --color=WHEN.
    let run = d
        .scan()
        .args(["docs", "--format", "text", "--color=always"])
        .ok();
    assert_eq!(run.stdout, coloured);
    let run = d.scan().args(["docs", "--color", "sometimes"]).code(2);
    assert!(
        run.stderr.contains("invalid value 'sometimes'"),
        "{}",
        run.describe()
    );
}

#[test]
fn color_decides_for_the_help_too() {
    let d = Dir::new();
    let help = |color: &str| {
        d.ndup()
            .args(["--color", color, "scan", "--help"])
            .ok()
            .stdout
    };
    assert!(help("always").contains(ESC));
    assert!(!help("never").contains(ESC));
    assert!(!help("auto").contains(ESC));
}

/// Runs `ndup ARGS` on a terminal (`script` gives it one) with the bar shown at once, and
/// returns what the terminal received.
fn on_a_terminal(d: &Dir, args: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", &format!("{} {args}", ndup_bin()), "/dev/null"])
        .current_dir(d.path())
        .env("NDUP_PROGRESS_DELAY_MS", "0")
        .env_remove("NO_COLOR")
        .output()
        .expect("script runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lines a terminal was sent, one per redraw: split at carriage returns and line feeds,
/// with the escape sequences (cursor moves, line clears, colours) taken out.
fn frames(screen: &str) -> Vec<String> {
    let mut frames = vec![String::new()];
    let mut chars = screen.chars();
    while let Some(c) = chars.next() {
        match c {
            '\r' | '\n' => frames.push(String::new()),
            // CSI: parameters up to a final letter, and the line is redrawn from there.
            '\x1b' => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
                frames.push(String::new());
            }
            c => frames.last_mut().expect("one").push(c),
        }
    }
    frames
        .into_iter()
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty())
        .collect()
}

#[test]
fn progress_shows_each_phase_on_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("note: no `script` command (util-linux); the terminal is not tested");
        return;
    }
    let d = Dir::new();
    for i in 0..60 {
        // Near-copies in threes, so that some pairs are verified exactly.
        let base = text(100 + i / 3, 300);
        d.create(&format!("docs/{i}.md"), format!("{base} extra{i}"));
    }
    let screen = on_a_terminal(&d, "scan docs -o /dev/null --verify exact");
    for phase in [
        "reading",
        "documents",
        "pairing candidates",
        "bands",
        "verifying",
        "pairs",
    ] {
        assert!(screen.contains(phase), "no `{phase}` in {screen:?}");
    }
    // Every frame is one phase's: its name with its own units (a phase change drew frames
    // such as `reading 0/18 bands` and `pairing candidates 0/60 bands`).
    for frame in frames(&screen) {
        for (doing, units) in [
            ("reading", "documents"),
            ("pairing candidates", "bands"),
            ("verifying", "pairs"),
        ] {
            if frame.contains(doing) {
                let counted = frame.split(' ').find(|w| w.contains('/'));
                assert!(
                    frame.contains(units)
                        && ["documents", "bands", "pairs"]
                            .iter()
                            .all(|u| *u == units || !frame.contains(u))
                        && (doing != "pairing candidates"
                            || counted.is_some_and(|c| c.ends_with("/18"))),
                    "{frame:?} in {screen:?}"
                );
            }
        }
    }
    // The bar is gone before the summary line.
    assert!(screen.trim_end().ends_with("s"), "{screen:?}");
    assert!(screen.contains("ndup: 60 documents"), "{screen:?}");

    d.create("corpus.md", text(7, 100));
    let screen = on_a_terminal(&d, "index build docs --index docs.db");
    assert!(screen.contains("indexing"), "{screen:?}");

    // Quiet: nothing at all on the terminal.
    let screen = on_a_terminal(&d, "scan docs -o /dev/null -q");
    assert_eq!(screen, "");
    // Not a terminal: no bar in the captured stderr.
    let run = d
        .scan()
        .args(["docs", "-o", "/dev/null"])
        .env("NDUP_PROGRESS_DELAY_MS", "0")
        .ok();
    assert!(!run.stderr.contains("reading"), "{}", run.describe());
}
