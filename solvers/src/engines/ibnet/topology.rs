//! Topology description of an InfiniBand fabric (hosts, switches, full-duplex
//! links with a data rate and a latency each), the two generators the papers
//! need (Gran's two-switch test bed, catalogue §2; the 648-node 3-stage folded
//! Clos of 36-port switches, issue 9) and static forwarding tables.
//!
//! Routing: shortest paths with a destination-based choice among equal-cost
//! next hops (`dst mod candidates`, the d-mod-k rule). On a folded Clos this is
//! balanced up/down routing: a leaf sends traffic for host `d` up to spine
//! `d mod 18`, and every path is up*/down*. Whatever the topology, the routes
//! are checked for deadlock freedom by building the channel dependency graph
//! of the actual routes (Dally & Seitz) and refusing it if it has a cycle.

use std::fmt;

/// A node at one end of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeRef {
    Host(u32),
    Switch(u32),
}

/// One full-duplex link; both directions have the same rate and latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpec {
    pub a: NodeRef,
    pub b: NodeRef,
    /// Effective data rate in bit/s (after 8b/10b coding).
    pub rate_bps: f64,
    /// Propagation latency in seconds.
    pub latency: f64,
}

/// A forwarding-table entry that replaces the computed one: at `switch`,
/// packets for host `dst` leave towards the neighbour `next` (over the first
/// link joining the two, if there are parallel links).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RouteSpec {
    pub switch: u32,
    pub dst: u32,
    pub next: NodeRef,
}

/// A fabric as described: hosts `0..hosts`, switches `0..switches`, links,
/// and optional forwarding-table entries overriding the computed routes.
/// Ports of a node are numbered in the order its links appear.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub hosts: u32,
    pub switches: u32,
    pub links: Vec<LinkSpec>,
    pub routes: Vec<RouteSpec>,
}

/// Why a topology is refused; `field` names what to fix.
#[derive(Debug, Clone, PartialEq)]
pub struct TopologyError {
    pub field: &'static str,
    pub rule: String,
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

/// `H<n>` or `S<n>`, 1-based as in the descriptions.
pub fn node_name(n: NodeRef) -> String {
    match n {
        NodeRef::Host(h) => format!("H{}", h + 1),
        NodeRef::Switch(s) => format!("S{}", s + 1),
    }
}

fn err(field: &'static str, rule: impl Into<String>) -> TopologyError {
    TopologyError {
        field,
        rule: rule.into(),
    }
}

/// Gran & Reinemo's test bed (catalogue §2, erratum G-5): S1 (switch 0) holds
/// H1..H3 (hosts 0..2), S2 (switch 1) holds H4..H7 (hosts 3..6); one S1-S2 link.
pub fn gran_testbed(host_bps: f64, s1s2_bps: f64, latency: f64) -> Topology {
    let mut links = Vec::new();
    for h in 0..7 {
        let sw = if h < 3 { 0 } else { 1 };
        links.push(LinkSpec {
            a: NodeRef::Host(h),
            b: NodeRef::Switch(sw),
            rate_bps: host_bps,
            latency,
        });
    }
    links.push(LinkSpec {
        a: NodeRef::Switch(0),
        b: NodeRef::Switch(1),
        rate_bps: s1s2_bps,
        latency,
    });
    Topology {
        hosts: 7,
        switches: 2,
        links,
        routes: Vec::new(),
    }
}

/// 3-stage folded Clos of `k`-port switches: `k` leaves with `k/2` hosts
/// each and `k/2` spines (k = 36: 648 hosts, 36 leaves, 18 spines). Host `h`
/// sits on leaf `h / (k/2)`; switches `0..k` are leaves, `k..k+k/2` spines.
pub fn folded_clos(k: u32, rate_bps: f64, latency: f64) -> Topology {
    let half = k / 2;
    let mut links = Vec::new();
    for leaf in 0..k {
        for j in 0..half {
            links.push(LinkSpec {
                a: NodeRef::Host(leaf * half + j),
                b: NodeRef::Switch(leaf),
                rate_bps,
                latency,
            });
        }
    }
    for leaf in 0..k {
        for s in 0..half {
            links.push(LinkSpec {
                a: NodeRef::Switch(leaf),
                b: NodeRef::Switch(k + s),
                rate_bps,
                latency,
            });
        }
    }
    Topology {
        hosts: k * half,
        switches: k + half,
        links,
        routes: Vec::new(),
    }
}

/// One port (one direction of a link leaves from it).
#[derive(Debug, Clone, Copy)]
pub struct Port {
    pub node: NodeRef,
    /// Global index of the port at the other end.
    pub peer: u32,
    /// Index of this port among its node's ports.
    pub local: u32,
    /// Bytes per second.
    pub rate: f64,
    pub latency: f64,
}

/// The built fabric: flat port array, per-node port ranges and routing tables.
#[derive(Debug, Clone)]
pub struct Fabric {
    pub ports: Vec<Port>,
    /// Global port of each host (hosts have exactly one port).
    pub host_port: Vec<u32>,
    /// First global port of each switch; switch `s` owns `sw_first[s]..sw_first[s+1]`.
    pub sw_first: Vec<u32>,
    /// `route[s * hosts + d]`: global output port of switch `s` towards host `d`
    /// (`u32::MAX` where `d` is unreachable).
    pub route: Vec<u32>,
    pub hosts: u32,
}

impl Fabric {
    pub fn switch_ports(&self, s: u32) -> std::ops::Range<u32> {
        self.sw_first[s as usize]..self.sw_first[s as usize + 1]
    }

