//! The report of `ndup dedup` on files: one JSON line per document, in input order, `keep` or
//! `drop` (see [`super::records::KeepRecord`] and [`super::records::DropRecord`]). On JSON lines,
//! dedup writes the kept records themselves, as they were read: the user's format, not ours.

use std::io::{self, Write};

use super::jsonl::line;
use super::records::{DropReason, DropRecord, DropTag, KeepRecord, KeepTag};
use crate::dedup::{DedupReport, Fate};

/// Writes one JSON line per document, in input order: `{"type":"keep","id":..}` or
/// `{"type":"drop","id":..,"kept":..,"reason":"exact"|"near"}`.
pub fn write_list(r: &DedupReport, w: &mut dyn Write) -> io::Result<()> {
    for (i, fate) in r.fates.iter().enumerate() {
        let id = r.scan.id(i as u32);
        match *fate {
            Fate::Kept => line(
                w,
                &KeepRecord {
                    kind: KeepTag::Tag,
                    id,
                },
            )?,
            Fate::Exact { kept } | Fate::Near { kept } => line(
                w,
                &DropRecord {
                    kind: DropTag::Tag,
                    id,
                    kept: r.scan.id(kept),
                    reason: if matches!(fate, Fate::Exact { .. }) {
                        DropReason::Exact
                    } else {
                        DropReason::Near
                    },
                },
            )?,
        }
    }
    Ok(())
}
