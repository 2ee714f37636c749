//! Event calendar: a 4-ary min-heap ordered by (time, insertion sequence), so
//! simultaneous events fire in the order they were scheduled (deterministic).
//!
//! The order key is the time's IEEE bits (times are finite and non-negative,
//! where the bit patterns order as the values do) above the sequence number,
//! compared as one `u128`. A 4-ary heap halves the depth of a binary one and
//! keeps a node's children in one or two cache lines; popping is the engine's
//! hottest operation (issue 21: the InfiniBand engine spent 37 % of its time
//! in `BinaryHeap::pop`). Sifts move a hole instead of swapping entries, and
//! a pop leaves the root vacant for the next `schedule` (an event handler
//! usually schedules its successor at once), so a pop-and-schedule pair costs
//! one sift instead of two.
//!
//! A small calendar (the InfiniBand test bed holds five to ten events) is
//! kept as an array sorted by descending key instead: the next event is the
//! last entry, and a new one is placed by a scan from the end, past the
//! events due before it (usually a few), which is cheaper than a sift through
//! the heap. The calendar turns into a heap when it grows past `SORTED_MAX`
//! entries (an array sorted by ascending key is a heap) and back when it
//! shrinks below `SORTED_MIN`. The order of events depends only on their
//! keys, never on the layout.

#[derive(Clone, Copy)]
struct Entry<E> {
    /// The time's IEEE bits and the sequence number: the order key is
    /// `(time, seq)`, compared as one `u128` built in registers. Two `u64`
    /// fields (not a `u128`) keep the entry 8-byte aligned, so an 8-byte
    /// event makes a 24-byte entry instead of a 32-byte one.
    time: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }
}

/// Sizes at which a sorted calendar becomes a heap and a heap a sorted one.
const SORTED_MAX: usize = 32;
const SORTED_MIN: usize = 12;

pub struct Calendar<E> {
    /// Sorted by descending key (`sorted`) or a 4-ary min-heap.
    heap: Vec<Entry<E>>,
    sorted: bool,
    /// Heap: the root slot was popped and not yet refilled (see `pop`).
    hole: bool,
    seq: u64,
    now: f64,
    /// Order key of the last event popped.
    current: u128,
}

impl<E: Copy> Default for Calendar<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// The IEEE bits of `time`, which order as the values do.
#[inline(always)]
fn time_bits(time: f64) -> u64 {
    debug_assert!(time.is_finite() && time >= 0.0, "event time {time}");
    // `+ 0.0` turns −0.0 into +0.0, whose bits order correctly.
    (time + 0.0).to_bits()
}

impl<E: Copy> Calendar<E> {
    pub fn new() -> Self {
        Calendar {
            heap: Vec::new(),
            sorted: true,
            hole: false,
            seq: 0,
            now: 0.0,
            current: 0,
        }
    }

    /// Current simulated time (time of the last event popped).
    #[inline]
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Schedules `event` at absolute time `time` (>= now).
    #[inline]
    pub fn schedule(&mut self, time: f64, event: E) {
        self.seq += 1;
        self.schedule_reserved(time, self.seq, event);
    }

    /// Takes the sequence number the next `schedule` would give, for an
    /// event that may be scheduled later (`schedule_reserved`) or settled
    /// without the calendar: either way it keeps its place among
    /// simultaneous events.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Whether an event at `time` with sequence number `seq` would already
    /// have fired, i.e. precedes the event being handled.
    #[inline]
    pub fn fired(&self, time: f64, seq: u64) -> bool {
        ((u128::from(time_bits(time)) << 64) | u128::from(seq)) < self.current
    }

