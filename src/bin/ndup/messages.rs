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

/// An error for a person, on one line: each cause after the last, as anyhow's `{:#}` shows
/// them, but with the library's parameters named by their flags, and without a cause repeated
/// when the error before it already says it (`x: No such file: No such file`).
pub fn describe(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = match (
            cause.downcast_ref::<ndup::Error>(),
            cause.downcast_ref::<std::io::Error>(),
        ) {
            (Some(e), _) => library(e),
            // The system's reason without its number, as in every other message.
            (None, Some(e)) => ndup::model::io_reason(e),
            (None, None) => cause.to_string(),
        };
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// A library error in the words of the command line.
fn library(e: &ndup::Error) -> String {
    use ndup::Error;
    use ndup::error::format_bytes;
    match e {
        Error::InvalidConfig(problem) => {
            format!("invalid parameters: {}", problem.render(|p| flag(p).into()))
        }
        Error::TooLargeForExact { needed, limit } => format!(
            "exact mode needs an estimated {} or more for this corpus, over --max-memory {}; \
             use MinHash mode (without --exact) or raise --max-memory",
            format_bytes(*needed),
            format_bytes(*limit)
        ),
        Error::Io { path, source } => {
            format!("{}: {}", path.display(), ndup::model::io_reason(source))
        }
        Error::NoIndex { .. } => format!("{e} (create it with `ndup index build`)"),
        Error::IncompleteInput { .. } => {
            format!("{e}; pass --partial-input to use the records before it")
        }
        // The library's advice for a file that is not a usable index, with the command.
        Error::NotAnIndex { .. } | Error::IndexCorrupt { .. } | Error::IndexVersion { .. } => {
            format!("{e} with `ndup index build`")
        }
        Error::IndexParams { path, differences } => format!(
            "{}: {}; use the same flags, or rebuild the index with `ndup index build`",
            path.display(),
            differences.render(|p| flag(p).into())
        ),
        Error::ShardParams { path, differences } => format!(
            "{}: {}; sign again, or scan with the flags the shards were signed with",
            path.display(),
            differences.render(|p| flag(p).into())
        ),
        Error::TooManyShingles { shingles, max } => format!(
            "exact mode handles at most {max} shingles in all, and this corpus has {shingles}; \
             use MinHash mode (without --exact)"
        ),
        other => other.to_string(),
    }
}

/// The flag that sets a library parameter.
pub fn flag(p: ndup::error::Param) -> &'static str {
    use ndup::error::Param;
    match p {
        Param::Threshold => "--threshold",
        Param::NumPerm => "--num-perm",
        Param::Bands => "--bands",
        Param::Rows => "--rows",
        Param::Modulo => "--modulo",
        Param::SupershingleSize => "--supershingle-size",
        Param::MaxBucket => "--max-bucket",
        Param::FpWeight => "--fp-weight",
        Param::FnWeight => "--fn-weight",
        Param::IdField => "--id-field",
        Param::TextField => "--text-field",
        Param::Glob => "--glob",
        Param::Exclude => "--exclude",
        // Set by --k or --w with --shingle: the sentence names the kind.
        Param::ShingleSize => "shingle size",
        Param::Stopwords => "stop-word list",
        Param::Shingle => "--shingle",
        Param::CharSize => "-k",
        Param::WordSize => "-w",
        Param::Sketch => "--sketch",
        Param::Seed => "--seed",
        Param::StopwordsFile => "--stopwords",
        Param::NoNfkc => "--no-nfkc",
        Param::NoLowercase => "--no-lowercase",
        Param::NoCollapseWhitespace => "--no-collapse-whitespace",
        Param::NoTrim => "--no-trim",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_parameters_are_named_by_their_flags() {
        let e = anyhow::Error::new(ndup::invalid![
            ndup::error::Param::Bands,
            " 18 x ",
            ndup::error::Param::Rows,
            " 7 = 126 is more than ",
            ndup::error::Param::NumPerm,
            " 64"
        ]);
        assert_eq!(
            describe(&e),
            "invalid parameters: --bands 18 x --rows 7 = 126 is more than --num-perm 64"
        );
        assert_eq!(
            e.to_string(),
            "invalid parameters: bands 18 x rows 7 = 126 is more than num_perm 64"
        );
    }

    #[test]
    fn a_cause_the_error_already_states_is_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::new(ndup::Error::io("base.json", io));
        let text = describe(&e);
        assert_eq!(text.matches("entity not found").count(), 1, "{text}");
        assert!(text.starts_with("base.json: "), "{text}");
    }
}
