//! Worms advanced per message in the general loop (`sim.rs`), issue 35.
//!
//! With one VC per channel, once the header of a leg has landed at the
//! leg's target, every channel from the leg's source to the target is owned
//! by that message alone until its tail passes (an output VC is allocated
//! only to a header, and only when the buffer behind it is empty). No other
//! message can then change when the leg's remaining flits move: flit k is
//! sent on channel j in the first cycle in which (a) it is in the buffer
//! before the channel (it landed there, or at the source: it is there, or
//! at a cut-through relay: it landed at the relay), (b) the channel holds a
//! credit, i.e. the credit of flit k − buffer has come back (the cycle after
//! that flit left the next buffer, or after it landed at the target), and
//! (c) the channel's pacing allows a start (its ready time is below the next
//! cycle), the same conditions the router visit tests; the visit happens in
//! that cycle because the loop visits every router that can act (sim.rs).
//! Those cycles are the maximum of the lower bounds, so the leg's flits are
//! computed here per message in one pass (flit by flit, channel by channel)
//! instead of one landing, one credit and a router visit per flit-hop.
//!
//! What others see of the leg becomes events of `sim.rs`: the flits landing
//! at the target (delivered, or absorbed by a relay), in the order the
//! timing wheel would land them (send cycle, then channel); each channel's
//! release when the credit of its tail is back (owner, credits, pacing time
//! and the allocation of the input VC that fed it, as the flit-by-flit loop
//! leaves them); the source's injection VC freed the cycle after the tail
//! left it. Counters that count sends (flits per channel, flits injected,
//! flits in the network) are added when the leg is scheduled and corrected
//! for sends not yet due where a run reads them early: the warm-up's end and
//! the end of the run.

/// A scheduled leg: its channels (output VC = channel with one VC) in path
/// order and, per channel, the send cycle of each flit (row j, index k;
/// `u64::MAX` for flits sent before the leg was scheduled).
#[derive(Debug, Clone, Default)]
pub(super) struct Leg {
    pub(super) chans: Vec<u32>,
    pub(super) send: Vec<u64>,
    /// The source's injection VC (index among injection VCs).
    pub(super) inj: u32,
    pub(super) omega: u32,
    /// The message, the input VC at the leg's target, the landing cycle
    /// there of each flit and the next flit to land.
    pub(super) msg: u32,
    pub(super) target: u32,
    pub(super) land: Vec<u64>,
    pub(super) next: u32,
    /// The target is a relay absorbing the message's flits (else its final
    /// node).
    pub(super) relay: bool,
    /// Only the tail's landing at the target is an event; the flits before
    /// it are counted when it lands, or earlier where a counter is read
    /// (a batch closing, the end of the run): a final node or a
    /// store-and-forward relay does nothing with them, and a cut-through
    /// relay nothing once the message's next leg is scheduled.
    pub(super) lazy: bool,
}

impl Leg {
    /// Sends of channel `j` not yet made by cycle `e` (those at or after it).
    pub(super) fn due_from(&self, j: usize, e: u64) -> u64 {
        let w = self.omega as usize;
        self.send[j * w..(j + 1) * w]
            .iter()
            .filter(|&&s| s != u64::MAX && s >= e)
            .count() as u64
    }

    /// Flits from `next` on that land at the target before the landing
    /// (cycle `t`, send cycle `s`, channel `ch`) in the timing wheel's order
    /// (cycle, send cycle, channel), the tail excepted.
    pub(super) fn landed_before(&self, t: u64, s: u64, ch: u32) -> u32 {
        let w = self.omega as usize;
        let last = *self.chans.last().expect("a leg has a channel");
        let row = &self.send[self.send.len() - w..];
        let mut k = self.next as usize;
        while k + 1 < w && (self.land[k], row[k], last) < (t, s, ch) {
            k += 1;
        }
        (k - self.next as usize) as u32
    }
}

/// The state of one channel of a leg when it is scheduled (cycle `t0`,
/// after the landings of that cycle).
#[derive(Debug, Clone, Copy)]
pub(super) struct ChanState {
    /// Flits of the message sent on the channel so far.
    pub(super) sent: u32,
    /// Of those, the ones whose credit is already counted, and those whose
    /// credit arrives in `t0 + 1` (landed at the target this cycle).
    pub(super) returned: u32,
    pub(super) pending: u32,
    /// Flits landed downstream (the rest of `sent` are in flight, landing
    /// in the cycles of the caller's list).
    pub(super) landed: u32,
    pub(super) ready: f64,
    pub(super) period: f64,
    pub(super) latency: f64,
    pub(super) lat_cycles: u64,
}