    /// Schedules `event` at `time` under a number from `reserve` (the event
    /// must not have fired).
    #[inline(always)]
    pub fn schedule_reserved(&mut self, time: f64, seq: u64, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        debug_assert!(seq <= self.seq, "sequence number not reserved");
        let e = Entry {
            time: time_bits(time),
            seq,
            event,
        };
        debug_assert!(
            e.key() > self.current,
            "event scheduled before the current one"
        );
        if self.sorted {
            if self.heap.len() < SORTED_MAX {
                self.insert_sorted(e);
                return;
            }
            // An array sorted by ascending key is a heap.
            self.heap.reverse();
            self.sorted = false;
        }
        if self.hole {
            // The usual case: an event handler schedules its successor. The
            // new entry takes the popped root's slot, one sift instead of
            // two (refill from the last leaf, then sift up the new one).
            self.hole = false;
            self.sift_down(e);
        } else {
            self.sift_up(e);
        }
    }

    /// Sorted calendar: places `e` after (below) the entries due later,
    /// moving the ones due earlier up by one (an insertion-sort step).
    ///
    /// The new entry is written field by field into its slot, never built
    /// whole in memory first: copied from a temporary, its 16-byte load
    /// spanned the temporary's narrower stores, which the processor cannot
    /// forward (a stall at every schedule).
    #[inline(always)]
    fn insert_sorted(&mut self, e: Entry<E>) {
        let key = e.key();
        let n = self.heap.len();
        match self.heap.last() {
            // The slot at the end is filled with a copy of the last entry
            // (moved up below if the new one goes before it).
            Some(&last) => self.heap.push(last),
            None => {
                self.heap.push(e);
                return;
            }
        }
        let heap = &mut self.heap[..];
        let mut i = n;
        while i > 0 && heap[i - 1].key() < key {
            heap[i] = heap[i - 1];
            i -= 1;
        }
        let slot = &mut heap[i];
        slot.time = e.time;
        slot.seq = e.seq;
        slot.event = e.event;
    }

    /// Schedules `event` after `delay`.
    #[inline]
    pub fn schedule_in(&mut self, delay: f64, event: E) {
        self.schedule(self.now + delay, event);
    }

    /// Pops the next event and advances the clock. The root's slot is left
    /// empty until the next `schedule` or `pop` fills it; the order of events
    /// depends only on the keys, not on the heap's shape.
    #[inline]
    pub fn pop(&mut self) -> Option<(f64, E)> {
        let top = if self.sorted {
            self.heap.pop()?
        } else {
            if self.hole {
                self.hole = false;
                let last = self.heap.pop().expect("a hole is a slot of the heap");
                if self.heap.is_empty() {
                    return None;
                }
                self.sift_down(last);
            }
            if self.heap.len() < SORTED_MIN {
                self.heap
                    .sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
                self.sorted = true;
                self.heap.pop()?
            } else {
                self.hole = true;
                self.heap[0]
            }
        };
        self.current = top.key();
        self.now = f64::from_bits(top.time);
        Some((self.now, top.event))
    }

    /// Places `e` in the (vacant) root and restores the heap order.
    #[inline]
    fn sift_down(&mut self, e: Entry<E>) {
        let heap = &mut self.heap[..];
        let n = heap.len();
        let key = e.key();
        let mut i = 0;
        loop {
            let c = 4 * i + 1;
            let best = if c + 3 < n {
                // Four children (the common case): a tournament without
                // data-dependent loop exits.
                let a = if heap[c + 1].key() < heap[c].key() {
                    c + 1
                } else {
                    c
                };
                let b = if heap[c + 3].key() < heap[c + 2].key() {
                    c + 3
                } else {
                    c + 2
                };
                if heap[b].key() < heap[a].key() {
                    b
                } else {
                    a
                }
            } else if c < n {
                let mut best = c;
                for j in c + 1..n {
                    if heap[j].key() < heap[best].key() {
                        best = j;
                    }
                }
                best
            } else {
                break;
            };
            if heap[best].key() >= key {
                break;
            }
            heap[i] = heap[best];
            i = best;
        }
        heap[i] = e;
    }

