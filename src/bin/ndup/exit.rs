//! Exit codes, decided in one place.

/// The exit status of `ndup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success (and, for gated runs, nothing over the limit).
    Success = 0,
    /// `--fail-on-duplicates` and something was reported.
    Duplicates = 1,
    /// A usage error or a fatal error.
    Error = 2,
}

impl Exit {
    /// The exit status for a completed run that reported `found` items.
    pub fn for_report(found: usize, fail_on_duplicates: bool) -> Exit {
        if fail_on_duplicates && found > 0 {
            Exit::Duplicates
        } else {
            Exit::Success
        }
    }

    /// The exit status for a completed run that reported `found` items (pairs, or clusters) and
    /// `pairs` pairs, under the gates `--fail-on-duplicates` and `--max-pairs`.
    pub fn for_gates(
        found: usize,
        pairs: usize,
        fail_on_duplicates: bool,
        max_pairs: Option<usize>,
    ) -> Exit {
        if max_pairs.is_some_and(|max| pairs > max) {
            Exit::Duplicates
        } else {
            Exit::for_report(found, fail_on_duplicates)
        }
    }

    /// The exit status for an error. A closed stdout (`ndup scan . | head`) is not a failure.
    pub fn for_error(err: &anyhow::Error) -> Exit {
        if is_broken_pipe(err) {
            Exit::Success
        } else {
            Exit::Error
        }
    }
}

/// True when the error chain holds an I/O error of kind `BrokenPipe`.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_codes() {
        assert_eq!(Exit::for_report(0, true), Exit::Success);
        assert_eq!(Exit::for_report(3, true), Exit::Duplicates);
        assert_eq!(Exit::for_report(3, false), Exit::Success);
    }

    #[test]
    fn gate_codes() {
        assert_eq!(Exit::for_gates(3, 3, false, Some(3)), Exit::Success);
        assert_eq!(Exit::for_gates(4, 4, false, Some(3)), Exit::Duplicates);
        assert_eq!(Exit::for_gates(1, 1, true, Some(3)), Exit::Duplicates);
        assert_eq!(Exit::for_gates(0, 0, false, Some(0)), Exit::Success);
        assert_eq!(Exit::for_gates(5, 5, false, None), Exit::Success);
    }

    #[test]
    fn broken_pipe_is_success_other_errors_are_2() {
        let pipe = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing the report");
        assert_eq!(Exit::for_error(&pipe), Exit::Success);
        let other = anyhow::anyhow!("boom");
        assert_eq!(Exit::for_error(&other), Exit::Error);
        assert_eq!(Exit::Error as i32, 2);
    }
}
