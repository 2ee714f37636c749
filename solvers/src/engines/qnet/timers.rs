//! 4-ary min-heap of `(time, timer id)` (catalogue §6, SIM-6).
//!
//! The queueing network has at most one pending event per source (its next
//! arrival or phase switch), one per busy entity (its service completion) and
//! one per link (the head of the packets in flight on it, which land in FIFO
//! order because an entity's link delay is a constant). Every change the
//! engine makes is to the timer that just fired, which is the root, or arms an
//! idle timer: so the calendar needs only [`Heap::replace_top`] (reschedule the
//! fired timer, or hand its slot to a newly armed one), [`Heap::push`] and
//! [`Heap::pop`], and no position map (which cost a scattered store per move).
//!
//! Layout: node i lives at slot i + 3, so the four children 4i + 1 … 4i + 4
//! of node i are slots 4s − 8 … 4s − 5 of slot s = i + 3: chunk s − 2 of an
//! array of 64-byte chunks of four slots (chunk j holds slots 4j … 4j + 3).
//! The root (slot 3) is a field of its own, so reading the earliest timer
//! needs no index (slots 0 … 3 of the array are never used). Slots past the
//! last node hold `+∞`, so a sift reads the four children without a bound
//! per child and an empty heap's top is `+∞`. A sift-down looks the
//! children up in the slice of the chunks that hold a node, so one test
//! both ends the sift and bounds the read.
//!
//! Ties (equal times) are broken by the heap's deterministic layout, so a run is
//! a function of its seed alone.

#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    time: f64,
    id: u32,
}

const EMPTY: Node = Node {
    time: f64::INFINITY,
    id: u32::MAX,
};

pub(super) struct Heap {
    /// Slot 3 (node 0), `EMPTY` when the heap is empty.
    root: Node,
    /// Chunk j: slots 4j … 4j + 3 (chunk 0 unused); slots past the last
    /// node hold `EMPTY`.
    g: Vec<[Node; 4]>,
    n: usize,
}

/// The smallest of four children, the first one on ties: its lane and time.
#[inline(always)]
fn least(ch: &[Node; 4]) -> (usize, f64) {
    let (a, b) = if ch[1].time < ch[0].time {
        (1, ch[1].time)
    } else {
        (0, ch[0].time)
    };
    let (c2, d) = if ch[3].time < ch[2].time {
        (3, ch[3].time)
    } else {
        (2, ch[2].time)
    };
    if d < b {
        (c2, d)
    } else {
        (a, b)
    }
}

impl Heap {
    /// A heap that can hold `cap` timers.
    pub(super) fn new(cap: usize) -> Self {
        // Nodes occupy slots 3 … cap + 2: chunks up to (cap + 2)/4.
        Heap {
            root: EMPTY,
            g: vec![[EMPTY; 4]; (cap + 2) / 4 + 1],
            n: 0,
        }
    }

    /// Earliest timer, `(+∞, u32::MAX)` when the heap is empty.
    #[inline(always)]
    pub(super) fn top(&self) -> (f64, u32) {
        (self.root.time, self.root.id)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.n
    }

    /// Slot `s` ≥ 4.
    #[inline(always)]
    fn slot(&mut self, s: usize) -> &mut Node {
        &mut self.g.as_flattened_mut()[s]
    }

    /// Arms timer `id` at `t` (the caller keeps each id armed at most once).
    #[inline]
    pub(super) fn push(&mut self, t: f64, id: u32) {
        let s = self.n + 3;
        self.n += 1;
        self.sift_up(s, Node { time: t, id });
    }

    /// Replaces the root (the timer that just fired) by `(t, id)`, `t` ≥ the
    /// root's time: the fired timer moves to `t` (same id) or gives its slot
    /// to timer `id`. The heap must not be empty.
    #[inline]
    pub(super) fn replace_top(&mut self, t: f64, id: u32) {
        debug_assert!(self.n > 0 && t >= self.top().0);
        self.sift_down(Node { time: t, id });
    }

    /// Removes the root.
    #[inline(always)]
    pub(super) fn pop(&mut self) {
        debug_assert!(self.n > 0);
        self.n -= 1;
        if self.n == 0 {
            self.root = EMPTY;
            return;
        }
        let last = std::mem::replace(self.slot(self.n + 3), EMPTY);
        self.sift_down(last);
    }