    pub fn radix(&self, s: u32) -> u32 {
        self.sw_first[s as usize + 1] - self.sw_first[s as usize]
    }

    /// Output port of switch `s` for destination `d`.
    #[inline]
    pub fn next_port(&self, s: u32, d: u32) -> u32 {
        self.route[(s * self.hosts + d) as usize]
    }

    /// Builds ports and routes and checks the routes for deadlock freedom.
    pub fn build(t: &Topology) -> Result<Fabric, TopologyError> {
        if t.hosts == 0 {
            return Err(err("hosts", "a fabric needs at least one host"));
        }
        if t.hosts > 100_000 || t.switches > 100_000 {
            return Err(err("hosts", "at most 100000 hosts and 100000 switches"));
        }
        let check = |n: NodeRef| match n {
            NodeRef::Host(h) if h >= t.hosts => Err(err(
                "links",
                format!("host {h} does not exist (hosts = {})", t.hosts),
            )),
            NodeRef::Switch(s) if s >= t.switches => Err(err(
                "links",
                format!("switch {s} does not exist (switches = {})", t.switches),
            )),
            _ => Ok(()),
        };
        for l in &t.links {
            check(l.a)?;
            check(l.b)?;
            if l.a == l.b {
                return Err(err("links", "a link joins a node to itself"));
            }
            if let (NodeRef::Host(_), NodeRef::Host(_)) = (l.a, l.b) {
                return Err(err("links", "host-to-host links are not supported"));
            }
            if !(l.rate_bps.is_finite() && l.rate_bps > 0.0) {
                return Err(err(
                    "links",
                    format!("rates must be > 0, got {}", l.rate_bps),
                ));
            }
            if !(l.latency.is_finite() && l.latency >= 0.0) {
                return Err(err(
                    "links",
                    format!("latency must be >= 0, got {}", l.latency),
                ));
            }
        }
        // Count ports per node, then lay them out: hosts first, then switches.
        let nodes = (t.hosts + t.switches) as usize;
        let idx = |n: NodeRef| match n {
            NodeRef::Host(h) => h as usize,
            NodeRef::Switch(s) => (t.hosts + s) as usize,
        };
        let mut deg = vec![0u32; nodes];
        for l in &t.links {
            deg[idx(l.a)] += 1;
            deg[idx(l.b)] += 1;
        }
        for (h, &d) in deg.iter().enumerate().take(t.hosts as usize) {
            if d != 1 {
                return Err(err(
                    "links",
                    format!("host {h} has {d} links; an HCA has exactly one port"),
                ));
            }
        }
        let mut first = vec![0u32; nodes + 1];
        for i in 0..nodes {
            first[i + 1] = first[i] + deg[i];
        }
        let mut fill = first.clone();
        let dummy = Port {
            node: NodeRef::Host(0),
            peer: 0,
            local: 0,
            rate: 0.0,
            latency: 0.0,
        };
        let mut ports = vec![dummy; first[nodes] as usize];
        for l in &t.links {
            let (ia, ib) = (idx(l.a), idx(l.b));
            let (pa, pb) = (fill[ia], fill[ib]);
            fill[ia] += 1;
            fill[ib] += 1;
            let rate = l.rate_bps / 8.0;
            ports[pa as usize] = Port {
                node: l.a,
                peer: pb,
                local: pa - first[ia],
                rate,
                latency: l.latency,
            };
            ports[pb as usize] = Port {
                node: l.b,
                peer: pa,
                local: pb - first[ib],
                rate,
                latency: l.latency,
            };
        }
        let host_port: Vec<u32> = (0..t.hosts as usize).map(|h| first[h]).collect();
        let sw_first: Vec<u32> = (0..=t.switches as usize)
            .map(|s| first[t.hosts as usize + s])
            .collect();
        let mut fabric = Fabric {
            ports,
            host_port,
            sw_first,
            route: vec![u32::MAX; (t.switches * t.hosts) as usize],
            hosts: t.hosts,
        };
        fabric.compute_routes(t.switches);
        fabric.apply_routes(t)?;
        let field = if t.routes.is_empty() {
            "links"
        } else {
            "routes"
        };
        fabric.check_routes_reach(field)?;
        fabric.check_deadlock_free(field)?;
        Ok(fabric)
    }

