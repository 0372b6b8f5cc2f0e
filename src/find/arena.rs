//! Storage for the shingle sets that exact verification reads again: large chunks, filled from
//! many threads at once and reused from one batch of pairs to the next.
//!
//! Why: a set allocated on its own is fresh memory, faulted in a page at a time, and handed
//! back to the system when the batch is dropped, so that the next batch faults it in again.
//! Chunks kept from batch to batch are faulted in once. (Not as transparent huge pages: the
//! kernel spends longer clearing 2 MiB pages than 4 KiB faults cost; see docs/design-notes.md.)

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// Hashes per chunk (4 MiB): small enough that each thread's last, partly filled chunk wastes
/// little, large enough that taking a chunk is rare. A larger set gets a chunk of its own.
const CHUNK_WORDS: usize = 1 << 19;

/// Where a set was stored: look it up in the [`Sets`] its arena became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SetRef {
    chunk: u32,
    start: usize,
    len: usize,
}

/// An arena that many threads store sets into at once. Each thread fills its own chunk, so
/// stores do not contend; [`finish`](Self::finish) turns the arena into read-only [`Sets`], and
/// [`Sets::recycle`] turns those back into an empty arena that keeps the memory.
pub(crate) struct SetArena {
    /// The chunk being filled by each thread of the current pool, by thread index.
    open: Vec<Mutex<Option<Open>>>,
    /// Chunks that are full, with their ids.
    full: Mutex<Vec<(u32, Chunk)>>,
    /// Chunks from an earlier batch, free to fill again.
    spare: Mutex<Vec<Chunk>>,
    next_id: AtomicU32,
    chunk_words: usize,
}

struct Open {
    id: u32,
    chunk: Chunk,
    used: usize,
}

impl Default for SetArena {
    fn default() -> Self {
        Self::with_chunk_words(CHUNK_WORDS)
    }
}

impl SetArena {
    /// An arena whose chunks hold `chunk_words` hashes (at least one).
    pub(crate) fn with_chunk_words(chunk_words: usize) -> Self {
        let threads = rayon::current_num_threads().max(1);
        SetArena {
            open: (0..threads).map(|_| Mutex::new(None)).collect(),
            full: Mutex::new(Vec::new()),
            spare: Mutex::new(Vec::new()),
            next_id: AtomicU32::new(0),
            chunk_words: chunk_words.max(1),
        }
    }

    /// Copies `set` into the arena.
    #[cfg(test)]
    pub(crate) fn store(&self, set: &[u64]) -> SetRef {
        self.store_with(set.len(), |room| {
            room.copy_from_slice(set);
            set.len()
        })
    }

    /// Stores the set that `fill` writes to the front of `max_len` words of room, and keeps as
    /// many words as it returns. Why: a set with repeats left in is copied here once, the
    /// repeats dropped on the way (see [`dedup_into`](crate::text::shingle::dedup_into)).
    pub(crate) fn store_with(
        &self,
        max_len: usize,
        fill: impl FnOnce(&mut [u64]) -> usize,
    ) -> SetRef {
        if max_len == 0 {
            return SetRef {
                chunk: 0,
                start: 0,
                len: 0,
            };
        }
        // Outside the pool (or in a larger one) threads share a slot; the lock keeps it sound.
        let slot = rayon::current_thread_index().unwrap_or(0) % self.open.len();
        let mut open = self.open[slot].lock().unwrap_or_else(|e| e.into_inner());
        if open
            .as_ref()
            .is_some_and(|o| o.chunk.len() - o.used < max_len)
        {
            let full = open.take().expect("checked above");
            self.full
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((full.id, full.chunk));
        }
        let o = open.get_or_insert_with(|| Open {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            chunk: self.take_chunk(max_len),
            used: 0,
        });
        let start = o.used;
        let len = fill(&mut o.chunk[start..start + max_len]).min(max_len);
        o.used += len;
        SetRef {
            chunk: o.id,
            start,
            len,
        }
    }

    /// A spare chunk that holds `words` hashes, or a new one.
    fn take_chunk(&self, words: usize) -> Chunk {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        match spare.iter().position(|c| c.len() >= words) {
            Some(i) => spare.swap_remove(i),
            None => vec![0; self.chunk_words.max(words)],
        }
    }

