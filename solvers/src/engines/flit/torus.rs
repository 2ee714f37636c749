//! The k-ary n-cube (bidirectional torus) topology and its routing functions:
//! dimension-order routing with a dateline, and Duato's fully adaptive
//! routing over a dimension-order escape sub-network (catalogue §5 M-8).
//!
//! Node ids are mixed-radix numbers, dimension 0 least significant. Port
//! 2d goes + in dimension d, port 2d + 1 goes −; a channel enters the
//! downstream router on the input port with the same number.

use super::{Routing, Topology};
use crate::des::Stream;

#[derive(Debug, Clone)]
pub struct KaryNcube {
    pub k: u32,
    pub n: u32,
    /// Coordinates of every node, `n` per node.
    coords: Vec<u16>,
    /// Downstream router of every channel, `2n` per router.
    next: Vec<u32>,
}

impl KaryNcube {
    /// k >= 2, n >= 1 (the caller bounds k^n).
    pub fn new(k: u32, n: u32) -> Self {
        let nodes = (k as usize).pow(n);
        let mut coords = Vec::with_capacity(nodes * n as usize);
        for id in 0..nodes {
            let mut x = id;
            for _ in 0..n {
                coords.push((x % k as usize) as u16);
                x /= k as usize;
            }
        }
        let mut next = Vec::with_capacity(nodes * 2 * n as usize);
        for id in 0..nodes as u32 {
            let mut stride = 1u32;
            for d in 0..n {
                let c = coords[(id * n + d) as usize] as u32;
                let plus = (c + 1) % k;
                let minus = (c + k - 1) % k;
                next.push(id - c * stride + plus * stride);
                next.push(id - c * stride + minus * stride);
                stride *= k;
            }
        }
        KaryNcube { k, n, coords, next }
    }

    pub fn nodes(&self) -> usize {
        self.coords.len() / self.n as usize
    }

    #[inline]
    pub fn coord(&self, node: u32, d: u32) -> u32 {
        self.coords[(node * self.n + d) as usize] as u32
    }

    /// Minimal hop distance (sum over dimensions of the shorter way round).
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        (0..self.n)
            .map(|d| {
                let off = (self.coord(b, d) + self.k - self.coord(a, d)) % self.k;
                off.min(self.k - off)
            })
            .sum()
    }

    /// The dimension-order hop from `cur` to `dst != cur`: (port, dateline
    /// class). Lowest dimension first; a tie (offset k/2) goes +. Class 0
    /// before the packet crosses the wrap-around link of the dimension, class
    /// 1 from then on: going + from x to d, class 0 iff x > d; going −, iff
    /// x < d. Neither class's channel-dependency chain closes around the ring.
    #[inline]
    pub fn dor_hop(&self, cur: u32, dst: u32) -> (u32, u32) {
        for d in 0..self.n {
            let (x, t) = (self.coord(cur, d), self.coord(dst, d));
            if x == t {
                continue;
            }
            let off = if t > x { t - x } else { t + self.k - x };
            return if 2 * off <= self.k {
                (2 * d, u32::from(x < t))
            } else {
                (2 * d + 1, u32::from(x > t))
            };
        }
        unreachable!("dor_hop called with cur == dst")
    }
}

impl Topology for KaryNcube {
    fn routers(&self) -> usize {
        self.nodes()
    }
    fn ports(&self) -> usize {
        2 * self.n as usize
    }
    #[inline]
    fn link(&self, router: u32, port: u32) -> Option<(u32, u32)> {
        Some((self.next[(router * 2 * self.n + port) as usize], port))
    }
}

/// Dimension-order routing with a dateline: the V VCs are split into two
/// classes, [0, V/2) before the wrap-around link and [V/2, V) after; the
/// header takes a free VC of its class uniformly at random.
#[derive(Debug, Clone)]
pub struct Dor<'a> {
    pub topo: &'a KaryNcube,
    pub vcs: u32,
}

impl Routing for Dor<'_> {
    #[inline]
    fn route<F: Fn(u32, u32) -> bool>(
        &self,
        cur: u32,
        dst: u32,
        _tag: u32,
        rng: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)> {
        let (port, class) = self.topo.dor_hop(cur, dst);
        let half = self.vcs / 2;
        let (lo, hi) = if class == 0 {
            (0, half)
        } else {
            (half, self.vcs)
        };
        let mut cand = [0u32; 32];
        let mut n = 0;
        for v in lo..hi {
            if free(port, v) {
                cand[n] = v;
                n += 1;
            }
        }
        match n {
            0 => None,
            1 => Some((port, cand[0])),
            _ => Some((port, cand[below(rng, n)])),
        }
    }
}

/// Duato's fully adaptive routing (catalogue M-8): VCs 2..V are adaptive
/// and may be taken on any minimal direction; VCs 0 and 1 are the escape
/// sub-network, dimension order with the dateline class as VC number. An
/// escape VC is used only when no adaptive VC on a minimal direction is free;
/// among free adaptive VCs the choice is uniform.
#[derive(Debug, Clone)]
pub struct Duato<'a> {
    pub topo: &'a KaryNcube,
    pub vcs: u32,
}