    /// BFS from every destination over switches; d-mod-k among equal-cost ports.
    fn compute_routes(&mut self, switches: u32) {
        let mut dist = vec![u32::MAX; switches as usize];
        let mut queue = Vec::with_capacity(switches as usize);
        let mut cand = Vec::new();
        for d in 0..self.hosts {
            dist.iter_mut().for_each(|x| *x = u32::MAX);
            queue.clear();
            let hp = self.ports[self.host_port[d as usize] as usize];
            if let NodeRef::Switch(s) = self.ports[hp.peer as usize].node {
                dist[s as usize] = 0;
                queue.push(s);
            }
            let mut head = 0;
            while head < queue.len() {
                let s = queue[head];
                head += 1;
                for p in self.switch_ports(s) {
                    if let NodeRef::Switch(n) =
                        self.ports[self.ports[p as usize].peer as usize].node
                    {
                        if dist[n as usize] == u32::MAX {
                            dist[n as usize] = dist[s as usize] + 1;
                            queue.push(n);
                        }
                    }
                }
            }
            for s in 0..switches {
                let ds = dist[s as usize];
                if ds == u32::MAX {
                    continue;
                }
                cand.clear();
                for p in self.switch_ports(s) {
                    let peer = self.ports[self.ports[p as usize].peer as usize].node;
                    let ok = match peer {
                        NodeRef::Host(h) => h == d,
                        NodeRef::Switch(n) => ds > 0 && dist[n as usize] == ds - 1,
                    };
                    if ok {
                        cand.push(p);
                    }
                }
                if !cand.is_empty() {
                    self.route[(s * self.hosts + d) as usize] = cand[d as usize % cand.len()];
                }
            }
        }
    }