    /// The stored sets, read-only.
    pub fn finish(self) -> Sets {
        let mut chunks = self.full.into_inner().unwrap_or_else(|e| e.into_inner());
        for open in self.open {
            if let Some(o) = open.into_inner().unwrap_or_else(|e| e.into_inner()) {
                chunks.push((o.id, o.chunk));
            }
        }
        chunks.sort_unstable_by_key(|&(id, _)| id);
        debug_assert!(chunks.iter().enumerate().all(|(i, c)| c.0 as usize == i));
        Sets {
            chunks: chunks.into_iter().map(|(_, c)| c).collect(),
            spare: self.spare.into_inner().unwrap_or_else(|e| e.into_inner()),
            chunk_words: self.chunk_words,
        }
    }
}

/// The sets of a finished [`SetArena`].
pub struct Sets {
    chunks: Vec<Chunk>,
    /// The arena's spare chunks, kept for [`recycle`](Self::recycle).
    spare: Vec<Chunk>,
    chunk_words: usize,
}

impl Sets {
    /// The set stored as `r`.
    pub fn get(&self, r: SetRef) -> &[u64] {
        if r.len == 0 {
            return &[];
        }
        &self.chunks[r.chunk as usize][r.start..r.start + r.len]
    }

    /// An empty arena that fills this one's memory again.
    pub(crate) fn recycle(self) -> SetArena {
        let arena = SetArena::with_chunk_words(self.chunk_words);
        *arena.spare.lock().unwrap_or_else(|e| e.into_inner()) =
            self.chunks.into_iter().chain(self.spare).collect();
        arena
    }
}

/// One chunk of hashes.
type Chunk = Vec<u64>;

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn sets_stored_from_many_threads_read_back_unchanged() {
        // Small chunks, so that sets fill and close many of them.
        let arena = SetArena::with_chunk_words(1000);
        let sets: Vec<Vec<u64>> = (0..2000u64)
            .map(|i| (0..(i * 7919) % 1500).map(|j| i << 32 | j).collect())
            .collect();
        let refs: Vec<SetRef> = sets.par_iter().map(|s| arena.store(s)).collect();
        let stored = arena.finish();
        for (s, r) in sets.iter().zip(refs) {
            assert_eq!(stored.get(r), &s[..]);
        }
    }

    #[test]
    fn a_set_larger_than_a_chunk_gets_its_own() {
        let arena = SetArena::with_chunk_words(10);
        let small: Vec<u64> = (0..6).collect();
        let large: Vec<u64> = (100..125).collect();
        let (a, b, c) = (
            arena.store(&small),
            arena.store(&large),
            arena.store(&small),
        );
        let stored = arena.finish();
        assert_eq!(stored.get(a), &small[..]);
        assert_eq!(stored.get(b), &large[..]);
        assert_eq!(stored.get(c), &small[..]);
        assert_ne!(
            a.chunk, b.chunk,
            "the large set does not fit after the small one"
        );
    }

    #[test]
    fn store_with_keeps_what_the_filler_wrote() {
        let arena = SetArena::with_chunk_words(8);
        let a = arena.store_with(5, |room| {
            assert_eq!(room.len(), 5);
            room[..2].copy_from_slice(&[1, 2]);
            2
        });
        // The room not kept is used by the next set.
        let b = arena.store_with(6, |room| {
            room[..3].copy_from_slice(&[3, 4, 5]);
            3
        });
        let stored = arena.finish();
        assert_eq!(stored.get(a), [1, 2]);
        assert_eq!(stored.get(b), [3, 4, 5]);
        assert_eq!(a.chunk, b.chunk);
    }

    #[test]
    fn an_empty_set_takes_no_room() {
        let arena = SetArena::default();
        let r = arena.store(&[]);
        assert!(arena.finish().get(r).is_empty());
    }

    #[test]
    fn a_recycled_arena_fills_the_same_memory_again() {
        let arena = SetArena::with_chunk_words(100);
        let first: Vec<u64> = (0..60).collect();
        let r = arena.store(&first);
        let stored = arena.finish();
        let chunk = stored.get(r).as_ptr();
        let arena = stored.recycle();
        let second: Vec<u64> = (1000..1050).collect();
        let r = arena.store(&second);
        let stored = arena.finish();
        assert_eq!(stored.get(r), &second[..]);
        assert_eq!(
            stored.get(r).as_ptr(),
            chunk,
            "the chunk was reused, not allocated"
        );
    }
}