impl Routing for Duato<'_> {
    #[inline]
    fn route<F: Fn(u32, u32) -> bool>(
        &self,
        cur: u32,
        dst: u32,
        _tag: u32,
        rng: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)> {
        let t = self.topo;
        // Free adaptive VCs on minimal directions, in a fixed order (the
        // first CAP of them count). The first walk counts them and keeps
        // the first KEEP; a draw beyond those walks again to find it, which
        // costs less than filling a list of CAP on every attempt of a
        // blocked header. (`free` reads state only: checking a VC twice
        // changes nothing.)
        const CAP: usize = 128;
        const KEEP: usize = 16;
        let walk = |stop: usize, kept: &mut [(u32, u32); KEEP]| -> usize {
            let mut n = 0;
            for d in 0..t.n {
                let (x, y) = (t.coord(cur, d), t.coord(dst, d));
                if x == y {
                    continue;
                }
                let off = if y > x { y - x } else { y + t.k - x };
                let plus = 2 * off <= t.k;
                let minus = 2 * off >= t.k;
                for (ok, port) in [(plus, 2 * d), (minus, 2 * d + 1)] {
                    if ok {
                        for v in 2..self.vcs {
                            if n < CAP && free(port, v) {
                                if n < KEEP {
                                    kept[n] = (port, v);
                                } else if n == stop {
                                    kept[0] = (port, v);
                                    return n + 1;
                                }
                                n += 1;
                            }
                        }
                    }
                }
            }
            n
        };
        let mut kept = [(0u32, 0u32); KEEP];
        let n = walk(usize::MAX, &mut kept);
        if n == 1 {
            return Some(kept[0]);
        }
        if n > 1 {
            let i = below(rng, n);
            if i < KEEP {
                return Some(kept[i]);
            }
            walk(i, &mut kept);
            return Some(kept[0]);
        }
        let (port, class) = t.dor_hop(cur, dst);
        free(port, class).then_some((port, class))
    }
}

/// Uniform integer in [0, n) (multiply-shift; bias < n / 2^64).
#[inline]
pub fn below(rng: &mut Stream, n: usize) -> usize {
    ((rng.next_u64() as u128 * n as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_a_permutation_and_distances_match_brute_force() {
        for (k, n) in [(2, 2), (3, 2), (4, 2), (5, 1), (4, 3), (8, 2)] {
            let t = KaryNcube::new(k, n);
            let nodes = t.nodes();
            for p in 0..t.ports() as u32 {
                let mut seen = vec![false; nodes];
                for r in 0..nodes as u32 {
                    let (to, _) = t.link(r, p).unwrap();
                    assert!(!seen[to as usize]);
                    seen[to as usize] = true;
                    // Going + then − (or back) returns home.
                    let back = t.link(to, p ^ 1).unwrap().0;
                    assert_eq!(back, r);
                    assert_eq!(t.distance(r, to), u32::from(k > 1).min(1));
                }
            }
            // BFS distance equals the closed form.
            for s in 0..nodes as u32 {
                let mut dist = vec![u32::MAX; nodes];
                dist[s as usize] = 0;
                let mut q = std::collections::VecDeque::from([s]);
                while let Some(u) = q.pop_front() {
                    for p in 0..t.ports() as u32 {
                        let v = t.link(u, p).unwrap().0;
                        if dist[v as usize] == u32::MAX {
                            dist[v as usize] = dist[u as usize] + 1;
                            q.push_back(v);
                        }
                    }
                }
                for v in 0..nodes as u32 {
                    assert_eq!(t.distance(s, v), dist[v as usize], "k={k} n={n}");
                }
            }
        }
    }

    #[test]
    fn dor_walks_minimal_paths_and_dateline_classes_are_acyclic() {
        let t = KaryNcube::new(6, 2);
        let nodes = t.nodes() as u32;
        for s in 0..nodes {
            for d in 0..nodes {
                if s == d {
                    continue;
                }
                let (mut cur, mut hops) = (s, 0);
                let mut last: Option<(u32, u32)> = None;
                while cur != d {
                    let (p, c) = t.dor_hop(cur, d);
                    // Within one dimension the class never goes 1 -> 0.
                    if let Some((lp, lc)) = last {
                        if lp == p {
                            assert!(c >= lc);
                        }
                    }
                    last = Some((p, c));
                    cur = t.link(cur, p).unwrap().0;
                    hops += 1;
                    assert!(hops <= 6);
                }
                assert_eq!(hops, t.distance(s, d));
            }
        }
        // Class-0 channels that wrap (k-1 -> 0 going +) are never followed by
        // a class-0 hop in the same dimension: the ring's dependency cycle is cut.
        for s in 0..nodes {
            for d in 0..nodes {
                if t.coord(s, 0) == 5 && t.coord(d, 0) != 5 && t.coord(d, 0) < 3 {
                    let (p, c) = t.dor_hop(s, d);
                    if p == 0 {
                        assert_eq!(c, 0);
                        let nxt = t.link(s, p).unwrap().0;
                        if t.coord(nxt, 0) != t.coord(d, 0) {
                            assert_eq!(t.dor_hop(nxt, d), (0, 1));
                        }
                    }
                }
            }
        }
    }
}
