//! The JSON reports of `ndup tune` and `ndup compare`: one record on one line each (see
//! [`super::records::TuneRecord`] and [`super::records::CompareRecord`]). Their text reports are
//! the binary's.

use std::io::{self, Write};

use super::jsonl::line;
use super::records::{CompareRecord, CompareTag, TuneRecord, TuneTag};
use crate::candidates::tune::Tuning;
use crate::compare::Comparison;

/// Writes the `tune` record of `t`.
pub fn write_tune(t: &Tuning, w: &mut dyn Write) -> io::Result<()> {
    line(
        w,
        &TuneRecord {
            tuning: t,
            kind: TuneTag::Tag,
        },
    )
}

/// Writes the `compare` record of `c`, the comparison of the files `a` and `b`.
pub fn write_compare(c: &Comparison, a: &str, b: &str, w: &mut dyn Write) -> io::Result<()> {
    line(
        w,
        &CompareRecord {
            comparison: c,
            kind: CompareTag::Tag,
            a,
            b,
        },
    )
}
