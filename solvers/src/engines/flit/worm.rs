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
/// infinite for flits sent before the leg was scheduled), and those of the
/// last channel as integers.
#[derive(Debug, Clone, Default)]
pub(super) struct Leg {
    pub(super) chans: Vec<u32>,
    pub(super) send: Vec<f64>,
    pub(super) send_last: Vec<u64>,
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
    /// node). Only the tail's landing at the target is an event; the flits
    /// before it are counted when it lands, or earlier where a counter is
    /// read (a batch closing, the end of the run): a final node or a
    /// store-and-forward relay does nothing with them, and a cut-through
    /// relay reads how many have landed from their landing cycles when its
    /// injection VC may send (relay.rs `flits_here`), and is woken at the
    /// landing it waits for.
    pub(super) relay: bool,
}

impl Leg {
    /// Sends of channel `j` not yet made by cycle `e` (those at or after it).
    pub(super) fn due_from(&self, j: usize, e: u64) -> u64 {
        let w = self.omega as usize;
        let e = e as f64;
        self.send[j * w..(j + 1) * w]
            .iter()
            .filter(|&&s| s.is_finite() && s >= e)
            .count() as u64
    }

    /// Flits from `next` on that land at the target before the landing
    /// (cycle `t`, send cycle `s`, channel `ch`) in the timing wheel's order
    /// (cycle, send cycle, channel), the tail excepted.
    pub(super) fn landed_before(&self, t: u64, s: u64, ch: u32) -> u32 {
        let w = self.omega as usize;
        let last = *self.chans.last().expect("a leg has a channel");
        let mut k = self.next as usize;
        while k + 1 < w && (self.land[k], self.send_last[k], last) < (t, s, ch) {
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
    /// Depth of the buffer the channel feeds (flits).
    pub(super) buf: u32,
}

/// Computes the send and landing cycles of a leg's remaining flits. `st`:
/// the channels in path order; `inflight[j]`: the landing cycles of the
/// flits in flight on channel j, in flit order; `src[k]`: the cycle from
/// which flit k is at the source (≤ t0: there now). Fills `send`, `land`
/// and `credit` (h × ω, row per channel: the cycle flit k is sent on
/// channel j, lands behind it (0 for flits landed before t0), and its
/// credit is back at channel j; `send` is infinite for flits sent before
/// t0) and leaves each channel's pacing time after the last flit in `st`.
///
/// Flit k on channel j depends on flit k on channel j − 1 (its landing),
/// flit k − 1 on channel j (the channel's previous send and pacing) and
/// flit k − b_j on channel j + 1 (the credit; b_j the depth of the buffer
/// channel j feeds, [`ChanState::buf`]). Visiting (k, j) by
/// increasing 2k + j (a wavefront) computes each after all three, and the
/// flits of one wavefront are independent of each other, so the processor
/// overlaps their chains of operations instead of waiting for each (the
/// row-by-row order makes every step wait for the one before).
///
/// Cycles are whole numbers below 2^52, which f64 holds exactly, and every
/// sum here (a cycle + 1, a pacing time + a period or latency) is the one
/// the router visit computes, so the steps work in f64 throughout: the same
/// values as in integers, without a conversion between the two per step.
#[allow(clippy::too_many_arguments)]
pub(super) fn schedule(
    t0: u64,
    omega: u32,
    paced: bool,
    st: &mut [ChanState],
    inflight: &[Vec<u64>],
    src: &[f64],
    send: &mut Vec<f64>,
    land: &mut Vec<f64>,
    credit: &mut Vec<f64>,
) {
    let h = st.len();
    let w = omega as usize;
    let t0f = t0 as f64;
    debug_assert!(t0f < TWO52 / 4.0);
    send.clear();
    send.resize(h * w, f64::INFINITY);
    land.clear();
    land.resize(h * w, 0.0);
    credit.clear();
    credit.resize(h * w, 0.0);
    for (j, s) in st.iter().enumerate() {
        for (x, &l) in inflight[j].iter().enumerate() {
            land[j * w + s.landed as usize + x] = l as f64;
        }
        // Credits counted already, and those arriving next cycle (flits
        // landed at the target now); the other credits are written below
        // when the flit leaves the next buffer.
        let (ret, pend) = (s.returned as usize, s.pending as usize);
        for (x, v) in credit[j * w..(j + 1) * w].iter_mut().enumerate() {
            if x < ret {
                *v = t0f;
            } else if x < ret + pend {
                *v = t0f + 1.0;
            } else {
                break;
            }
        }
    }
    // The last channel's flits in flight: their credits follow their
    // landings at the target.
    let last = (h - 1) * w;
    let s = st[h - 1];
    for x in s.landed as usize..s.sent as usize {
        credit[last + x] = land[last + x] + 1.0;
    }
    if paced {
        waves::<true>(t0f, w, st, src, send, land, credit);
    } else {
        waves::<false>(t0f, w, st, src, send, land, credit);
    }
}

/// The steps of [`schedule`] by wavefronts, compiled once for paced and
/// once for unpaced channels (the test is then outside the loop).
fn waves<const PACED: bool>(
    t0f: f64,
    w: usize,
    st: &mut [ChanState],
    src: &[f64],
    send: &mut [f64],
    land: &mut [f64],
    credit: &mut [f64],
) {
    let h = st.len();
    // Wavefronts d = 2k + j, from 0 to 2(ω − 1) + h − 1.
    for d in 0..2 * (w - 1) + h {
        // k ≤ d / 2, j = d − 2k < h, k < ω.
        let k_hi = (d / 2).min(w - 1);
        let k_lo = if d + 1 > h { (d + 2 - h) / 2 } else { 0 };
        for k in (k_lo..=k_hi).rev() {
            let j = d - 2 * k;
            let s = &mut st[j];
            let sent = s.sent as usize;
            if k < sent {
                continue;
            }
            let row = j * w;
            let a = if j == 0 { src[k] } else { land[row - w + k] };
            let mut c = max(t0f, a);
            // The channel's previous send (none after the flits sent before
            // t0, whose next cycle is at most t0).
            if k > sent {
                c = max(c, send[row + k - 1] + 1.0);
            }
            let b = s.buf as usize;
            if k >= b {
                c = max(c, credit[row + k - b]);
            }
            let l = if PACED {
                let r = s.ready;
                c = max(c, floor(r));
                let v = max(r, c);
                s.ready = v + s.period;
                max(ceil(v + s.latency), c + 1.0)
            } else {
                c + s.lat_cycles as f64
            };
            send[row + k] = c;
            land[row + k] = l;
            if j > 0 {
                credit[row - w + k] = c + 1.0;
            }
            if j + 1 == h {
                credit[row + k] = l + 1.0;
            }
        }
    }
}

const TWO52: f64 = 4_503_599_627_370_496.0;

/// The larger of two numbers that are not NaN.
#[inline]
fn max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// ⌊x⌋ and ⌈x⌉ for 0 ≤ x < 2^52 without leaving f64: x + 2^52 − 2^52 is x
/// rounded to the nearest whole number (the sum lies where the spacing of
/// f64 is 1, and the subtraction is exact), then corrected by one.
#[inline]
fn floor(x: f64) -> f64 {
    debug_assert!((0.0..TWO52).contains(&x));
    let r = (x + TWO52) - TWO52;
    if r > x {
        r - 1.0
    } else {
        r
    }
}

#[inline]
fn ceil(x: f64) -> f64 {
    debug_assert!((0.0..TWO52).contains(&x));
    let r = (x + TWO52) - TWO52;
    if r < x {
        r + 1.0
    } else {
        r
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
