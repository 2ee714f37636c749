//! The cycle loop for unit channels: every channel takes one cycle and
//! carries one flit per cycle, and no message stops at a relay (the torus).
//! Its results are those of the general loop in `sim.rs`, bit for bit (the
//! tests run both on the same scenarios); it only does less work per flit.
//!
//! What it does differently:
//! - No flit or credit is an event. A network input VC holds the flits of
//!   one message at a time (an output VC is allocated only when the buffer
//!   behind it is empty), so its buffer is a count (`occ`: flits sent into it
//!   and not yet out) and the message's next flit is number `sent`. A flit
//!   sent into the VC in cycle c lands in c + 1, and the credit of a flit
//!   sent out of it in cycle c reaches the upstream output VC in c + 1; at
//!   most one flit a cycle goes either way, so the cycles of the last flit in
//!   (`in_at`) and out (`out_at`) say which counted flits have landed and
//!   which freed slots the upstream side sees. A VC at its message's
//!   destination keeps no flit (ejection is immediate) and its credit comes
//!   back a cycle later than a forwarded flit's.
//! - Phase 2 is split: first every router with something to allocate (a
//!   header that landed, a queued message and an idle injection VC, or a
//!   waiting header and an output VC that has just become free), in router
//!   order, so the routing plug-in draws from the stream in the general
//!   loop's order; then every channel with an owned output VC, in channel
//!   order, moves at most one flit. An output VC becomes free only when the
//!   tail of its last message has left the buffer it feeds (its credits are
//!   then all back), and a blocked header's retry with nothing freed would
//!   return no VC and draw nothing (the [`super::Routing`] contract), so
//!   retrying only then changes nothing. A router's
//!   allocation reads only its own output VCs, which no other router's
//!   switch traversal changes within the cycle (what a traversal frees is
//!   seen from the next cycle on), so splitting the visit changes nothing.
//! - Flits reaching their destination are counted in the next cycle's
//!   phase 1 in the order they were sent, which is channel order: the order
//!   in which the general loop's timing wheel lands them, so batches close
//!   on the same flit (only tails are listed, each with the count of flits
//!   that arrived before it in its cycle).
//!
//! Its data layout (issue 35): an input VC's state sits at the index of the
//! output VC that feeds it, next to that output VC's owner, and the
//! injection VCs follow in the same array, so testing and making a move
//! reads one entry for each side whatever the source. A channel's flit
//! count is kept per message (added at the tail) and completed with the
//! flits already sent by its owned VCs when it is read (warm-up end, run
//! end); the injected-flit count is taken with the header and corrected by
//! the flits still at the sources where it is reported.

use super::batch::Batches;
use super::sim::{bits_in, generate, set_bit, Arrivals, Counters, Finish, Gen, Msg, Wiring, NONE};
use super::{Destinations, Routing, Scenario};
use crate::des::Stream;
use crate::{SolveError, TaskContext};
use std::collections::VecDeque;

/// A network input VC (see the module doc), kept at the index of the
/// output VC that feeds it, with that output VC's owner: the test of a
/// flit's move reads one of these for its VC and one for the VC it leaves.
/// 32 bytes, aligned so that none straddles two cache lines.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct Vc {
    /// Cycle in which the last flit was sent into it / out of it (at a
    /// destination: the cycle after the last flit was sent into it, when it
    /// was ejected).
    in_at: u64,
    out_at: u64,
    /// The message whose flits it holds and how many of them left; `sent`
    /// is `NONE` while the message ends here (its flits are ejected).
    msg: u32,
    sent: u32,
    /// Flits sent into it and not yet sent out (0 at a destination).
    occ: u32,
    /// The input VC that owns the output VC feeding it: its index here, or
    /// the number of VCs here plus an injection VC's; `NONE`: free;
    /// `NO_LINK`: the output VC's port has no link.
    owner: u32,
}

/// The owner of an output VC whose port has no link (never allocated).
const NO_LINK: u32 = NONE - 1;

/// An output channel: its owned VCs (bit v: VC v has an owner) and the VC
/// its round robin starts from.
#[derive(Debug, Clone, Copy)]
struct Ch {
    owned: u64,
    rr: u32,
}

