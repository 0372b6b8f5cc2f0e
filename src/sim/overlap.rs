//! The exact overlaps of a few documents' shingle sets, counted from their hashes as they
//! stream by, with no sorted set built or kept.
//!
//! Exact verification usually builds each document's sorted set once and merges it with every
//! document it is paired with: a set serves many merges. The documents of a small connected
//! component of the pairs (a lone pair, or a handful of near copies of one text) get little
//! back for that: each set is sorted, stored and merged once or twice. For them, one
//! open-addressing table of the hashes of all of them, each slot flagged with the documents that
//! hold its hash, gives every pair's three counts without a sort, and costs less than sorting
//! the sets and merging them (measured in docs/design-notes.md).
/// The sizes of two shingle sets and of their intersection: every exact measure of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Overlap {
    /// Distinct hashes of the first set.
    pub a: usize,
    /// Distinct hashes of the second set.
    pub b: usize,
    /// Distinct hashes in both.
    pub both: usize,
}

impl Overlap {
    /// The overlap of two sorted, distinct slices, by merging them.
    pub fn of_sets(a: &[u64], b: &[u64]) -> Overlap {
        Overlap {
            a: a.len(),
            b: b.len(),
            both: super::intersection_size(a, b),
        }
    }

    /// The Jaccard similarity (what [`jaccard`](super::jaccard) gives for sorted sets), 0 when
    /// both sets are empty.
    pub fn jaccard(&self) -> f64 {
        let union = self.a + self.b - self.both;
        if union == 0 {
            0.0
        } else {
            self.both as f64 / union as f64
        }
    }

    /// The share of the first set found in the second (what
    /// [`containment`](super::containment) gives for sorted sets), 0 when the first is empty.
    pub fn a_in_b(&self) -> f64 {
        if self.a == 0 {
            0.0
        } else {
            self.both as f64 / self.a as f64
        }
    }

    /// The share of the second set found in the first (0 when the second is empty).
    pub fn b_in_a(&self) -> f64 {
        if self.b == 0 {
            0.0
        } else {
            self.both as f64 / self.b as f64
        }
    }
}

/// The most sets an [`OverlapTable`] counts at once: a slot's members are a byte of flags.
pub(crate) const MAX_SETS: usize = 8;

/// Counts the sizes and pairwise overlaps of up to `MAX_SETS` sets from their hashes, repeats
/// allowed, one set after another ([`add_set`](Self::add_set)). Sets are numbered 0 to 7.
///
/// Linear probing on the hashes' top bits: they are uniform 64-bit hashes, so they are their own
/// slot numbers. Which sets hold a slot's hash is kept in a separate byte array, one bit a set,
/// not in the key, so no hash value is reserved for "empty" (an exact count must not confuse the
/// hash 0 with a free slot), and clearing the table for the next component clears one byte a
/// slot. The table is reused from component to component, and grows (to keep at most half its
/// slots filled) when one needs more.
#[derive(Debug)]
pub struct OverlapTable {
    keys: Vec<u64>,
    flags: Vec<u8>,
    /// The slots in use, less one: the first `mask + 1` of the arrays (which keep the largest
    /// size a component needed, so that a larger one after a smaller one does not zero its keys
    /// again).
    mask: usize,
    /// `64 - log2(mask + 1)`: a hash's home slot is `hash >> shift`.
    shift: u32,
    /// Hashes that can still be placed before the table is more than half full and grows.
    room: usize,
    /// The sets added since [`start`](Self::start), one bit each.
    added: u8,
    /// Each set's distinct hashes.
    sizes: [usize; MAX_SETS],
    /// The distinct hashes each two sets share (symmetric).
    both: [[usize; MAX_SETS]; MAX_SETS],
}

/// The fewest slots a table has.
const MIN_SLOTS_LOG2: u32 = 4;

impl Default for OverlapTable {
    fn default() -> Self {
        let mut t = OverlapTable {
            keys: Vec::new(),
            flags: Vec::new(),
            mask: 0,
            shift: 64,
            room: 0,
            added: 0,
            sizes: [0; MAX_SETS],
            both: [[0; MAX_SETS]; MAX_SETS],
        };
        t.reset(MIN_SLOTS_LOG2);
        t
    }
}

