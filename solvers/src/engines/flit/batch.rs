//! Batch means of the cycle loops (`sim.rs` and `unit.rs` share them, so
//! both close their batches on the same message with the same sums): the
//! warm-up, then per batch of `batch_len` delivered messages the mean
//! latency, network latency, hops and throughput, per group the latency and
//! source wait, per relay slot the FIFO wait.

use super::sim::{Counters, Msg};
use super::Scenario;

pub(super) struct Batches {
    warmup: u64,
    batch_len: u64,
    n_src: f64,
    grouped: bool,
    /// Warm-up over (every message delivered from then on is measured), the
    /// messages delivered before, the cycle it ended and the channels'
    /// flit counts then.
    warm_done: bool,
    warm_count: u64,
    warm_cycle: u64,
    ch_flits_at_warm: Vec<u64>,
    /// The current batch: messages, sums of latency, network latency and
    /// hops, flits delivered, first cycle.
    n: u64,
    lat: f64,
    net: f64,
    hops: f64,
    flits: u64,
    start: u64,
    /// Per group: latency sum and count; source-wait sum (one group: empty).
    group: Vec<(f64, u64)>,
    gwait: Vec<f64>,
    /// Per relay slot: FIFO wait sum and count.
    wait: Vec<(f64, u64)>,
}

impl Batches {
    pub(super) fn new(
        sc: &Scenario,
        n_src: usize,
        n_groups: usize,
        n_slots: usize,
        n_ch: usize,
    ) -> Self {
        let grouped = n_groups > 1;
        Batches {
            warmup: sc.run.warmup,
            batch_len: sc.run.batch_len,
            n_src: n_src as f64,
            grouped,
            warm_done: sc.run.warmup == 0,
            warm_count: 0,
            warm_cycle: 0,
            ch_flits_at_warm: vec![0; n_ch],
            n: 0,
            lat: 0.0,
            net: 0.0,
            hops: 0.0,
            flits: 0,
            start: 0,
            group: vec![(0.0, 0); if grouped { n_groups } else { 0 }],
            gwait: vec![0.0; if grouped { n_groups } else { 0 }],
            wait: vec![(0.0, 0); n_slots],
        }
    }

    /// Whether the warm-up is over.
    #[inline]
    pub(super) fn warm(&self) -> bool {
        self.warm_done
    }

    /// Takes `n` sends off channel `ch`'s count at the end of the warm-up
    /// (sends of a scheduled leg counted ahead, not yet made then).
    pub(super) fn warm_sub(&mut self, ch: usize, n: u64) {
        self.ch_flits_at_warm[ch] -= n;
    }

    /// Adds `n` sends to channel `ch`'s count at the end of the warm-up
    /// (sends behind a train's header, made but not yet counted).
    pub(super) fn warm_add(&mut self, ch: usize, n: u64) {
        self.ch_flits_at_warm[ch] += n;
    }

    /// A flit reached its destination.
    #[inline]
    pub(super) fn flit(&mut self, c: &mut Counters) {
        c.flits_delivered += 1;
        self.flits += 1;
    }

    /// `n` flits reached their destinations (a lazy leg's, counted late).
    #[inline]
    pub(super) fn flits(&mut self, n: u64, c: &mut Counters) {
        c.flits_delivered += n;
        self.flits += n;
    }

    /// Whether the next delivered message ends the warm-up or a batch.
    #[inline]
    pub(super) fn ends_next(&self) -> bool {
        if self.warm_done {
            self.n + 1 >= self.batch_len
        } else {
            self.warm_count + 1 >= self.warmup
        }
    }

    /// A message waited `cycles` in the FIFO of relay slot `slot` (counted
    /// once the warm-up is over).
    #[inline]
    pub(super) fn relay_wait(&mut self, slot: usize, cycles: u64) {
        if self.warm_done {
            let w = &mut self.wait[slot];
            w.0 += cycles as f64;
            w.1 += 1;
        }
    }

    /// The tail of `msg` reached its destination in `cycle` (after its
    /// flit was counted): the warm-up counts it, or the batch does and
    /// closes when full. `ch_flits`: the channels' flit counts so far.
    #[inline]
    pub(super) fn message(&mut self, msg: &Msg, cycle: u64, ch_flits: &[u64], c: &mut Counters) {
        c.msgs_delivered += 1;
        if !self.warm_done {
            self.warm_count += 1;
            if self.warm_count >= self.warmup {
                self.warm_done = true;
                self.warm_cycle = cycle;
                self.ch_flits_at_warm.copy_from_slice(ch_flits);
                self.start = cycle;
                self.flits = 0;
                self.wait.iter_mut().for_each(|g| *g = (0.0, 0));
            }
            return;
        }
        self.n += 1;
        self.lat += (cycle - msg.gen) as f64;
        self.net += (cycle + 1 - msg.inject) as f64;
        self.hops += msg.hops as f64;
        if self.grouped {
            let g = &mut self.group[msg.group as usize];
            g.0 += (cycle - msg.gen) as f64;
            g.1 += 1;
            self.gwait[msg.group as usize] += msg.inject.saturating_sub(msg.gen + 1) as f64;
        }
        if self.n >= self.batch_len {
            self.close(cycle, c);
        }
    }

    /// Closes the full batch that ended in `cycle`.
    #[cold]
    fn close(&mut self, cycle: u64, c: &mut Counters) {
        if self.grouped {
            c.group_latency.push(self.group.clone());
            self.group.iter_mut().for_each(|g| *g = (0.0, 0));
            c.group_wait.push(self.gwait.clone());
            self.gwait.iter_mut().for_each(|g| *g = 0.0);
        }
        if !self.wait.is_empty() {
            c.relay_wait.push(self.wait.clone());
            self.wait.iter_mut().for_each(|g| *g = (0.0, 0));
        }
        let n = self.n as f64;
        let span = (cycle + 1 - self.start).max(1) as f64;
        c.latency.push(self.lat / n);
        c.network_latency.push(self.net / n);
        c.hops.push(self.hops / n);
        c.throughput.push(self.flits as f64 / (self.n_src * span));
        self.n = 0;
        self.lat = 0.0;
        self.net = 0.0;
        self.hops = 0.0;
        self.flits = 0;
        self.start = cycle + 1;
    }

    /// At the end of the run (`c.cycles` set): the measured cycles and each
    /// channel's flits since the warm-up.
    pub(super) fn finish(&self, ch_flits: &[u64], c: &mut Counters) {
        if self.warm_done {
            c.measured_cycles = c.cycles - self.warm_cycle;
            for (x, (a, b)) in c
                .channel_flits
                .iter_mut()
                .zip(ch_flits.iter().zip(&self.ch_flits_at_warm))
            {
                *x = a - b;
            }
        }
    }
}
