//! Relays of the flit engine: the concentrators and dispatchers of a
//! multi-cluster system ([`super::super::Destinations::next_leg`]). A relay
//! is a router that takes a message off the network when the header of its
//! leg lands there, queues it in an infinite FIFO (its injection queue of
//! class 0) and re-injects it towards the next leg's target, one message at
//! a time. Cut-through: the message joins the FIFO when its header lands
//! and the relay sends only flits that have landed; store-and-forward: it
//! joins when its tail lands.
//!
//! Kept apart from the cycle loop (sim.rs), which calls [`land`] for a flit
//! landing at its leg's target or at a relay still absorbing its message,
//! [`enqueue`] through it, and [`flits_here`] when a relay's injection VC
//! may send.

use super::{Counters, Msg, NONE};
use crate::engines::flit::{Destinations, Leg};
use crate::SolveError;
use std::collections::VecDeque;

/// Which of message `msg`'s two relay slots router `r` is (0 or 1), or 2
/// if `r` is not absorbing its flits.
#[inline]
pub(super) fn slot_of(msg: &Msg, r: u32) -> usize {
    if msg.rel[0] == r {
        0
    } else if msg.rel[1] == r {
        1
    } else {
        2
    }
}

/// The relay state a landing may change.
pub(super) struct RelayState<'a> {
    pub queue: &'a mut [VecDeque<u32>],
    pub work: &'a mut [u64],
    pub queued: &'a mut [u32],
}

/// Flit `f` of message `m` lands at router `r`, which is the message's leg
/// target or (`slot` < 2) a relay absorbing its flits; the flit has left
/// the network (its credit is returned by the caller). Returns true when a
/// relay took the flit: absorbed into the relay (slot < 2), or a header
/// that starts the next leg here; false when the flit reached its final
/// node. `q` is the relay's injection queue at `r`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn land<D: Destinations>(
    m: usize,
    r: usize,
    slot: usize,
    f: u32,
    q: usize,
    cycle: u64,
    cut_through: bool,
    msgs: &mut [Msg],
    dests: &D,
    st: &mut RelayState,
    c: &mut Counters,
) -> Result<bool, SolveError> {
    let r32 = r as u32;
    // A relay absorbs the message's flits into its FIFO.
    if slot < 2 {
        c.flits_relayed += 1;
        let msg = &mut msgs[m];
        msg.got[slot] += 1;
        if f & 1 == 1 {
            msg.rel[slot] = NONE;
            msg.lazy_in[slot] = false;
            if !cut_through {
                enqueue(m as u32, r, q, cycle, msgs, dests, st, c);
            }
        }
        return Ok(true);
    }
    if f & 2 == 0 {
        return Ok(false);
    }
    let mut leg = Leg {
        dst: msgs[m].dst,
        tag: msgs[m].tag,
        class: 0,
        group: msgs[m].group,
        aux: msgs[m].aux,
    };
    if !dests.next_leg(r32, &mut leg) {
        return Ok(false);
    }
    c.flits_relayed += 1;
    let msg = &mut msgs[m];
    msg.dst = leg.dst;
    msg.tag = leg.tag;
    msg.aux = leg.aux;
    let tail = f & 1 == 1;
    if !tail {
        let Some(s) = msg.rel.iter().position(|&x| x == NONE) else {
            return Err(SolveError::Numerical(format!(
                "message spans more than two relays at once (at router {r})"
            )));
        };
        msg.rel[s] = r32;
        msg.got[s] = 1;
    }
    if cut_through || tail {
        enqueue(m as u32, r, q, cycle, msgs, dests, st, c);
    }
    Ok(true)
}

/// Message `m` joins FIFO `q` of relay `r` in `cycle` (its header or,
/// store-and-forward, its tail has landed); the longest FIFO of the relay's
/// statistics slot is updated if the destinations keep any.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn enqueue<D: Destinations>(
    m: u32,
    r: usize,
    q: usize,
    cycle: u64,
    msgs: &mut [Msg],
    dests: &D,
    st: &mut RelayState,
    c: &mut Counters,
) {
    msgs[m as usize].enq = cycle;
    let slot = (!c.relay_max_queue.is_empty()).then(|| dests.relay_slot(r as u32));
    st.queue[q].push_back(m);
    c.msgs_waiting += 1;
    st.work[r] += 1;
    st.queued[r] += 1;
    if let Some(s) = slot {
        let x = &mut c.relay_max_queue[s];
        *x = (*x).max(st.queue[q].len() as u64);
    }
}

/// Flits of message `m` that router `r` can send in `cycle` (after that
/// cycle's landings): those landed so far if `r` is one of its cut-through
/// relays, else all `omega`. The landings of a scheduled leg into a relay
/// are not events (sim.rs): they are read here from `arr`, the leg's
/// landing cycles at the relay (`arr[2m + slot]`, in flit order), and the
/// count kept in the message is brought up to `cycle`.
#[inline]
pub(super) fn flits_here(
    msgs: &mut [Msg],
    m: usize,
    r: u32,
    omega: u32,
    cycle: u64,
    arr: &[Vec<f64>],
) -> u32 {
    let msg = &mut msgs[m];
    let s = slot_of(msg, r);
    if s == 2 {
        return omega;
    }
    if msg.lazy_in[s] {
        let a = &arr[2 * m + s];
        let now = cycle as f64;
        let mut g = msg.got[s] as usize;
        while g < a.len() && a[g] <= now {
            g += 1;
        }
        msg.got[s] = g as u32;
    }
    msg.got[s]
}

/// The cycle in which the next flit of message `m` lands at relay `r`, if
/// those landings come from a scheduled leg (they are then not events, so
/// a relay waiting for that flit sets a wake-up for it), else `None` (the
/// landing is an event and marks the relay).
#[inline]
pub(super) fn next_landing(msgs: &[Msg], m: usize, r: u32, arr: &[Vec<f64>]) -> Option<u64> {
    let msg = &msgs[m];
    let s = slot_of(msg, r);
    if s == 2 || !msg.lazy_in[s] {
        return None;
    }
    arr[2 * m + s].get(msg.got[s] as usize).map(|&t| t as u64)
}