    /// Appends `e` as a new leaf and restores the heap order.
    #[inline]
    fn sift_up(&mut self, e: Entry<E>) {
        let key = e.key();
        let mut i = self.heap.len();
        self.heap.push(e);
        let heap = &mut self.heap[..];
        while i > 0 {
            let parent = (i - 1) / 4;
            if heap[parent].key() <= key {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = e;
    }

    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.hole)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_fifo_order() {
        let mut c = Calendar::new();
        c.schedule(2.0, "b");
        c.schedule(1.0, "a");
        c.schedule(2.0, "c");
        assert_eq!(c.pop(), Some((1.0, "a")));
        assert_eq!(c.pop(), Some((2.0, "b")));
        assert_eq!(c.pop(), Some((2.0, "c")));
        assert_eq!(c.pop(), None);
    }

    /// A pop leaves the root vacant until the next schedule or pop.
    #[test]
    fn len_leaves_out_the_vacant_root() {
        let mut c = Calendar::new();
        c.schedule(1.0, 1);
        c.schedule(2.0, 2);
        assert_eq!(c.len(), 2);
        assert_eq!(c.pop(), Some((1.0, 1)));
        assert_eq!(c.len(), 1);
        assert_eq!(c.pop(), Some((2.0, 2)));
        assert!(c.is_empty());
        assert_eq!(c.pop(), None);
        assert_eq!(c.pop(), None);
        c.schedule(3.0, 3);
        c.schedule(2.5, 4);
        assert_eq!(c.len(), 2);
        assert_eq!(c.pop(), Some((2.5, 4)));
        assert_eq!(c.pop(), Some((3.0, 3)));
        assert_eq!(c.pop(), None);
    }

    /// Grows past `SORTED_MAX` into a heap and shrinks below `SORTED_MIN`
    /// into a sorted array, several times, with reserved numbers and ties:
    /// the order is (time, sequence) throughout.
    #[test]
    fn changes_layout_without_changing_the_order() {
        let mut c = Calendar::new();
        let mut reference: Vec<(f64, u64, u32)> = Vec::new();
        let mut x: u64 = 99;
        let mut id = 0u32;
        for cycle in 0..4 {
            let peak = 20 + 40 * cycle;
            while c.len() < peak {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let t = c.now() + ((x >> 60) as f64) * 0.25;
                let seq = c.reserve();
                c.schedule_reserved(t, seq, id);
                reference.push((t, seq, id));
                id += 1;
            }
            assert!(!c.sorted || peak < SORTED_MAX);
            while c.len() > 2 {
                let (t, e) = c.pop().unwrap();
                reference.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let (rt, _, re) = reference.remove(0);
                assert_eq!((t, e), (rt, re));
            }
            assert!(c.sorted);
        }
    }

    /// Against a sort of (time, sequence): many ties, interleaved pushes and
    /// pops, as an engine does.
    #[test]
    fn matches_a_stable_sort_under_interleaving() {
        let mut c = Calendar::new();
        let mut reference: Vec<(f64, u32)> = Vec::new();
        let mut popped = Vec::new();
        let mut expected = Vec::new();
        let mut x: u64 = 12345;
        let mut id = 0u32;
        for round in 0..2000 {
            // A small linear congruential stream: times on a coarse grid, so
            // ties are frequent.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pushes = 1 + (x >> 60) as usize;
            for _ in 0..pushes {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let t = c.now() + ((x >> 58) as f64) * 0.5;
                c.schedule(t, id);
                reference.push((t, id));
                id += 1;
            }
            if round % 3 != 0 {
                if let Some(e) = c.pop() {
                    popped.push(e);
                    // The reference pops the smallest time, earliest id.
                    let (k, _) = reference
                        .iter()
                        .enumerate()
                        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.1 .1.cmp(&b.1 .1)))
                        .unwrap();
                    expected.push(reference.remove(k));
                }
            }
        }
        while let Some(e) = c.pop() {
            popped.push(e);
        }
        reference.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        expected.extend(reference);
        assert_eq!(popped, expected);
    }
}