impl OverlapTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the table for new sets, with room for `expected` distinct hashes in all before it
    /// must grow. Why the hint: a table grown while it is being filled moves every hash once
    /// more. A char shingle starts at each byte at most, so a text's length bounds its count;
    /// near copies share most of theirs.
    pub fn start(&mut self, expected: usize) {
        // At most half full: linear probing's runs stay short.
        let log2 = expected
            .saturating_mul(2)
            .max(1)
            .next_power_of_two()
            .trailing_zeros()
            .max(MIN_SLOTS_LOG2);
        self.reset(log2);
        self.added = 0;
        self.sizes = [0; MAX_SETS];
        self.both = [[0; MAX_SETS]; MAX_SETS];
    }

    /// Clears `2^log2` slots for use, keeping the counts.
    fn reset(&mut self, log2: u32) {
        let slots = 1usize << log2;
        if self.keys.len() < slots {
            // The keys need no clearing: a slot's flags say whether its key is meant.
            self.keys.resize(slots, 0);
            self.flags.resize(slots, 0);
        }
        self.flags[..slots].fill(0);
        self.mask = slots - 1;
        self.shift = 64 - log2;
        self.room = slots / 2 + 1;
    }

    /// Adds one text's hashes as the set, or the equal sets, `members` (one bit a set, none of
    /// them added before): `feed` hands each hash to [`Filler::add`]. Several members at once
    /// are sets known to be equal (documents with the same text), hashed once.
    pub fn add_set(&mut self, members: u8, feed: impl FnOnce(&mut Filler<'_>)) {
        assert!(
            members != 0 && members & self.added == 0,
            "each set is added once"
        );
        self.added |= members;
        let mut filler = Filler {
            keys: self.keys.as_mut_ptr(),
            flags: self.flags.as_mut_ptr(),
            mask: self.mask,
            shift: self.shift,
            room: self.room,
            members,
            seen: [0; 256],
            table: self,
        };
        feed(&mut filler);
        let Filler {
            room, seen, table, ..
        } = filler;
        table.room = room;
        // `seen[f]`: the set's distinct hashes that other sets, `f`, held before it came.
        let size: usize = seen.iter().sum();
        for m in members_of(members) {
            table.sizes[m] = size;
            for (held, &n) in seen.iter().enumerate().skip(1).filter(|(_, n)| **n > 0) {
                for o in members_of(held as u8) {
                    table.both[m][o] += n;
                    table.both[o][m] += n;
                }
            }
            for o in members_of(members).filter(|&o| o != m) {
                table.both[m][o] = size;
            }
        }
    }

    /// The distinct hashes of set `i`.
    pub fn size(&self, i: usize) -> usize {
        self.sizes[i]
    }

    /// The overlap of sets `i` and `j`, in that order.
    pub fn overlap(&self, i: usize, j: usize) -> Overlap {
        Overlap {
            a: self.sizes[i],
            b: self.sizes[j],
            both: self.both[i][j],
        }
    }

    /// The slot holding `h`, or the empty slot where it belongs.
    fn slot_of(&self, h: u64) -> usize {
        let mut i = (h >> self.shift) as usize & self.mask;
        while self.flags[i] != 0 && self.keys[i] != h {
            i = (i + 1) & self.mask;
        }
        i
    }

    /// Doubles the table and puts every hash back (in its new home slot).
    #[cold]
    fn grow(&mut self) {
        let slots = self.mask + 1;
        let keys = std::mem::take(&mut self.keys);
        let flags = std::mem::take(&mut self.flags);
        self.reset(65 - self.shift);
        for (&h, &f) in keys[..slots].iter().zip(&flags[..slots]) {
            if f != 0 {
                let i = self.slot_of(h);
                self.keys[i] = h;
                self.flags[i] = f;
                self.room -= 1;
            }
        }
    }

    /// Frees the table when it has grown past `max_bytes`, so that one large component does
    /// not keep its memory to the end of the run.
    pub(crate) fn release_large(&mut self, max_bytes: usize) {
        if self.keys.len() * (size_of::<u64>() + 1) > max_bytes {
            *self = Self::default();
        }
    }
}

/// The sets of a byte of members: the numbers of the bits set in `b`.
pub(crate) fn members_of(b: u8) -> impl Iterator<Item = usize> {
    (0..MAX_SETS).filter(move |&i| b >> i & 1 == 1)
}

