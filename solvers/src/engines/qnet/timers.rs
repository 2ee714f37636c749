//! Indexed 4-ary min-heap over a fixed set of timers (catalogue §6, SIM-6).
//!
//! The queueing network has at most one pending event per source (its next
//! arrival or phase switch), one per busy entity (its service completion) and
//! one per link (the head of the packets in flight on it, which land in FIFO
//! order because an entity's link delay is a constant). So the calendar is a
//! heap of `(time, timer id)` with a position map: rescheduling the timer that
//! just fired is one sift-down from the root, arming an idle entity one
//! sift-up, and nothing is allocated per event. A 4-ary layout halves the
//! depth of a binary heap; the ~1–2 k active timers of a 9×9 network fit in L1/L2.
//!
//! Ties (equal times) are broken by the heap's deterministic layout, so a run is
//! a function of its seed alone.

const NIL: u32 = u32::MAX;

pub(super) struct Timers {
    /// Heap of (time, id), earliest at index 0.
    time: Vec<f64>,
    id: Vec<u32>,
    /// Heap index of each timer id, `NIL` when the timer is not armed.
    pos: Vec<u32>,
}

impl Timers {
    pub(super) fn new(ids: usize) -> Self {
        Timers {
            time: Vec::with_capacity(ids),
            id: Vec::with_capacity(ids),
            pos: vec![NIL; ids],
        }
    }

    /// Earliest armed timer.
    #[inline]
    pub(super) fn peek(&self) -> Option<(f64, u32)> {
        if self.time.is_empty() {
            None
        } else {
            Some((self.time[0], self.id[0]))
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.time.len()
    }

    /// Arms timer `id` at `t`, or moves it to `t` if it is armed.
    #[inline]
    pub(super) fn set(&mut self, id: u32, t: f64) {
        let i = self.pos[id as usize];
        if i == NIL {
            let n = self.time.len();
            self.time.push(t);
            self.id.push(id);
            self.sift_up(n, t, id);
        } else {
            let i = i as usize;
            if t < self.time[i] {
                self.sift_up(i, t, id);
            } else {
                self.sift_down(i, t, id);
            }
        }
    }

    /// Disarms timer `id` (no-op if it is not armed).
    #[inline]
    pub(super) fn cancel(&mut self, id: u32) {
        let i = self.pos[id as usize];
        if i == NIL {
            return;
        }
        self.pos[id as usize] = NIL;
        let i = i as usize;
        let (t, last) = (self.time.pop().unwrap(), self.id.pop().unwrap());
        if i < self.time.len() {
            if t < self.time[i] {
                self.sift_up(i, t, last);
            } else {
                self.sift_down(i, t, last);
            }
        }
    }

    /// Disarms armed timer `old` and arms idle timer `id` at `t` in its slot:
    /// one sift instead of a cancel's plus an insert's.
    #[inline]
    pub(super) fn transfer(&mut self, old: u32, id: u32, t: f64) {
        let i = self.pos[old as usize] as usize;
        debug_assert!(i != NIL as usize && (old == id || self.pos[id as usize] == NIL));
        self.pos[old as usize] = NIL;
        if t < self.time[i] {
            self.sift_up(i, t, id);
        } else {
            self.sift_down(i, t, id);
        }
    }

    /// Places (t, id) at hole `i` moving it towards the root.
    #[inline]
    fn sift_up(&mut self, mut i: usize, t: f64, id: u32) {
        while i > 0 {
            let p = (i - 1) / 4;
            if self.time[p] <= t {
                break;
            }
            self.time[i] = self.time[p];
            self.id[i] = self.id[p];
            self.pos[self.id[i] as usize] = i as u32;
            i = p;
        }
        self.time[i] = t;
        self.id[i] = id;
        self.pos[id as usize] = i as u32;
    }

    /// Places (t, id) at hole `i` moving it towards the leaves.
    #[inline]
    fn sift_down(&mut self, mut i: usize, t: f64, id: u32) {
        let n = self.time.len();
        loop {
            let c0 = 4 * i + 1;
            if c0 >= n {
                break;
            }
            let end = (c0 + 4).min(n);
            let mut c = c0;
            let mut tc = self.time[c0];
            for k in c0 + 1..end {
                let tk = self.time[k];
                if tk < tc {
                    c = k;
                    tc = tk;
                }
            }
            if tc >= t {
                break;
            }
            self.time[i] = tc;
            self.id[i] = self.id[c];
            self.pos[self.id[i] as usize] = i as u32;
            i = c;
        }
        self.time[i] = t;
        self.id[i] = id;
        self.pos[id as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::des::Stream;

    /// Random arm / move / cancel against a brute-force minimum.
    #[test]
    fn matches_brute_force_minimum() {
        let m = 37;
        let mut h = Timers::new(m);
        let mut armed: Vec<Option<f64>> = vec![None; m];
        let mut rng = Stream::new(5, 9);
        for _ in 0..20_000 {
            let id = (rng.uniform() * m as f64) as usize;
            let v = rng.uniform();
            if v < 0.3 {
                h.cancel(id as u32);
                armed[id] = None;
            } else if v < 0.45 && armed[id].is_none() {
                // Move the slot of some armed timer to `id`.
                if let Some(old) = (0..m).find(|&k| armed[k].is_some()) {
                    let t = (rng.uniform() * 50.0).floor();
                    h.transfer(old as u32, id as u32, t);
                    armed[old] = None;
                    armed[id] = Some(t);
                }
            } else {
                let t = (rng.uniform() * 50.0).floor();
                h.set(id as u32, t);
                armed[id] = Some(t);
            }
            let best = armed
                .iter()
                .filter_map(|x| *x)
                .fold(f64::INFINITY, f64::min);
            assert_eq!(h.len(), armed.iter().filter(|x| x.is_some()).count());
            match h.peek() {
                None => assert!(best.is_infinite()),
                Some((t, i)) => {
                    assert_eq!(t, best);
                    assert_eq!(armed[i as usize], Some(t));
                }
            }
        }
    }
}