    /// Places `x` at hole slot `s` moving it towards the root (the parent
    /// of slot s is slot s/4 + 2).
    #[inline(always)]
    fn sift_up(&mut self, mut s: usize, x: Node) {
        while s > 3 {
            let p = (s >> 2) + 2;
            let y = if p == 3 { self.root } else { *self.slot(p) };
            if y.time <= x.time {
                break;
            }
            *self.slot(s) = y;
            s = p;
        }
        if s == 3 {
            self.root = x;
        } else {
            *self.slot(s) = x;
        }
    }

    /// Places `x` at the root hole moving it towards the leaves. Children
    /// past the last node read as `+∞`.
    #[inline(always)]
    fn sift_down(&mut self, x: Node) {
        // Chunk j ≥ 1 holds a node when its first slot 4j ≤ n + 2.
        let used = (self.n + 6) >> 2;
        let g = &mut self.g[..used];
        let Some(ch) = g.get(1) else {
            self.root = x;
            return;
        };
        let (k, tk) = least(ch);
        if tk >= x.time {
            self.root = x;
            return;
        }
        self.root = ch[k];
        let mut s = 4 + k;
        // The children of slot s are chunk s − 2, which holds a node iff
        // it lies in `g`.
        while let Some(ch) = g.get(s - 2) {
            let (k, tk) = least(ch);
            if tk >= x.time {
                break;
            }
            let y = ch[k];
            g.as_flattened_mut()[s] = y;
            s = 4 * s - 8 + k;
        }
        g.as_flattened_mut()[s] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::des::Stream;

    /// Random push / replace-top / pop against a brute-force minimum, with
    /// many equal times.
    #[test]
    fn matches_brute_force_minimum() {
        let m = 37;
        let mut h = Heap::new(m);
        // Armed timers by id; the heap's top must be one of the minima.
        let mut armed: Vec<Option<f64>> = vec![None; m];
        let mut rng = Stream::new(5, 9);
        for _ in 0..50_000 {
            let (t0, top) = h.top();
            let v = rng.uniform();
            let t = t0.clamp(0.0, 1e9) + (rng.uniform() * 20.0).floor();
            let idle: Vec<usize> = (0..m).filter(|&k| armed[k].is_none()).collect();
            if h.len() > 0 && v < 0.3 {
                h.pop();
                armed[top as usize] = None;
            } else if h.len() > 0 && v < 0.6 {
                h.replace_top(t, top);
                armed[top as usize] = Some(t);
            } else if h.len() > 0 && v < 0.75 && !idle.is_empty() {
                let id = idle[(rng.uniform() * idle.len() as f64) as usize];
                h.replace_top(t, id as u32);
                armed[top as usize] = None;
                armed[id] = Some(t);
            } else if !idle.is_empty() {
                let id = idle[(rng.uniform() * idle.len() as f64) as usize];
                h.push(t, id as u32);
                armed[id] = Some(t);
            }
            let best = armed
                .iter()
                .filter_map(|x| *x)
                .fold(f64::INFINITY, f64::min);
            assert_eq!(h.len(), armed.iter().filter(|x| x.is_some()).count());
            let (t, i) = h.top();
            assert_eq!(t, best);
            if t.is_finite() {
                assert_eq!(armed[i as usize], Some(t));
            }
        }
    }

    /// Heaps filled to their capacity (every chunk boundary of the first
    /// few levels), then emptied by replace-top and pop, stay in order.
    #[test]
    fn full_heaps_of_small_capacities() {
        let mut rng = Stream::new(3, 4);
        for cap in 1..=40 {
            let mut h = Heap::new(cap);
            let mut v: Vec<f64> = (0..cap).map(|_| (rng.uniform() * 8.0).floor()).collect();
            for (i, &t) in v.iter().enumerate() {
                h.push(t, i as u32);
            }
            assert_eq!(h.len(), cap);
            // Move the earliest timer later once, as the engine does.
            let (t0, id) = h.top();
            h.replace_top(t0 + 3.0, id);
            v.sort_by(f64::total_cmp);
            v[0] += 3.0;
            v.sort_by(f64::total_cmp);
            for &t in &v {
                assert_eq!(h.top().0, t);
                h.pop();
            }
            assert_eq!(h.top(), (f64::INFINITY, u32::MAX));
        }
    }

    /// Popping everything yields the times in order.
    #[test]
    fn pops_in_order() {
        let mut h = Heap::new(1000);
        let mut rng = Stream::new(1, 2);
        let mut v: Vec<f64> = (0..1000).map(|_| rng.uniform()).collect();
        for (i, &t) in v.iter().enumerate() {
            h.push(t, i as u32);
        }
        v.sort_by(f64::total_cmp);
        for &t in &v {
            assert_eq!(h.top().0, t);
            h.pop();
        }
        assert_eq!(h.top().0, f64::INFINITY);
    }
}