/// Adds one set's hashes to an [`OverlapTable`] (see [`OverlapTable::add_set`]).
///
/// Why a type of its own: the probe is the table's whole work, and with its state (the arrays,
/// the mask, the countdown, the counts) in the table, every hash stored to the arrays makes the
/// compiler load that state again, as the stores might have changed it. Copied here, it stays in
/// registers.
pub struct Filler<'t> {
    /// The table's arrays, as pointers: refreshed when the table grows.
    keys: *mut u64,
    flags: *mut u8,
    mask: usize,
    shift: u32,
    room: usize,
    members: u8,
    /// For each combination of other sets, the hashes of this set that they alone held before.
    seen: [usize; 256],
    table: &'t mut OverlapTable,
}

impl Filler<'_> {
    /// Adds a hash of the set (a repeat counts once).
    #[inline(always)]
    pub fn add(&mut self, h: u64) {
        let mut i = (h >> self.shift) as usize & self.mask;
        loop {
            // SAFETY: `i <= mask`, and both arrays have at least `mask + 1` slots (see `reset`);
            // they are the table's, which this filler borrows mutably, so nothing else moves
            // them, and `grow` refreshes the pointers. Why not checked indexing: the probe is
            // the table's whole work, and checked, its loop carries two bounds checks a step.
            // Never endless: the table grows before it is more than half full, so an empty slot
            // always comes.
            let held = unsafe { *self.flags.add(i) };
            if held == 0 {
                // SAFETY: as above.
                unsafe {
                    *self.keys.add(i) = h;
                    *self.flags.add(i) = self.members;
                }
                self.seen[0] += 1;
                // A countdown, one decrement a new hash: cheaper than working out the filled
                // slots for every new hash, in the loop that is the table's whole work.
                self.room -= 1;
                if self.room == 0 {
                    self.grow();
                }
                return;
            }
            // SAFETY: as above.
            if unsafe { *self.keys.add(i) } == h {
                if held & self.members == 0 {
                    self.seen[held as usize] += 1;
                    // SAFETY: as above.
                    unsafe { *self.flags.add(i) = held | self.members };
                }
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        self.table.room = 0;
        self.table.grow();
        let t = &mut *self.table;
        (self.keys, self.flags) = (t.keys.as_mut_ptr(), t.flags.as_mut_ptr());
        (self.mask, self.shift, self.room) = (t.mask, t.shift, t.room);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{containment, intersection_size, jaccard};
    use proptest::prelude::*;

    fn add(t: &mut OverlapTable, members: u8, hashes: &[u64]) {
        t.add_set(members, |f| hashes.iter().for_each(|&h| f.add(h)));
    }

    fn count(a: &[u64], b: &[u64], expected: usize) -> Overlap {
        let mut t = OverlapTable::new();
        t.start(expected);
        add(&mut t, 1, a);
        add(&mut t, 2, b);
        assert_eq!(
            t.overlap(1, 0),
            Overlap {
                a: t.size(1),
                b: t.size(0),
                both: t.overlap(0, 1).both
            }
        );
        t.overlap(0, 1)
    }

    fn set(v: &[u64]) -> Vec<u64> {
        let mut s = v.to_vec();
        s.sort_unstable();
        s.dedup();
        s
    }

    #[test]
    fn counts_distinct_hashes_with_repeats_and_the_hash_zero() {
        let a = [0, 5, 5, u64::MAX, 7 << 60, 0];
        let b = [5, 0, 9, 9, 1 << 63];
        let o = count(&a, &b, a.len() + b.len());
        assert_eq!(
            o,
            Overlap {
                a: 4,
                b: 4,
                both: 2
            }
        );
        assert_eq!(o.jaccard(), 2.0 / 6.0);
        assert_eq!(o.a_in_b(), 0.5);
        assert_eq!(o.b_in_a(), 0.5);
    }

    #[test]
    fn empty_sets_measure_zero() {
        let o = count(&[], &[], 0);
        assert_eq!(o, Overlap::default());
        assert_eq!((o.jaccard(), o.a_in_b(), o.b_in_a()), (0.0, 0.0, 0.0));
    }

    #[test]
    fn grows_past_a_wrong_hint_and_keeps_its_counts() {
        // Hashes that share their top bits crowd one run of slots, the worst case for probing.
        let a: Vec<u64> = (0..5_000u64).map(|i| i * 3).collect();
        let b: Vec<u64> = (0..5_000u64).map(|i| i * 2).collect();
        let o = count(&a, &b, 1);
        let both = intersection_size(&set(&a), &set(&b));
        assert_eq!(
            o,
            Overlap {
                a: 5_000,
                b: 5_000,
                both
            }
        );
        assert_eq!(both, 1_667);
    }

    #[test]
    fn a_table_reused_for_the_next_pair_forgets_the_last() {
        let mut t = OverlapTable::new();
        t.start(4);
        add(&mut t, 1, &[1, 2, 3]);
        add(&mut t, 2, &[3, 4]);
        assert_eq!(
            t.overlap(0, 1),
            Overlap {
                a: 3,
                b: 2,
                both: 1
            }
        );
        t.start(2);
        add(&mut t, 1, &[4]);
        add(&mut t, 2, &[3]);
        assert_eq!(
            t.overlap(0, 1),
            Overlap {
                a: 1,
                b: 1,
                both: 0
            }
        );
        t.release_large(0);
        add(&mut t, 1, &[8]);
        assert_eq!(
            t.overlap(0, 1),
            Overlap {
                a: 1,
                b: 0,
                both: 0
            }
        );
    }

    #[test]
    fn counts_every_pair_of_eight_sets_and_equal_sets_added_at_once() {
        let mut t = OverlapTable::new();
        t.start(1);
        // Set i holds 0..10 + i and i * 100 (its own); sets 6 and 7 are equal, added together.
        let set = |i: u64| -> Vec<u64> { (0..10 + i).chain([i * 100 + 1_000]).collect() };
        for i in 0..6 {
            add(&mut t, 1 << i, &set(i));
        }
        add(&mut t, 0b1100_0000, &set(6));
        for i in 0..8 {
            let si = set(i.min(6) as u64);
            assert_eq!(t.size(i), si.len());
            for j in 0..8 {
                let sj = set(j.min(6) as u64);
                let both = if i == j {
                    si.len()
                } else {
                    intersection_size(&set_of(&si), &set_of(&sj))
                };
                if i != j {
                    assert_eq!(
                        t.overlap(i, j),
                        Overlap {
                            a: si.len(),
                            b: sj.len(),
                            both
                        },
                        "{i} {j}"
                    );
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "each set is added once")]
    fn a_set_added_twice_is_refused() {
        let mut t = OverlapTable::new();
        t.start(4);
        add(&mut t, 0b11, &[1]);
        add(&mut t, 0b10, &[2]);
    }

    fn set_of(v: &[u64]) -> Vec<u64> {
        set(v)
    }

    proptest! {
        #[test]
        fn counts_of_many_sets_agree_with_their_sorted_sets(
            sets in proptest::collection::vec(proptest::collection::vec(0u64..400, 0..200), 1..=MAX_SETS),
            hint in 0usize..500,
            spread in any::<bool>(),
        ) {
            // Small values share many hashes; spread over the top bits, they probe as real ones.
            let sets: Vec<Vec<u64>> = sets.iter().map(|s| s.iter().map(|&h| if spread { h.wrapping_mul(0x9E37_79B9_7F4A_7C15) } else { h }).collect()).collect();
            let mut t = OverlapTable::new();
            t.start(hint);
            for (i, s) in sets.iter().enumerate() {
                add(&mut t, 1 << i, s);
            }
            for (i, x) in sets.iter().enumerate() {
                let sx = set(x);
                prop_assert_eq!(t.size(i), sx.len());
                for (j, y) in sets.iter().enumerate().filter(|&(j, _)| j != i) {
                    let sy = set(y);
                    prop_assert_eq!(t.overlap(i, j), Overlap::of_sets(&sx, &sy));
                }
            }
        }


        #[test]
        fn agrees_to_the_bit_with_the_sorted_set_measures(
            a in proptest::collection::vec(any::<u64>(), 0..300),
            b in proptest::collection::vec(any::<u64>(), 0..300),
            shared in proptest::collection::vec(any::<u64>(), 0..300),
            hint in 0usize..1000,
        ) {
            // Shared hashes, some repeated, in both; the rest mostly in one.
            let a: Vec<u64> = a.iter().chain(&shared).chain(&shared[..shared.len() / 2]).copied().collect();
            let b: Vec<u64> = shared.iter().chain(&b).copied().collect();
            let o = count(&a, &b, hint);
            let (sa, sb) = (set(&a), set(&b));
            prop_assert_eq!(o.a, sa.len());
            prop_assert_eq!(o.b, sb.len());
            prop_assert_eq!(o.both, intersection_size(&sa, &sb));
            prop_assert_eq!(o.jaccard().to_bits(), jaccard(&sa, &sb).to_bits());
            prop_assert_eq!(o.a_in_b().to_bits(), containment(&sa, &sb).to_bits());
            prop_assert_eq!(o.b_in_a().to_bits(), containment(&sb, &sa).to_bits());
        }
    }
}