    /// Replaces computed entries by the described ones.
    fn apply_routes(&mut self, t: &Topology) -> Result<(), TopologyError> {
        for r in &t.routes {
            if r.switch >= t.switches || r.dst >= t.hosts {
                return Err(err(
                    "routes",
                    format!(
                        "entry at S{} for H{}: no such switch or host",
                        r.switch + 1,
                        r.dst + 1
                    ),
                ));
            }
            let port = self
                .switch_ports(r.switch)
                .find(|&p| self.ports[self.ports[p as usize].peer as usize].node == r.next);
            let Some(port) = port else {
                return Err(err(
                    "routes",
                    format!(
                        "entry at S{} for H{}: {} is not a neighbour of S{}",
                        r.switch + 1,
                        r.dst + 1,
                        node_name(r.next),
                        r.switch + 1
                    ),
                ));
            };
            self.route[(r.switch * self.hosts + r.dst) as usize] = port;
        }
        Ok(())
    }

    /// Every host's packets for every other host reach it along the tables
    /// (no dead end, no wrong host, no loop).
    fn check_routes_reach(&self, field: &'static str) -> Result<(), TopologyError> {
        let limit = self.sw_first.len();
        for dst in 0..self.hosts {
            for src in 0..self.hosts {
                if src == dst {
                    continue;
                }
                let mut p = self.host_port[src as usize];
                let mut hops = 0;
                let why = loop {
                    match self.ports[self.ports[p as usize].peer as usize].node {
                        NodeRef::Host(h) if h == dst => break None,
                        NodeRef::Host(h) => break Some(format!("it ends at H{}", h + 1)),
                        NodeRef::Switch(s) => {
                            p = self.next_port(s, dst);
                            if p == u32::MAX {
                                break Some(format!("S{} has no entry for it", s + 1));
                            }
                        }
                    }
                    hops += 1;
                    if hops > limit {
                        break Some("it loops".to_string());
                    }
                };
                if let Some(why) = why {
                    return Err(err(
                        field,
                        format!(
                            "the route from H{} to H{} does not reach its destination: {why}",
                            src + 1,
                            dst + 1
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `S1->S2`: the channel leaving from global port `p`.
    fn channel_name(&self, p: u32) -> String {
        let port = self.ports[p as usize];
        format!(
            "{}->{}",
            node_name(port.node),
            node_name(self.ports[port.peer as usize].node)
        )
    }

    /// Output ports a packet from `src` to `dst` leaves through, the source
    /// HCA's port first (empty if the tables do not lead there).
    pub fn path(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut p = self.host_port[src as usize];
        let mut out = vec![p];
        for _ in 0..=self.sw_first.len() {
            match self.ports[self.ports[p as usize].peer as usize].node {
                NodeRef::Host(h) => return if h == dst { out } else { Vec::new() },
                NodeRef::Switch(s) => {
                    p = self.next_port(s, dst);
                    if p == u32::MAX {
                        return Vec::new();
                    }
                    out.push(p);
                }
            }
        }
        Vec::new()
    }

    /// Host `src` reaches host `dst` along the tables (at most `switches` hops).
    pub fn reaches(&self, src: u32, dst: u32) -> bool {
        let mut p = self.host_port[src as usize];
        for _ in 0..=self.sw_first.len() {
            match self.ports[self.ports[p as usize].peer as usize].node {
                NodeRef::Host(h) => return h == dst,
                NodeRef::Switch(s) => {
                    p = self.next_port(s, dst);
                    if p == u32::MAX {
                        return false;
                    }
                }
            }
        }
        false
    }

    /// Channel dependency graph of the routes actually used (every host to
    /// every destination); a cycle means the routes can deadlock.
    /// (With one routing table for all VLs, every VL has this same graph, so
    /// one check covers the per-VL condition.)
    fn check_deadlock_free(&self, field: &'static str) -> Result<(), TopologyError> {
        let n = self.ports.len();
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut seen = vec![u32::MAX; n];
        for d in 0..self.hosts {
            for src in 0..self.hosts {
                if src == d {
                    continue;
                }
                let mut c = self.host_port[src as usize];
                loop {
                    if seen[c as usize] == d {
                        break;
                    }
                    seen[c as usize] = d;
                    let NodeRef::Switch(s) = self.ports[self.ports[c as usize].peer as usize].node
                    else {
                        break;
                    };
                    let next = self.next_port(s, d);
                    if next == u32::MAX {
                        break;
                    }
                    edges.push((c, next));
                    c = next;
                }
            }
        }
        edges.sort_unstable();
        edges.dedup();
        // Iterative three-colour DFS over the adjacency built from `edges`.
        let mut start = vec![0usize; n + 1];
        for &(a, _) in &edges {
            start[a as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut colour = vec![0u8; n];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in 0..n {
            if colour[root] != 0 {
                continue;
            }
            colour[root] = 1;
            stack.push((root as u32, start[root]));
            while let Some(top) = stack.last_mut() {
                let (v, i) = *top;
                if i < start[v as usize + 1] {
                    top.1 += 1;
                    let w = edges[i].1 as usize;
                    match colour[w] {
                        0 => {
                            colour[w] = 1;
                            stack.push((w as u32, start[w]));
                        }
                        1 => {
                            // The cycle is the stack from w up to the top.
                            let from = stack.iter().position(|e| e.0 as usize == w).unwrap_or(0);
                            let cycle: Vec<String> = stack[from..]
                                .iter()
                                .map(|e| self.channel_name(e.0))
                                .collect();
                            return Err(err(
                                field,
                                format!(
                                    "the routes form a cycle of channel dependencies and can deadlock: {}",
                                    cycle.join(" -> ")
                                ),
                            ));
                        }
                        _ => {}
                    }
                } else {
                    colour[v as usize] = 2;
                    stack.pop();
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testbed_routes_cross_s1_s2() {
        let f = Fabric::build(&gran_testbed(16e9, 32e9, 0.0)).unwrap();
        for s in 0..3 {
            for d in 3..7 {
                assert!(f.reaches(s, d));
            }
        }
        assert_eq!(f.radix(0), 4);
        assert_eq!(f.radix(1), 5);
    }

    #[test]
    fn clos_routes_are_balanced_and_deadlock_free() {
        let f = Fabric::build(&folded_clos(36, 32e9, 0.0)).unwrap();
        assert_eq!(f.hosts, 648);
        assert!(f.reaches(0, 647) && f.reaches(647, 0) && f.reaches(5, 17));
        // Leaf 0 spreads the 630 remote destinations evenly over its 18 uplinks.
        let mut per_up = vec![0u32; 36];
        for d in 18..648 {
            per_up[f.ports[f.next_port(0, d) as usize].local as usize] += 1;
        }
        assert!(per_up[18..].iter().all(|&c| c == 35), "{per_up:?}");
    }

    #[test]
    fn a_ring_of_switches_is_refused_as_deadlock_prone() {
        let mut links = Vec::new();
        let n = 5;
        for s in 0..n {
            links.push(LinkSpec {
                a: NodeRef::Host(s),
                b: NodeRef::Switch(s),
                rate_bps: 1e9,
                latency: 0.0,
            });
            links.push(LinkSpec {
                a: NodeRef::Switch(s),
                b: NodeRef::Switch((s + 1) % n),
                rate_bps: 1e9,
                latency: 0.0,
            });
        }
        // A 5-ring with shortest paths: every two-hop route runs clockwise
        // for the destination two switches ahead, closing a dependency cycle.
        let t = Topology {
            hosts: n,
            switches: n,
            links,
            routes: Vec::new(),
        };
        let e = Fabric::build(&t);
        assert!(e.is_err(), "ring routes should be refused");
    }

    #[test]
    fn bad_descriptions_name_the_field() {
        let mut t = gran_testbed(16e9, 32e9, 0.0);
        t.links[0].rate_bps = 0.0;
        assert_eq!(Fabric::build(&t).unwrap_err().field, "links");
        let mut t = gran_testbed(16e9, 32e9, 0.0);
        t.links[0].b = NodeRef::Switch(9);
        assert!(Fabric::build(&t).unwrap_err().rule.contains("switch 9"));
    }
}