/// Computes the send and landing cycles of a leg's remaining flits. `st`:
/// the channels in path order; `inflight[j]`: the landing cycles of the
/// flits in flight on channel j, in flit order; `avail(k)`: the cycle from
/// which flit k is at the source (≤ t0: there now). Fills `send` and `land`
/// (h × ω, row per channel; `land` holds 0 for flits landed before t0) and
/// returns each channel's pacing time after the last flit.
///
/// Flit k on channel j depends on flit k on channel j − 1 (its landing),
/// flit k − 1 on channel j (the channel's previous send and pacing) and
/// flit k − buffer on channel j + 1 (the credit). Visiting (k, j) by
/// increasing 2k + j (a wavefront) computes each after all three, and the
/// flits of one wavefront are independent of each other, so the processor
/// overlaps their chains of float operations instead of waiting for each
/// (the row-by-row order makes every step wait for the one before).
#[allow(clippy::too_many_arguments)]
pub(super) fn schedule(
    t0: u64,
    omega: u32,
    buf: u32,
    paced: bool,
    st: &mut [ChanState],
    inflight: &[Vec<u64>],
    avail: impl Fn(u32) -> u64,
    send: &mut Vec<u64>,
    land: &mut Vec<u64>,
) {
    let h = st.len();
    let w = omega as usize;
    let b = buf as usize;
    send.clear();
    send.resize(h * w, u64::MAX);
    land.clear();
    land.resize(h * w, 0);
    for (j, s) in st.iter().enumerate() {
        for (x, &l) in inflight[j].iter().enumerate() {
            land[j * w + s.landed as usize + x] = l;
        }
    }
    let step = |k: usize, j: usize, st: &mut [ChanState], send: &mut [u64], land: &mut [u64]| {
        let s = st[j];
        if k < s.sent as usize {
            return;
        }
        let a = if j == 0 {
            avail(k as u32)
        } else {
            land[(j - 1) * w + k]
        };
        let mut c = t0.max(a);
        // The channel's previous send (none after the flits sent before t0,
        // whose next cycle is at most t0).
        if k > s.sent as usize {
            c = c.max(send[j * w + k - 1] + 1);
        }
        if k >= b {
            let x = (k - b) as u32;
            let cr = if x < s.returned {
                0
            } else if x < s.returned + s.pending {
                t0 + 1
            } else if j + 1 < h {
                send[(j + 1) * w + x as usize] + 1
            } else {
                land[j * w + x as usize] + 1
            };
            c = c.max(cr);
        }
        // Cycle counts are below 2^63: the conversions through i64 give the
        // same values as those through u64, with one instruction each.
        let l = if paced {
            let r = s.ready;
            c = c.max(r as i64 as u64);
            let v = r.max(c as i64 as f64);
            st[j].ready = v + s.period;
            let x = v + s.latency;
            let t = x as i64;
            let up = if (t as f64) < x { t + 1 } else { t };
            (up as u64).max(c + 1)
        } else {
            c + s.lat_cycles
        };
        send[j * w + k] = c;
        land[j * w + k] = l;
    };
    // Wavefronts d = 2k + j, from 0 to 2(ω − 1) + h − 1.
    for d in 0..2 * (w - 1) + h {
        // k ≤ d / 2, j = d − 2k < h, k < ω.
        let k_hi = (d / 2).min(w - 1);
        let k_lo = if d + 1 > h { (d + 2 - h) / 2 } else { 0 };
        for k in (k_lo..=k_hi).rev() {
            step(k, d - 2 * k, st, send, land);
        }
    }
}

/// The credit of flit `x` of channel `j` (the cycle it is counted upstream).
pub(super) fn credit_back(
    st: &[ChanState],
    j: usize,
    x: u32,
    t0: u64,
    omega: u32,
    send: &[u64],
    land: &[u64],
) -> u64 {
    let w = omega as usize;
    let s = st[j];
    if x < s.returned {
        t0
    } else if x < s.returned + s.pending {
        t0 + 1
    } else if j + 1 < st.len() {
        send[(j + 1) * w + x as usize] + 1
    } else {
        land[j * w + x as usize] + 1
    }
}

/// An event of a scheduled leg other than a landing at its target.
#[derive(Debug, Clone, Copy)]
pub(super) enum Release {
    /// Channel `o` (output VC, one VC) is free: owner, credits and pacing
    /// time as the flit-by-flit loop leaves them, the allocation of input VC
    /// `fed` (NONE: none) released, the owning router marked; `skip`
    /// (NONE: none) stops skipping landings at that input VC. `last`: the
    /// leg's final event (its slot in the leg table).
    Channel {
        o: u32,
        ready: f64,
        fed: u32,
        skip: u32,
        last: u32,
    },
    /// The source's injection VC `inj` (index among injection VCs) is free.
    Source { inj: u32 },
}
