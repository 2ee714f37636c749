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
/// infinite for flits sent before the leg was scheduled).
#[derive(Debug, Clone, Default)]
pub(super) struct Leg {
    pub(super) chans: Vec<u32>,
    pub(super) send: Vec<f64>,
    /// The source's injection VC (index among injection VCs).
    pub(super) inj: u32,
    pub(super) omega: u32,
    /// The message, the input VC at the leg's target, the landing cycles
    /// of [`schedule`] (the last row's: at the target, of each flit) and the
    /// next flit to land.
    pub(super) msg: u32,
    pub(super) target: u32,
    pub(super) land: Vec<f64>,
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
        let lw = (self.chans.len() - 1) * w;
        let (land, send) = (&self.land[lw..lw + w], &self.send[lw..lw + w]);
        let mut k = self.next as usize;
        while k + 1 < w && (land[k] as u64, send[k] as u64, last) < (t, s, ch) {
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
    /// Earliest send of flit `sent` from the channel's own previous send
    /// (that send + 1; a leg scheduled at t0 has none after t0, so 0; a
    /// train's header was sent, [`Train`]).
    pub(super) first: f64,
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
    // Every value a step reads is one written here (a flit sent or landed
    // before t0, in flight, or a credit counted) or by an earlier step, and
    // so is every value the caller reads (the rows are not filled whole).
    size_rows(h * w, send, land, credit);
    for (j, s) in st.iter().enumerate() {
        let row = j * w;
        let (sent, landed) = (s.sent as usize, s.landed as usize);
        send[row..row + sent].fill(f64::INFINITY);
        land[row..row + landed].fill(0.0);
        for (x, &l) in inflight[j].iter().enumerate() {
            land[row + landed + x] = l as f64;
        }
        // Credits counted already, and those arriving next cycle (flits
        // landed at the target now); the other credits are written below
        // when the flit leaves the next buffer (or lands at the target).
        // Those of flits that left before t0 and are not counted (none is
        // expected) impose nothing, as 0.
        let ret = (s.returned as usize).min(w);
        let pend = (ret + s.pending as usize).min(w);
        credit[row..row + ret].fill(t0f);
        credit[row + ret..row + pend].fill(t0f + 1.0);
        let before = if j + 1 < h {
            st[j + 1].sent as usize
        } else {
            landed
        };
        if before > pend {
            credit[row + pend..row + before].fill(0.0);
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

/// Makes `send`, `land` and `credit` hold at least `n` values each, for
/// [`schedule`] and [`schedule_train`]. Not filled whole: every value a
/// step reads is one the schedule writes first; debug builds fill them
/// with NaN first, and the steps check what they read.
fn size_rows(n: usize, send: &mut Vec<f64>, land: &mut Vec<f64>, credit: &mut Vec<f64>) {
    for v in [send, land, credit] {
        if cfg!(debug_assertions) {
            v.clear();
        }
        if v.len() < n {
            v.resize(n, f64::NAN);
        }
    }
}

/// [`schedule`] for a leg moved as a train ([`Train`]), when its header
/// lands at the target: every flit behind the header from the leg's start,
/// with the header's send and landing cycles as the loop made them. `st`:
/// the channels in path order with one flit sent and landed, their pacing
/// after the header and `first` = the header's send + 1.
///
/// Fills what the caller reads: every send (`send`, h × ω), the landings
/// at the target (the last row of `land`; the other rows are not written)
/// and the cycle each channel's tail credit is back (`credit[j·ω + ω − 1]`,
/// the only entries of `credit` written). A train's credits need no array
/// of their own: the credit of flit x at channel j is the cycle after its
/// send on channel j + 1, or after its landing at the target.
pub(super) fn schedule_train(
    tr: &Train,
    omega: u32,
    paced: bool,
    st: &mut [ChanState],
    send: &mut Vec<f64>,
    land: &mut Vec<f64>,
    credit: &mut Vec<f64>,
) {
    let h = st.len();
    let w = omega as usize;
    debug_assert!(tr.reached as usize == h && tr.chans.len() == h && w >= 2);
    size_rows(h * w, send, land, credit);
    for j in 0..h {
        send[j * w] = tr.hsend[j];
    }
    let lw = (h - 1) * w;
    land[lw] = tr.hland[h - 1];
    // Whole-cycle timing and every flit at the source from the start: the
    // steps are then sums and maxima of whole numbers, exact in f64, and
    // the train may be extrapolated once it repeats ([`rows`]).
    let whole = tr.src.iter().all(|&x| x == 0.0)
        && st
            .iter()
            .all(|s| s.period.fract() == 0.0 && s.latency.fract() == 0.0);
    if paced {
        rows::<true>(w, st, &tr.src, send, &mut land[lw..lw + w], whole);
    } else {
        rows::<false>(w, st, &tr.src, send, &mut land[lw..lw + w], whole);
    }
    // The tail's credit at each channel: the cycle after it left the next
    // buffer, or after it landed at the target.
    for j in 0..h {
        credit[j * w + w - 1] = if j + 1 < h {
            send[(j + 1) * w + w - 1] + 1.0
        } else {
            land[lw + w - 1] + 1.0
        };
    }
}

/// The steps of [`schedule_train`], flit by flit (each flit through every
/// channel): flit k on channel j needs flit k on channel j − 1 (its
/// landing, carried from the previous step), flit k − 1 on channel j (its
/// send + 1, kept in `first`) and the credit of flit k − b_j: the cycle
/// after that flit's send on channel j + 1 (row j + 1 of `send`), or, on
/// the last channel, after its landing at the target (`land`, the target's
/// row). All are computed before it in this order. Every channel has sent
/// the header (flit 0).
///
/// `whole`: every period and latency is a whole number of cycles and every
/// flit is at the source from the start (`src` all 0). Every value is then
/// a whole number (a paced step reduces to c = max(c, r), ready = c +
/// period, landing = c + max(latency, 1)), so each step commutes exactly
/// with adding a whole number Δ to all its inputs, and what the steps of
/// flits k + 1, k + 2, … read is flit k's sends and pacing (ready = send +
/// period) and the last b_j sends of each next channel (the landings at
/// the target for the last), the source never binding (0 below every
/// send). Once every channel's send and the target's landing have grown by
/// the same Δ from flit to flit over the last max b_j flits, that state is
/// the previous flit's plus Δ, and by induction every later flit is the
/// one before it plus Δ: those are then written directly, the same
/// values the steps would give.
fn rows<const PACED: bool>(
    w: usize,
    st: &mut [ChanState],
    src: &[f64],
    send: &mut [f64],
    land: &mut [f64],
    whole: bool,
) {
    let h = st.len();
    let bmax = st.iter().map(|s| s.buf as usize).max().unwrap_or(1);
    // Consecutive flits (up to the last computed) whose every send and
    // landing at the target grew by `delta`.
    let (mut run, mut delta) = (0usize, 0.0f64);
    let (body, last) = st.split_at_mut(h - 1);
    let last = &mut last[0];
    let lrow = (h - 1) * w;
    for k in 1..w {
        let mut a = src[k];
        for (j, s) in body.iter_mut().enumerate() {
            let row = j * w;
            let mut c = max(a, s.first);
            let b = s.buf as usize;
            if k >= b {
                let x = row + w + k - b;
                debug_assert!(!send[x].is_nan(), "flit {k} of channel {j}: unset credit");
                c = max(c, send[x] + 1.0);
            }
            a = step::<PACED>(s, &mut c);
            send[row + k] = c;
            s.first = c + 1.0;
        }
        let mut c = max(a, last.first);
        let b = last.buf as usize;
        if k >= b {
            debug_assert!(
                !land[k - b].is_nan(),
                "flit {k} of the last channel: unset credit"
            );
            c = max(c, land[k - b] + 1.0);
        }
        land[k] = step::<PACED>(last, &mut c);
        send[lrow + k] = c;
        last.first = c + 1.0;
        if whole && k + 1 < w {
            let d = land[k] - land[k - 1];
            let same = (0..h).all(|j| send[j * w + k] - send[j * w + k - 1] == d);
            run = match (same, d == delta) {
                (false, _) => 0,
                (true, true) => run + 1,
                (true, false) => 1,
            };
            delta = d;
            if run >= bmax {
                extrapolate::<PACED>(w, k, d, body, last, send, land);
                return;
            }
        }
    }
}

/// Flits k + 1 .. ω of [`rows`] once they repeat flit k's plus Δ each:
/// sends, landings at the target, and each channel's pacing and `first`
/// as the steps would leave them after the tail (whole numbers, so exact).
fn extrapolate<const PACED: bool>(
    w: usize,
    k: usize,
    d: f64,
    body: &mut [ChanState],
    last: &mut ChanState,
    send: &mut [f64],
    land: &mut [f64],
) {
    let fill = |v: &mut [f64]| {
        let base = v[k];
        for (n, x) in v[k + 1..w].iter_mut().enumerate() {
            *x = base + (n + 1) as f64 * d;
        }
    };
    for (j, s) in body.iter_mut().chain(std::iter::once(last)).enumerate() {
        let row = &mut send[j * w..(j + 1) * w];
        fill(row);
        let tail = row[w - 1];
        if PACED {
            debug_assert_eq!(s.ready, row[k] + s.period);
            s.ready = tail + s.period;
        }
        s.first = tail + 1.0;
    }
    fill(land);
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
            debug_assert!(!a.is_nan(), "flit {k} of channel {j}: unset arrival");
            let mut c = max(t0f, a);
            // The channel's previous send (of the flits sent before t0, the
            // last one's next cycle: `first`).
            if k > sent {
                debug_assert!(!send[row + k - 1].is_nan());
                c = max(c, send[row + k - 1] + 1.0);
            } else {
                c = max(c, s.first);
            }
            let l = send_flit::<PACED>(s, c, j, k, w, send, land, credit);
            if j + 1 == h {
                credit[row + k] = l + 1.0;
            }
        }
    }
}

/// Flit `k` on channel `j` (row `j · w`), free to go from cycle `c` but for
/// its credit: it waits for the credit of flit `k − b_j`, is sent
/// ([`step`]), its send and landing cycles are recorded and the previous
/// channel gets its credit back; returns the landing cycle. The step of
/// [`waves`] ([`rows`] takes the same steps with the credits read off the
/// sends).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn send_flit<const PACED: bool>(
    s: &mut ChanState,
    mut c: f64,
    j: usize,
    k: usize,
    w: usize,
    send: &mut [f64],
    land: &mut [f64],
    credit: &mut [f64],
) -> f64 {
    let row = j * w;
    let b = s.buf as usize;
    if k >= b {
        debug_assert!(
            !credit[row + k - b].is_nan(),
            "flit {k} of channel {j}: unset credit"
        );
        c = max(c, credit[row + k - b]);
    }
    let l = step::<PACED>(s, &mut c);
    send[row + k] = c;
    land[row + k] = l;
    if j > 0 {
        credit[row - w + k] = c + 1.0;
    }
    l
}

/// One send of a flit that may start in cycle `c` at the earliest (it is
/// in the buffer, the channel holds a credit and its previous send is
/// past): `c` becomes the send cycle (paced: the first cycle whose interval
/// holds the channel's ready time, if later), the channel's ready time
/// advances; returns the landing cycle. The router visit's arithmetic.
#[inline(always)]
fn step<const PACED: bool>(s: &mut ChanState, c: &mut f64) -> f64 {
    if PACED {
        let r = s.ready;
        *c = max(*c, floor(r));
        let v = max(r, *c);
        s.ready = v + s.period;
        max(ceil(v + s.latency), *c + 1.0)
    } else {
        *c + s.lat_cycles as f64
    }
}

pub(super) const TWO52: f64 = 4_503_599_627_370_496.0;

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
pub(super) fn floor(x: f64) -> f64 {
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

/// A leg moved as a train (issue 35, session 10): the header goes flit by
/// flit through the cycle loop, as every header does, and the flits behind
/// it are not moved at all until the header lands at the leg's target,
/// where the whole leg is scheduled ([`schedule`] from the header's own
/// send and landing cycles) and continues as a scheduled leg.
///
/// Why nothing changes: with one VC per channel a channel the header has
/// taken is owned by the message until its tail passes, and the header's
/// own moves depend only on its buffer, the next channel's owner, credits
/// and pacing, never on the flits behind it. The flits behind it are seen
/// by nobody else before the tail leaves a channel (the release) or the
/// source (the injection VC freed). On a leg whose buffers hold fewer than
/// ω flits together (Σ b_j ≤ ω − 1 over its channels) the tail cannot leave
/// any of its channels before some flit has landed at the target, so not
/// before the header: a train is used only on such legs, whose channels
/// the routing fixes in advance ([`super::Routing::fixed_path`]). What is
/// read of the flits behind the header before it lands (the channels'
/// counts at the end of the warm-up and of the run, the deadlock
/// detector's last progress) is computed from [`Train::partial_sends`].
#[derive(Debug, Clone, Default)]
pub(super) struct Train {
    /// The leg's channels (output VC = channel, one VC), in path order.
    pub(super) chans: Vec<u32>,
    /// Per channel: the header's send and landing cycles (for the first
    /// `reached` channels) and the channel's ready time before the header.
    pub(super) hsend: Vec<f64>,
    pub(super) hland: Vec<f64>,
    pub(super) ready0: Vec<f64>,
    pub(super) reached: u32,
    /// The cycle from which each flit is at the source (0: there; a
    /// cut-through relay: its landing there).
    pub(super) src: Vec<f64>,
    /// The source's injection VC.
    pub(super) inj: u32,
}

/// A channel's timing and buffer, as [`ChanState`] holds them.
#[derive(Debug, Clone, Copy)]
pub(super) struct ChanTiming {
    pub(super) period: f64,
    pub(super) latency: f64,
    pub(super) lat_cycles: u64,
    pub(super) buf: u32,
}

impl Train {
    /// The send cycles of the flits behind the header (row per channel,
    /// index k ≥ 1; index 0 the header's), as far as they are decided by
    /// the header's moves so far: a flit whose send waits for a header move
    /// not yet made (a channel the header has not reached, or a credit of
    /// it) is infinite, and every finite one is the cycle the flit-by-flit
    /// loop sends it in (the same steps as [`schedule`], row by row). `tm`:
    /// the channels' timing in path order.
    pub(super) fn partial_sends(
        &self,
        omega: u32,
        paced: bool,
        tm: &[ChanTiming],
        send: &mut Vec<f64>,
    ) {
        let h = self.chans.len();
        let w = omega as usize;
        let reached = self.reached as usize;
        send.clear();
        send.resize(h * w, f64::INFINITY);
        let mut land = vec![f64::INFINITY; h * w];
        let mut st: Vec<ChanState> = (0..h)
            .map(|j| ChanState {
                sent: 1,
                returned: 0,
                pending: 0,
                landed: 1,
                ready: self.ready0[j],
                first: 0.0,
                period: tm[j].period,
                latency: tm[j].latency,
                lat_cycles: tm[j].lat_cycles,
                buf: tm[j].buf,
            })
            .collect();
        for j in 0..reached {
            send[j * w] = self.hsend[j];
            land[j * w] = self.hland[j];
            // The channel's pacing after the header, as its send left it.
            let mut c = self.hsend[j];
            step_any(paced, &mut st[j], &mut c);
            debug_assert_eq!(c, self.hsend[j]);
        }
        for k in 1..w {
            for j in 0..reached {
                let a = if j == 0 {
                    self.src[k]
                } else {
                    land[(j - 1) * w + k]
                };
                let mut c = max(a, send[j * w + k - 1] + 1.0);
                let b = st[j].buf as usize;
                if k >= b {
                    let x = k - b;
                    let credit = if j + 1 < h {
                        send[(j + 1) * w + x] + 1.0
                    } else {
                        land[j * w + x] + 1.0
                    };
                    c = max(c, credit);
                }
                if c.is_infinite() {
                    continue;
                }
                let l = step_any(paced, &mut st[j], &mut c);
                send[j * w + k] = c;
                land[j * w + k] = l;
            }
        }
    }
}

fn step_any(paced: bool, s: &mut ChanState, c: &mut f64) -> f64 {
    if paced {
        step::<true>(s, c)
    } else {
        step::<false>(s, c)
    }
}
