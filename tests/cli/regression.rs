//! One test per bug fixed, named for what went wrong.

use super::util::Dir;

/// `ndup scan broken-link` said only "no document could be read": the reason the one file
/// could not be read, which a scan with other documents prints, was lost.
#[test]
fn no_readable_document_error_says_why() {
    let d = Dir::new();
    d.link("nowhere.txt", "broken.txt");
    let run = d.scan().arg("broken.txt").code(2);
    eqnice!("", run.stdout);
    eqnice!(
        vec!["ndup: no document could be read: broken.txt: No such file or directory"],
        run.stderr_lines()
    );

    d.create("bin/logo.png", b"\0PNG");
    let run = d.scan().arg("bin").code(2);
    eqnice!(
        vec![
            "ndup: no document could be read: bin/logo.png: binary file (NUL byte in the first 8 KiB)"
        ],
        run.stderr_lines()
    );
    // Quiet or not, a fatal error says why.
    let run = d.scan().args(["-q", "broken.txt", "bin"]).code(2);
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    assert!(
        run.stderr.contains("broken.txt: No such file or directory"),
        "{}",
        run.describe()
    );
}