/// Runs the network of unit channels (the caller checked: latency 1 and
/// period 1 on every channel, no relays); the state and statistics are the
/// general loop's.
// The channel words are walked by index: written in that form the 16x16
// bench case took about 3% less CPU than with `iter_mut` (paired runs).
#[allow(clippy::needless_range_loop)]
pub(super) fn run<R: Routing, D: Destinations>(
    sc: &Scenario,
    w: Wiring,
    routing: &R,
    dests: &D,
    ctx: &TaskContext,
) -> Result<Counters, SolveError> {
    let Wiring {
        n_r,
        n_src,
        base,
        down,
        up,
        v_n,
        inj_per,
    } = w;
    let buf = sc.buffer as u32;
    let omega = sc.msg_len;
    let n_ch = base[n_r];
    // VCs are numbered per router port (input and output alike); `up` and
    // `down` map an input VC to the output VC feeding it and back.
    let n_ivc = n_ch * v_n;
    let n_inj = n_r * inj_per;
    let mut ivc_router = vec![0u32; n_ivc];
    for r in 0..n_r {
        for x in &mut ivc_router[base[r] * v_n..base[r + 1] * v_n] {
            *x = r as u32;
        }
    }
    // Input VC state at the index of the output VC that feeds it (the
    // router of index o is then the upstream router), and for each index
    // the router the input VC is at and its bit in `hw` (below).
    let mut vc: Vec<Vc> = down
        .iter()
        .map(|&d| Vc {
            in_at: u64::MAX,
            out_at: u64::MAX,
            msg: NONE,
            sent: 0,
            occ: 0,
            owner: if d == NONE { NO_LINK } else { NONE },
        })
        .collect();
    // Then the injection VCs (`n_ivc + j`): `msg` is the message taken
    // (`NONE`: idle), `occ` its flits still at the source, `sent` those
    // gone; a flit there has always landed (`in_at` never moves).
    vc.extend((0..n_inj).map(|_| Vc {
        in_at: u64::MAX,
        out_at: u64::MAX,
        msg: NONE,
        sent: 0,
        occ: 0,
        owner: NO_LINK,
    }));
    let at_router: Vec<u32> = down
        .iter()
        .map(|&d| {
            if d == NONE {
                NONE
            } else {
                ivc_router[d as usize]
            }
        })
        .collect();
    let hw_pos: Vec<usize> = down
        .iter()
        .map(|&d| {
            if d == NONE {
                0
            } else {
                d as usize + ivc_router[d as usize] as usize * inj_per
            }
        })
        .collect();
    // Router of each channel.
    let mut ch_router = vec![0u32; n_ch];
    for r in 0..n_r {
        for x in &mut ch_router[base[r]..base[r + 1]] {
            *x = r as u32;
        }
    }
    drop(down);
    // Channel state.
    let mut chs = vec![Ch { owned: 0, rr: 0 }; n_ch];
    let mut ch_owned = vec![0u64; n_ch.div_ceil(64)];
    // Headers waiting for an output VC: a bit per input of each router in
    // allocation order (as in the general loop) and a count per router.
    let mut hw = vec![0u64; (n_ivc + n_inj).div_ceil(64)];
    let mut hdr_wait = vec![0u32; n_r];
    let mut queued = vec![0u32; n_r];
    // Routers to allocate at this cycle and next cycle.
    let words = n_r.div_ceil(64);
    let mut amark = vec![0u64; words];
    let mut amark_next = vec![0u64; words];
    // Sent this cycle, handled next cycle: headers that land short of their
    // destination (input VC), tails that reach it (input VC, message, the
    // flits that reached their destination this cycle up to it) and the
    // count of those flits.
    let mut hdr_land: Vec<u32> = Vec::new();
    let mut deliv: Vec<(u32, u32, u32)> = Vec::new();
    let mut ejected = 0u32;

    let queues = sc.injection.queues(n_r, n_inj);
    let n_groups = dests.groups().max(1);
    let n_slots = dests.relay_slots();
    // Built one by one: `vec![VecDeque::new(); n]` clones, which costs
    // about 80 instructions per queue (one queue per router and class).
    let mut queue: Vec<VecDeque<u32>> = (0..queues).map(|_| VecDeque::new()).collect();
    let mut msgs: Vec<Msg> = Vec::with_capacity(1024);
    let mut free_msgs: Vec<u32> = Vec::new();

    let mut rng = Stream::new(sc.seed, 0);
    let (mut gen, next_t) = Gen::new(sc, dests, n_src, &mut rng)?;
    let mut arrivals = Arrivals::new(next_t);
    let mut c = Counters::new(n_ch, n_slots);
    let mut batches = Batches::new(sc, n_src, n_groups, n_slots, n_ch);
    // Flits sent through each channel by messages whose tail has passed it
    // (the flits of its owned VCs' messages are added when counts are read:
    // see `channel_flits`).
    let mut ch_done = vec![0u64; n_ch];
    let mut ch_flits = vec![0u64; n_ch];
    let mut last_progress = 0u64;
    // Flits of the messages whose header has left its source, not yet
    // delivered (the ones still at the source are taken off where the
    // count is reported).
    let mut in_net = 0u64;
    let mut order_rot = 0usize;
    let n_in = (0..n_r)
        .map(|r| (base[r + 1] - base[r]) * v_n + inj_per)
        .max()
        .unwrap_or(1);

    // Channel visits in the last cycle and those that moved nothing.
    let (mut blocked_last, mut visits_last) = (0u32, 0u32);
    let mut next_min = arrivals.min();
    let mut cycle: u64 = 0;
    loop {
        if cycle & 0x3F == 0 {
            ctx.check_cancel()?;
        }
        // Phase 1: what was sent last cycle lands. Flits at their
        // destination leave, in the order they were sent.
        // (`deliv` holds the tails, each with the number of flits that
        // reached their destination last cycle up to it.)
        let mut counted = 0;
        for &(d, m, upto) in &deliv {
            batches.flits(u64::from(upto - counted), &mut c);
            counted = upto;
            // The output VC that fed the tail is free next cycle, when
            // its credit is back (marked whether or not a header waits
            // there now: one may land or be injected before then).
            let ur = ivc_router[d as usize] as usize;
            amark_next[ur >> 6] |= 1 << (ur & 63);
            free_msgs.push(m);
            if !batches.warm() && batches.ends_next() {
                // The warm-up ends with this message: it reads the counts.
                channel_flits(&mut ch_flits, &ch_done, &chs, &vc, v_n);
            }
            batches.message(&msgs[m as usize], cycle, &ch_flits, &mut c);
        }
        batches.flits(u64::from(ejected - counted), &mut c);
        in_net -= u64::from(ejected);
        ejected = 0;
        deliv.clear();
        // Headers short of their destination wait for an output VC.
        for &d in &hdr_land {
            let r = at_router[d as usize] as usize;
            hdr_wait[r] += 1;
            set_bit(&mut hw, hw_pos[d as usize]);
            amark[r >> 6] |= 1 << (r & 63);
        }
        hdr_land.clear();
        if c.latency.len() >= sc.run.batches as usize {
            break;
        }
        // Generation: messages generated before this cycle start.
        generate(
            cycle,
            &mut arrivals,
            &mut next_min,
            &mut gen,
            sc,
            dests,
            &mut rng,
            &mut c,
            &mut msgs,
            &mut free_msgs,
            &mut queue,
            |n| {
                queued[n] += 1;
                amark[n >> 6] |= 1 << (n & 63);
            },
        );
        if c.msgs_waiting > sc.backlog_limit {
            c.finish = Finish::Saturated(format!(
                "{} messages waiting at the sources at cycle {cycle} (limit {})",
                c.msgs_waiting, sc.backlog_limit
            ));
            break;
        }
        if cycle >= sc.max_cycles {
            c.finish = Finish::Saturated(format!(
                "cycle budget {} spent with {} of {} batches",
                sc.max_cycles,
                c.latency.len(),
                sc.run.batches
            ));
            break;
        }
        order_rot += 1;
        if order_rot == n_in {
            order_rot = 0;
        }
        // Phase 2a: allocation, router by router.
        for (wd, word) in amark.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let r = wd * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let r32 = r as u32;
                let ivc0 = base[r] * v_n;
                let net_in = (base[r + 1] - base[r]) * v_n;
                let n_in_r = net_in + inj_per;
                // Idle injection VCs take their next message.
                for v in 0..inj_per {
                    if queued[r] == 0 {
                        break;
                    }
                    let j = r * inj_per + v;
                    if vc[n_ivc + j].msg == NONE {
                        let q = sc.injection.queue_of(j, r);
                        if let Some(m) = queue[q].pop_front() {
                            let x = &mut vc[n_ivc + j];
                            x.msg = m;
                            x.occ = omega;
                            x.sent = 0;
                            queued[r] -= 1;
                            hdr_wait[r] += 1;
                            set_bit(&mut hw, base[r + 1] * v_n + j);
                        }
                    }
                }
                if hdr_wait[r] == 0 {
                    continue;
                }
                let start = if order_rot < n_in_r {
                    order_rot
                } else {
                    order_rot % n_in_r
                };
                let kb = ivc0 + r * inj_per;
                for (lo, hi) in [(kb + start, kb + n_in_r), (kb, kb + start)] {
                    bits_in!(hw, lo, hi, pos => {
                        let k = pos - kb;
                        let (i, m) = if k < net_in {
                            let i = up[ivc0 + k] as usize;
                            (i, vc[i].msg as usize)
                        } else {
                            let j = r * inj_per + (k - net_in);
                            (n_ivc + j, vc[n_ivc + j].msg as usize)
                        };
                        let chosen =
                            routing.route(r32, msgs[m].dst, msgs[m].tag, &mut rng, |p, v| {
                                let x = &vc[(base[r] + p as usize) * v_n + v as usize];
                                x.owner == NONE && x.occ == 0 && x.out_at != cycle
                            });
                        if let Some((p, v)) = chosen {
                            debug_assert!((p as usize) < base[r + 1] - base[r]);
                            let ch = base[r] + p as usize;
                            let o = ch * v_n + v as usize;
                            vc[o].owner = i as u32;
                            chs[ch].owned |= 1 << v;
                            set_bit(&mut ch_owned, ch);
                            hdr_wait[r] -= 1;
                            hw[pos >> 6] &= !(1u64 << (pos & 63));
                        }
                    });
                }
            }
        }
        // Phase 2b: switch traversal, one flit per output channel with an
        // owned VC, round robin over its VCs with a flit and a credit. The
        // VC is chosen first (reads only), then its flit moves. A move made
        // in this cycle changes no other VC's test in it (see `ready`), so
        // when more than 3/8 of the last cycle's visits moved nothing (the
        // outcome of a test is then hard to predict), the channels of each
        // word of `ch_owned` are first all tested, without a branch on the
        // outcome of a test, and the moves found are then made in channel
        // order. Below that share the branches cost less (paired runs of
        // the quick torus tasks, docs/models/torus.md).
        let mut moved = false;
        let branchless = blocked_last * 8 > visits_last * 3;
        let (mut visits, mut moves) = (0u32, 0u32);
        // One flit of output VC v of channel ch (in word w of `ch_owned`)
        // moves.
        macro_rules! make_move {
            ($w:expr, $ch:expr, $v:expr) => {{
                let (w, ch, v): (usize, usize, usize) = ($w, $ch, $v);
                let d = ch * v_n + v;
                let i = vc[d].owner as usize;
                moved = true;
                let iv = &mut vc[i];
                iv.occ -= 1;
                iv.out_at = cycle;
                let seq = iv.sent;
                iv.sent = seq + 1;
                let m = iv.msg;
                if seq + 1 == omega {
                    if i < n_ivc {
                        // The output VC that fed it is free next cycle.
                        let ur = ivc_router[i] as usize;
                        if hdr_wait[ur] > 0 {
                            amark_next[ur >> 6] |= 1 << (ur & 63);
                        }
                    } else {
                        iv.msg = NONE;
                        // The next queued message takes the VC.
                        let r = ch_router[ch] as usize;
                        if queued[r] > 0 {
                            amark_next[r >> 6] |= 1 << (r & 63);
                        }
                    }
                }
                let tail = seq + 1 == omega;
                let dv = &mut vc[d];
                if seq == 0 {
                    let msg = &mut msgs[m as usize];
                    if i >= n_ivc {
                        // The header leaves its source.
                        msg.inject = cycle;
                        msg.legs += 1;
                        c.msgs_waiting -= 1;
                        c.flits_injected += u64::from(omega);
                        in_net += u64::from(omega);
                    }
                    msg.hops += 1;
                    dv.msg = m;
                    if msg.dst == at_router[d] {
                        dv.sent = NONE;
                    } else {
                        dv.sent = 0;
                        hdr_land.push(d as u32);
                    }
                }
                if dv.sent == NONE {
                    dv.out_at = cycle + 1;
                    ejected += 1;
                    if tail {
                        deliv.push((d as u32, m, ejected));
                    }
                } else {
                    dv.occ += 1;
                    dv.in_at = cycle;
                }
                // The pointer moves past the VC served (see above for v_n).
                let chan = &mut chs[ch];
                chan.rr = v as u32 + 1;
                if tail {
                    // The channel's count takes the whole message now (the
                    // flits of owned VCs are added when counts are read).
                    ch_done[ch] += u64::from(omega);
                    vc[d].owner = NONE;
                    chan.owned &= !(1 << v);
                    if chan.owned == 0 {
                        ch_owned[w] &= !(1u64 << (ch & 63));
                    }
                }
            }};
        }
        if branchless {
            let mut found = [0u32; 64];
            for w in 0..ch_owned.len() {
                let mut word = ch_owned[w];
                let mut n = 0usize;
                visits += word.count_ones();
                while word != 0 {
                    let b = word.trailing_zeros();
                    word &= word - 1;
                    let ch = (w << 6) | b as usize;
                    let Ch {
                        owned: mask,
                        rr: start,
                    } = chs[ch];
                    let o0 = ch * v_n;
                    // Which owned VCs can move (an owned channel has one): the
                    // first two without a branch (the first again when it is
                    // the only one), then any others.
                    let first = mask.trailing_zeros();
                    let rest = mask & mask.wrapping_sub(1);
                    let second =
                        (rest | (mask & u64::from(rest == 0).wrapping_neg())).trailing_zeros();
                    let mut can = u64::from(ready(&vc, o0 + first as usize, cycle, buf)) << first;
                    can |= u64::from(ready(&vc, o0 + second as usize, cycle, buf)) << second;
                    let mut bits = rest & rest.wrapping_sub(1);
                    while bits != 0 {
                        let v = bits.trailing_zeros();
                        bits &= bits - 1;
                        can |= u64::from(ready(&vc, o0 + v as usize, cycle, buf)) << v;
                    }
                    // The first from the round-robin pointer on, then those
                    // below: rotated right by the pointer (at most 64; v_n or 64
                    // starts from VC 0), the VCs keep that order.
                    let v = (can.rotate_right(start).trailing_zeros() + start) & 63;
                    found[n & 63] = b | v << 6;
                    n += usize::from(can != 0);
                }
                moves += n as u32;
                for &x in &found[..n] {
                    make_move!(w, (w << 6) | (x & 63) as usize, (x >> 6) as usize);
                }
            }
        } else {
            for w in 0..ch_owned.len() {
                let mut word = ch_owned[w];
                visits += word.count_ones();
                while word != 0 {
                    let ch = (w << 6) | word.trailing_zeros() as usize;
                    word &= word - 1;
                    // Owned VCs from the round-robin pointer on, then those
                    // below (a pointer of v_n, or 64, starts from VC 0).
                    let Ch {
                        owned: mask,
                        rr: start,
                    } = chs[ch];
                    let o0 = ch * v_n;
                    let mut bits = mask.wrapping_shr(start).wrapping_shl(start);
                    let mut below = mask ^ bits;
                    let v = loop {
                        if bits == 0 {
                            if below == 0 {
                                break usize::MAX;
                            }
                            bits = below;
                            below = 0;
                        }
                        let v = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        if ready_br(&vc, o0 + v, cycle, buf) {
                            break v;
                        }
                    };
                    if v == usize::MAX {
                        continue;
                    }
                    moves += 1;
                    make_move!(w, ch, v);
                }
            }
        }
        blocked_last = visits - moves;
        visits_last = visits;
        std::mem::swap(&mut amark, &mut amark_next);
        if moved || in_net == 0 {
            last_progress = cycle;
        } else if cycle - last_progress > sc.stall_cycles {
            c.finish = Finish::Stalled {
                cycle,
                flits_in_network: in_net - at_sources(&vc[n_ivc..], omega),
            };
            break;
        }
        c.stepped_cycles += 1;
        // Nothing anywhere: jump as the general loop does.
        if c.msgs_generated == c.msgs_delivered {
            let due = next_min.floor() + 1.0;
            let target = if due >= sc.max_cycles as f64 {
                sc.max_cycles
            } else {
                due as u64
            };
            if target > cycle + 1 {
                let skip = target - 1 - cycle;
                order_rot = ((order_rot as u64 + skip % n_in as u64) % n_in as u64) as usize;
                cycle += skip;
                ctx.check_cancel()?;
            }
        }
        cycle += 1;
    }
    c.cycles = cycle + 1;
    channel_flits(&mut ch_flits, &ch_done, &chs, &vc, v_n);
    batches.finish(&ch_flits, &mut c);
    // Flits were counted as injected with their header.
    let at_src = at_sources(&vc[n_ivc..], omega);
    c.flits_injected -= at_src;
    c.flits_in_network = in_net - at_src;
    c.flits_at_sources = at_src;
    Ok(c)
}

