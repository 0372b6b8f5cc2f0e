//! What `ndup` says on stderr. Every message passes through [`printable`], so a file name chosen by
//! someone else can neither break a message into several lines nor send escape sequences to the
//! terminal.

use ndup::model::{Skip, SkipKind};
use ndup::report::printable;

/// `ndup: MESSAGE`, on one line.
pub fn error(message: &str) {
    eprintln!("ndup: {}", printable(message));
}

/// One line per skipped document worth a word: binary and too large files are expected, and
/// only counted in the summary.
pub fn skips(skipped: &[Skip]) {
    for s in skipped {
        if !matches!(s.kind, SkipKind::Binary | SkipKind::TooLarge) {
            error(&format!("{}: {}", s.id, s.reason));
        }
    }
}