/// Flits of the messages whose header has left the source that are still
/// there (a message taken whose header has not left has all `omega`).
fn at_sources(inj: &[Vc], omega: u32) -> u64 {
    inj.iter()
        .filter(|x| x.occ < omega)
        .map(|x| u64::from(x.occ))
        .sum()
}

/// Each channel's flits so far into `out`: the whole messages whose tail has
/// passed it (`done`) and the flits already sent of the message of each VC
/// it has allocated (all of them came from the owning input or injection
/// VC, whose `sent` counts them).
fn channel_flits(out: &mut [u64], done: &[u64], chs: &[Ch], vc: &[Vc], v_n: usize) {
    for (ch, (x, &d)) in out.iter_mut().zip(done).enumerate() {
        *x = d;
        let mut bits = chs[ch].owned;
        while bits != 0 {
            let v = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            *x += u64::from(vc[vc[ch * v_n + v].owner as usize].sent);
        }
    }
}

/// Whether the output VC `o` (owned) can move a flit in `cycle`: the VC it
/// feeds has a slot whose credit is back, and its owner (an input VC, or an
/// injection VC, whose flits have always landed) a flit that has landed.
/// A move made in `cycle` changes no answer in it: a flit sent out of a VC
/// leaves `occ` + [`out_at` == cycle] as it was (its slot is free from the
/// next cycle on), a flit sent into one leaves whether `occ` exceeds
/// [`in_at` == cycle] as it was (it lands in the next cycle), and the only
/// move into the VC that `o` feeds, or out of `o`'s owner, is `o`'s own.
/// No branch on the outcome: the owner is read whether or not there is a
/// slot.
#[inline(always)]
fn ready(vc: &[Vc], o: usize, cycle: u64, buf: u32) -> bool {
    let dv = &vc[o];
    let room = dv.occ + u32::from(dv.out_at == cycle) < buf;
    let iv = &vc[dv.owner as usize];
    room & (iv.occ != u32::from(iv.in_at == cycle))
}

/// [`ready`] with a branch: the owner is read only when there is a slot.
#[inline(always)]
fn ready_br(vc: &[Vc], o: usize, cycle: u64, buf: u32) -> bool {
    let dv = &vc[o];
    if dv.occ + u32::from(dv.out_at == cycle) >= buf {
        return false;
    }
    let iv = &vc[dv.owner as usize];
    iv.occ != u32::from(iv.in_at == cycle)
}
