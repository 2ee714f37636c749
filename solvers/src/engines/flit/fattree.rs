//! Indirect networks for the flit engine (catalogue §6 SIM-5): the m-port
//! n-tree of Lin, Chung & Huang (catalogue W-21, M-6) with Up*/Down* routing
//! to the nearest common ancestor and d-mod-k ascent (M-7), and Wu ch.4–5's
//! multi-cluster system built from such trees: per cluster an ACN and an ECN
//! of its own (m_i, n_i), an ICN m_c-port n_c-tree whose leaves are the
//! clusters, and one concentrator (C) and one dispatcher (D) per cluster as
//! relays of the engine (infinite FIFO message buffers, cut-through or
//! store-and-forward).
//!
//! Tree labels (k = m/2). Node x has digits p_0 … p_{n−1}, p_0 ∈ [0, m)
//! most significant, the rest in [0, k): x = p_0 k^{n−1} + … + p_{n−1}.
//! Level 0 holds the k^{n−1} roots, levels 1 … n−1 hold 2k^{n−1} switches
//! each (level n−1 = leaves). A switch label w_0 … w_{n−2} has w_0 ∈ [0, k)
//! at level 0 and ∈ [0, m) below, the other digits in [0, k). Switches
//! ⟨w, l⟩ and ⟨w′, l + 1⟩ are linked iff w and w′ agree outside digit l;
//! the link joins down port w′_l of the upper switch and up port k + w_l of
//! the lower. Leaf ⟨p_0 … p_{n−2}⟩ holds node x on down port p_{n−1}.
//! Ports 0..k (0..m at a root) go down, k..m up.
//!
//! Multi-cluster router layout: nodes 0..N (cluster i's nodes contiguous),
//! then per cluster its ACN switches and ECN switches, then C_i, D_i per
//! cluster, then the ICN switches. A node has port 0 into its ACN leaf and
//! port 1 into its ECN leaf (two injection queues: class 0 ACN, class 1
//! ECN). An ECN switch has port m into C_i (C_i's input port = that
//! switch's index in the cluster); D_i has one output port per ECN switch of
//! its cluster (entering the switch's port m). C_i is the ICN's leaf node i
//! on the way up, D_i on the way down.
//!
//! Paths (catalogue §3.2): an intra-cluster message goes up its ACN to the
//! nearest common ancestor and down (2j channels for distance class j). An
//! inter-cluster message ascends p channels of the source ECN (node → leaf →
//! … → a switch X at level n − p chosen by the destination's digits), enters
//! C_i over an attach channel, crosses the ICN from C_i to D_v (2q channels,
//! q the clusters' NCA height), leaves D_v over an attach channel into a
//! switch Y at level n_v − u that is an ancestor of the destination, and
//! descends u channels. p ~ P_p of the source tree (4.6); ch.4: u = p;
//! ch.5: u ~ P_u of the destination tree (W-35). The two attach channels
//! take the engine's minimum of one cycle (and D's carries one flit per
//! t_cs^I, so D is busy ω·t_cs^I per message). The message's final node
//! and u ride in [`Leg::aux`] (24 + 8 bits).
//!
//! [`CdQueue::Output`] replaces the ICN tree by an output-queued fabric:
//! C_i has one output port per other cluster v, leading into a private
//! *lane* of 2q(i, v) channels (2q − 1 one-port lane routers, then D_v's
//! input port i), each channel at the ICN's latency and flit time. No two
//! messages of different (i, v) pairs share a channel, and D_v absorbs every
//! flit that lands (a relay), so C's server is never held by what happens
//! downstream and messages reach D_v's FIFO without contending for an input
//! link: C and D are the single-server queues of the model
//! (docs/models/multicluster.md, "The `output` variant"). D's channels into
//! its ECN feed buffers of a whole message ([`Topology::buffer_of`]), so
//! D's service of a message it holds takes ω·t_cs^I and is not held by a
//! slower ECN after it (the model's W_d server; the message then waits in
//! that buffer, at the ECN's entry switch, for the ECN).

use super::torus::below;
use super::traffic::Clustered;
use super::{Destinations, Leg, LinkTiming, Routing, Topology};
use crate::des::Stream;

/// The shape of an m-port n-tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    pub m: u32,
    pub n: u32,
    k: u32,
    /// k^i, i = 0..=n.
    pw: Vec<u32>,
    /// log2 k when k is a power of two (every tree of Wu ch.4-5), else
    /// `u32::MAX`: routing then shifts and masks instead of dividing.
    lg: u32,
}

impl Tree {
    /// m even >= 2, n >= 1, 2(m/2)^n < 2^24.
    pub fn new(m: u32, n: u32) -> Result<Tree, String> {
        if m < 2 || !m.is_multiple_of(2) {
            return Err(format!("m: an even port count >= 2, got {m}"));
        }
        if n == 0 {
            return Err("n: at least one level".into());
        }
        let k = m / 2;
        let mut pw = vec![1u32];
        for _ in 0..n {
            let x = *pw.last().unwrap() as u64 * k as u64;
            if 2 * x >= 1 << 24 {
                return Err(format!("n: 2({k})^{n} nodes is more than 2^24"));
            }
            pw.push(x as u32);
        }
        let lg = if k.is_power_of_two() {
            k.trailing_zeros()
        } else {
            u32::MAX
        };
        Ok(Tree { m, n, k, pw, lg })
    }
    /// N = 2(m/2)^n (Wu 4.2).
    pub fn nodes(&self) -> u32 {
        2 * self.pw[self.n as usize]
    }
    /// N_sw = (2n − 1)(m/2)^{n−1} (Wu 4.3).
    pub fn switches(&self) -> u32 {
        (2 * self.n - 1) * self.pw[self.n as usize - 1]
    }
    fn level_start(&self, l: u32) -> u32 {
        if l == 0 {
            0
        } else {
            self.pw[self.n as usize - 1] * (2 * l - 1)
        }
    }
    /// x / k^e.
    #[inline]
    fn div_pw(&self, x: u32, e: u32) -> u32 {
        if self.lg != u32::MAX {
            x >> (self.lg * e)
        } else {
            x / self.pw[e as usize]
        }
    }
    /// v mod k.
    #[inline]
    fn mod_k(&self, v: u32) -> u32 {
        if self.lg != u32::MAX {
            v & (self.k - 1)
        } else {
            v % self.k
        }
    }
    /// (level, label) of switch index `s`.
    #[inline]
    pub fn switch(&self, s: u32) -> (u32, u32) {
        let top = self.pw[self.n as usize - 1];
        if s < top {
            (0, s)
        } else {
            // (s − top) / (2·top), top = k^{n−1}.
            let l = 1 + (self.div_pw(s - top, self.n - 1) >> 1);
            (l, s - self.level_start(l))
        }
    }
    pub fn index(&self, level: u32, label: u32) -> u32 {
        self.level_start(level) + label
    }
    /// Digit t of node x.
    #[inline]
    pub fn node_digit(&self, x: u32, t: u32) -> u32 {
        let v = self.div_pw(x, self.n - 1 - t);
        if t == 0 {
            v
        } else {
            self.mod_k(v)
        }
    }
    #[inline]
    fn lab_digit(&self, lab: u32, t: u32) -> u32 {
        let v = self.div_pw(lab, self.n - 2 - t);
        if t == 0 {
            v
        } else {
            self.mod_k(v)
        }
    }
    #[inline]
    fn with_digit(&self, lab: u32, t: u32, d: u32) -> u32 {
        let w = self.pw[(self.n - 2 - t) as usize];
        lab - self.lab_digit(lab, t) * w + d * w
    }
    /// The leaf switch index of node x and x's port on it.
    pub fn leaf_of(&self, x: u32) -> (u32, u32) {
        if self.n == 1 {
            (0, x)
        } else {
            (self.index(self.n - 1, x / self.k), x % self.k)
        }
    }
    /// Where down port (or up port) `p` of switch `s` leads: `Ok(node)` with
    /// the node's side implied, or `Err((switch, its port))`; `None` if unused.
    pub fn neighbour(&self, s: u32, p: u32) -> Option<Result<u32, (u32, u32)>> {
        let (l, lab) = self.switch(s);
        let down = if l == 0 { self.m } else { self.k };
        if p < down {
            if l == self.n - 1 {
                Some(Ok(if self.n == 1 { p } else { lab * self.k + p }))
            } else {
                let w2 = self.with_digit(lab, l, p);
                Some(Err((
                    self.index(l + 1, w2),
                    self.lab_digit(lab, l) + self.k,
                )))
            }
        } else if p < self.m && l > 0 {
            let w2 = self.with_digit(lab, l - 1, p - self.k);
            Some(Err((self.index(l - 1, w2), self.lab_digit(lab, l - 1))))
        } else {
            None
        }
    }
    /// Is switch `s` an ancestor of node x?
    #[inline]
    pub fn is_ancestor(&self, s: u32, x: u32) -> bool {
        let (l, lab) = self.switch(s);
        if self.lg != u32::MAX && l > 0 {
            // k = 2^lg: a label's digits 0..l (the top one wider) are its
            // bits from lg·(n − 1 − l) up, a node's from lg·(n − l) up, so
            // the digits agree when those shifted values do.
            lab >> (self.lg * (self.n - 1 - l)) == x >> (self.lg * (self.n - l))
        } else {
            self.is_ancestor_by_digits(l, lab, x)
        }
    }
    #[inline]
    fn is_ancestor_by_digits(&self, l: u32, lab: u32, x: u32) -> bool {
        (0..l).all(|t| self.lab_digit(lab, t) == self.node_digit(x, t))
    }
    /// Up*/Down* port at switch `s` towards node x: down when `s` is an
    /// ancestor, else up to the port given by x's digit (d-mod-k).
    #[inline]
    pub fn port_to_node(&self, s: u32, x: u32) -> u32 {
        let (l, _) = self.switch(s);
        if self.is_ancestor(s, x) {
            self.node_digit(x, l)
        } else {
            self.k + self.node_digit(x, l)
        }
    }
    /// Up port at switch `s` towards its ancestor switch `target` (a higher
    /// level, label agreeing on the digits above `s`'s level).
    #[inline]
    pub fn port_up_to(&self, s: u32, target: u32) -> u32 {
        let (l, _) = self.switch(s);
        let (_, tl) = self.switch(target);
        self.k + self.lab_digit(tl, l - 1)
    }
    /// Height of the nearest common ancestor of nodes a != b (1..=n): the
    /// path between them has 2·height channels.
    pub fn height(&self, a: u32, b: u32) -> u32 {
        let c = (0..self.n)
            .take_while(|&t| self.node_digit(a, t) == self.node_digit(b, t))
            .count() as u32;
        self.n - c
    }
    /// |class j|, j = 1..=n: other nodes at height j (index 0 unused).
    pub fn class_sizes(&self) -> Vec<u32> {
        let mut b = vec![1u32];
        for j in 1..=self.n {
            b.push(if j == self.n {
                self.nodes()
            } else {
                self.pw[j as usize]
            });
        }
        let mut out = vec![0];
        for j in 1..=self.n as usize {
            out.push(b[j] - b[j - 1]);
        }
        out
    }
    /// Block sizes b_1 … b_n of the nested classes ([`Clustered`]).
    pub fn blocks(&self) -> Vec<u32> {
        (1..=self.n)
            .map(|j| {
                if j == self.n {
                    self.nodes()
                } else {
                    self.pw[j as usize]
                }
            })
            .collect()
    }
    /// Switch at `level` that is an ancestor of node x, its free digits
    /// taken from `spread` (d-mod-k on the other end's id).
    pub fn ancestor(&self, x: u32, level: u32, spread: u32) -> u32 {
        let mut lab = 0u32;
        for t in 0..self.n.saturating_sub(1) {
            let d = if t < level {
                self.node_digit(x, t)
            } else {
                (spread / self.pw[(self.n - 2 - t) as usize]) % self.k
            };
            let w = self.pw[(self.n - 2 - t) as usize];
            lab += d * w;
        }
        self.index(level, lab)
    }
}

/// Timing of one network in cycles: (node↔switch, switch↔switch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetTiming {
    pub t_cn: f64,
    pub t_cs: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSpec {
    pub tree: Tree,
    pub acn: NetTiming,
    /// Source-rate multiplier (Wu ch.5: 1/(1 − ϕ_i)).
    pub rate_scale: f64,
}

/// Destination law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Locality {
    /// Ch.4 (identical clusters): inter-cluster with probability ξ (uniform
    /// over the other clusters' nodes), else distance class by (4.7).
    Ch4 { xi: f64, eta_in: f64 },
    /// Ch.5: uniform over all other nodes.
    Uniform,
}

/// How the concentrators, the ICN and the dispatchers are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CdQueue {
    /// C_i and D_i are FIFO relays on the ICN m_c-port n_c-tree (wormhole,
    /// one VC): a message blocked in the ICN holds C's server.
    #[default]
    Fifo,
    /// An output-queued fabric: a private lane of 2q channels per ordered
    /// cluster pair (a virtual output queue per destination dispatcher that
    /// never blocks), D_v absorbing from all lanes at once.
    Output,
}

/// Most clusters with [`CdQueue::Output`] (a lane per ordered pair).
pub const MAX_OUTPUT_CLUSTERS: u32 = 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub clusters: Vec<ClusterSpec>,
    pub icn: Tree,
    pub ecn: NetTiming,
    /// ICN switch↔switch and C/D↔switch time (cycles).
    pub icn_cs: f64,
    pub locality: Locality,
    pub cut_through: bool,
    pub cd_queue: CdQueue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Node,
    Acn,
    Ecn,
    Conc,
    Disp,
    Icn,
    /// One router of an `output` lane (one input, one output port).
    Lane,
}

/// The multi-cluster network: topology, routing, link timing and
/// destinations in one plug-in.
#[derive(Debug, Clone)]
pub struct MultiCluster {
    spec: Spec,
    /// Per router: kind, cluster (ICN: 0), local index (node id within the
    /// cluster, switch index within its tree).
    kind: Vec<Kind>,
    clu: Vec<u32>,
    loc: Vec<u32>,
    node_base: Vec<u32>,
    acn_base: Vec<u32>,
    ecn_base: Vec<u32>,
    cd_base: u32,
    /// First ICN switch (fifo) or lane router (output).
    icn_base: u32,
    /// Output: first lane router of the ordered pair (i, v) at i·C + v.
    lane_base: Vec<u32>,
    n_nodes: u32,
    n_routers: u32,
    max_ports: usize,
    /// Cumulative P_j per cluster (j = 1..=n at index j − 1).
    p_cum: Vec<Vec<f64>>,
    ch4: Option<Clustered>,
    xi_uniform: bool,
}

impl MultiCluster {
    pub fn new(spec: Spec) -> Result<Self, String> {
        let c = spec.clusters.len() as u32;
        if c < 2 {
            return Err("clusters: at least 2".into());
        }
        if spec.icn.nodes() != c {
            return Err(format!("icn: {} leaves for {c} clusters", spec.icn.nodes()));
        }
        for (i, cs) in spec.clusters.iter().enumerate() {
            for (name, t) in [("t_cn", cs.acn.t_cn), ("t_cs", cs.acn.t_cs)] {
                if !(t.is_finite() && t >= 1.0) {
                    return Err(format!(
                        "clusters[{i}].acn.{name}: {t} cycles, must be >= 1"
                    ));
                }
            }
            if !(cs.rate_scale.is_finite() && cs.rate_scale > 0.0) {
                return Err(format!("clusters[{i}].rate_scale: must be > 0"));
            }
        }
        for (name, t) in [
            ("ecn.t_cn", spec.ecn.t_cn),
            ("ecn.t_cs", spec.ecn.t_cs),
            ("icn.t_cs", spec.icn_cs),
        ] {
            if !(t.is_finite() && t >= 1.0) {
                return Err(format!("{name}: {t} cycles, must be >= 1"));
            }
        }
        let mut kind = Vec::new();
        let mut clu = Vec::new();
        let mut loc = Vec::new();
        let mut node_base = Vec::new();
        let mut n_nodes = 0u32;
        for (i, cs) in spec.clusters.iter().enumerate() {
            node_base.push(n_nodes);
            for x in 0..cs.tree.nodes() {
                kind.push(Kind::Node);
                clu.push(i as u32);
                loc.push(x);
            }
            n_nodes += cs.tree.nodes();
        }
        if n_nodes >= 1 << 24 {
            return Err("clusters: more than 2^24 nodes".into());
        }
        let (mut acn_base, mut ecn_base) = (Vec::new(), Vec::new());
        for (i, cs) in spec.clusters.iter().enumerate() {
            for (k, bases) in [(Kind::Acn, &mut acn_base), (Kind::Ecn, &mut ecn_base)] {
                bases.push(kind.len() as u32);
                for s in 0..cs.tree.switches() {
                    kind.push(k);
                    clu.push(i as u32);
                    loc.push(s);
                }
            }
        }
        let cd_base = kind.len() as u32;
        for i in 0..c {
            for k in [Kind::Conc, Kind::Disp] {
                kind.push(k);
                clu.push(i);
                loc.push(0);
            }
        }
        let icn_base = kind.len() as u32;
        let mut lane_base = Vec::new();
        match spec.cd_queue {
            CdQueue::Fifo => {
                for s in 0..spec.icn.switches() {
                    kind.push(Kind::Icn);
                    clu.push(0);
                    loc.push(s);
                }
            }
            CdQueue::Output => {
                if c > MAX_OUTPUT_CLUSTERS {
                    return Err(format!(
                        "cd_queue: output builds a lane per ordered cluster pair: at most {MAX_OUTPUT_CLUSTERS} clusters, got {c}"
                    ));
                }
                lane_base = vec![u32::MAX; (c * c) as usize];
                for i in 0..c {
                    for v in (0..c).filter(|&v| v != i) {
                        lane_base[(i * c + v) as usize] = kind.len() as u32;
                        for pos in 0..2 * spec.icn.height(i, v) - 1 {
                            kind.push(Kind::Lane);
                            clu.push(i);
                            loc.push(v | pos << 24);
                        }
                    }
                }
            }
        }
        let max_ports = spec
            .clusters
            .iter()
            .map(|cs| (cs.tree.m as usize + 1).max(cs.tree.switches() as usize))
            .chain([spec.icn.m as usize, 2, c as usize])
            .max()
            .unwrap();
        let p_cum = spec
            .clusters
            .iter()
            .map(|cs| {
                let sizes = cs.tree.class_sizes();
                let tot = (cs.tree.nodes() - 1) as f64;
                let mut acc = 0.0;
                let mut v: Vec<f64> = sizes[1..]
                    .iter()
                    .map(|&s| {
                        acc += s as f64 / tot;
                        acc
                    })
                    .collect();
                *v.last_mut().unwrap() = 1.0;
                v
            })
            .collect();
        let ch4 = match spec.locality {
            Locality::Ch4 { xi, eta_in } => {
                let t0 = &spec.clusters[0].tree;
                if spec.clusters.iter().any(|cs| cs.tree != *t0) {
                    return Err("locality: ch.4 needs identical clusters".into());
                }
                Some(Clustered::with_locality(n_nodes, &t0.blocks(), eta_in, xi)?)
            }
            Locality::Uniform => None,
        };
        let n_routers = kind.len() as u32;
        Ok(MultiCluster {
            xi_uniform: ch4.is_none(),
            spec,
            kind,
            clu,
            loc,
            node_base,
            acn_base,
            ecn_base,
            cd_base,
            icn_base,
            lane_base,
            n_nodes,
            n_routers,
            max_ports,
            p_cum,
            ch4,
        })
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }
    pub fn clusters(&self) -> usize {
        self.spec.clusters.len()
    }
    pub fn conc(&self, i: u32) -> u32 {
        self.cd_base + 2 * i
    }
    pub fn disp(&self, i: u32) -> u32 {
        self.cd_base + 2 * i + 1
    }
    pub fn cluster_of(&self, node: u32) -> u32 {
        self.clu[node as usize]
    }
    /// Counts: (nodes, ACN + ECN switches of every cluster, ICN switches, C/D).
    pub fn counts(&self) -> (u32, u32, u32, u32) {
        let sw = self.icn_base - self.cd_base;
        (
            self.n_nodes,
            self.cd_base - self.n_nodes,
            self.n_routers - self.icn_base,
            sw,
        )
    }
    fn tree(&self, i: u32) -> &Tree {
        &self.spec.clusters[i as usize].tree
    }
    /// Distance class of a destination sample `u` in cluster i's tree.
    fn sample_height(&self, i: u32, u: f64) -> u32 {
        let cum = &self.p_cum[i as usize];
        cum.iter().position(|&p| u < p).unwrap_or(cum.len() - 1) as u32 + 1
    }
    /// The first leg of an inter-cluster message and its packed payload.
    fn inter_leg(&self, src: u32, dst: u32, rng: &mut Stream) -> Leg {
        let i = self.clu[src as usize];
        let v = self.clu[dst as usize];
        let p = self.sample_height(i, rng.uniform());
        let u = if self.xi_uniform {
            self.sample_height(v, rng.uniform())
        } else {
            p
        };
        let t = self.tree(i);
        let x = t.ancestor(self.loc[src as usize], t.n - p, dst);
        Leg {
            dst: self.conc(i),
            class: 1,
            tag: x,
            group: 2 * i + 1,
            aux: dst | u << 24,
        }
    }
}

impl Topology for MultiCluster {
    fn routers(&self) -> usize {
        self.n_routers as usize
    }
    fn ports(&self) -> usize {
        self.max_ports
    }
    fn ports_of(&self, r: u32) -> usize {
        let i = self.clu[r as usize];
        match self.kind[r as usize] {
            Kind::Node => 2,
            Kind::Acn => self.tree(i).m as usize,
            Kind::Ecn => self.tree(i).m as usize + 1,
            Kind::Conc | Kind::Disp => match self.spec.cd_queue {
                CdQueue::Fifo => self.tree(i).switches() as usize,
                // One output (C) or input (D) port per cluster as well.
                CdQueue::Output => (self.tree(i).switches() as usize).max(self.clusters()),
            },
            Kind::Icn => self.spec.icn.m as usize,
            Kind::Lane => 1,
        }
    }
    fn link(&self, r: u32, p: u32) -> Option<(u32, u32)> {
        let i = self.clu[r as usize];
        let l = self.loc[r as usize];
        match self.kind[r as usize] {
            Kind::Node => {
                let (leaf, port) = self.tree(i).leaf_of(l);
                let base = if p == 0 {
                    self.acn_base[i as usize]
                } else {
                    self.ecn_base[i as usize]
                };
                Some((base + leaf, port))
            }
            k @ (Kind::Acn | Kind::Ecn) => {
                let t = self.tree(i);
                if k == Kind::Ecn && p == t.m {
                    return Some((self.conc(i), l));
                }
                let (base, side) = if k == Kind::Acn {
                    (self.acn_base[i as usize], 0)
                } else {
                    (self.ecn_base[i as usize], 1)
                };
                match t.neighbour(l, p)? {
                    Ok(x) => Some((self.node_base[i as usize] + x, side)),
                    Err((s, q)) => Some((base + s, q)),
                }
            }
            Kind::Conc => match self.spec.cd_queue {
                CdQueue::Fifo => {
                    if p != 0 {
                        return None;
                    }
                    let (leaf, port) = self.spec.icn.leaf_of(i);
                    Some((self.icn_base + leaf, port))
                }
                CdQueue::Output => {
                    let c = self.clusters() as u32;
                    (p < c && p != i).then(|| (self.lane_base[(i * c + p) as usize], 0))
                }
            },
            Kind::Disp => (p < self.tree(i).switches())
                .then(|| (self.ecn_base[i as usize] + p, self.tree(i).m)),
            Kind::Lane => {
                if p != 0 {
                    return None;
                }
                let (v, pos) = (l & 0xFF_FFFF, l >> 24);
                if pos + 1 < 2 * self.spec.icn.height(i, v) - 1 {
                    Some((r + 1, 0))
                } else {
                    Some((self.disp(v), i))
                }
            }
            Kind::Icn => match self.spec.icn.neighbour(l, p)? {
                Ok(v) => Some((self.disp(v), 0)),
                Err((s, q)) => Some((self.icn_base + s, q)),
            },
        }
    }
    /// [`CdQueue::Output`]: a dispatcher's channels into its ECN feed
    /// buffers of a whole message, so D sends a message in ω·t_cs^I
    /// whatever the slower ECN does after it (the model's W_d server);
    /// every other buffer (and every buffer of `fifo`) is `buffer`.
    fn buffer_of(&self, r: u32, _: u32, buffer: usize, msg_len: u32) -> usize {
        if self.spec.cd_queue == CdQueue::Output && self.kind[r as usize] == Kind::Disp {
            buffer.max(msg_len as usize)
        } else {
            buffer
        }
    }
}

impl Routing for MultiCluster {
    #[inline]
    fn route<F: Fn(u32, u32) -> bool>(
        &self,
        cur: u32,
        dst: u32,
        tag: u32,
        _: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)> {
        let r = cur as usize;
        let i = self.clu[r];
        let l = self.loc[r];
        let port = match self.kind[r] {
            Kind::Node => u32::from(dst >= self.n_nodes),
            Kind::Acn => self.tree(i).port_to_node(l, self.loc[dst as usize]),
            Kind::Ecn => {
                let t = self.tree(i);
                if dst < self.n_nodes {
                    // Descending from D's entry switch.
                    t.port_to_node(l, self.loc[dst as usize])
                } else {
                    let x = tag;
                    if x == l {
                        t.m
                    } else {
                        t.port_up_to(l, x)
                    }
                }
            }
            Kind::Conc => match self.spec.cd_queue {
                CdQueue::Fifo => 0,
                CdQueue::Output => self.clu[dst as usize],
            },
            Kind::Lane => 0,
            Kind::Disp => tag,
            Kind::Icn => self.spec.icn.port_to_node(l, self.clu[dst as usize]),
        };
        free(port, 0).then_some((port, 0))
    }

    /// The port is a function of the router, the leg's target and tag.
    fn fixed_path(&self) -> bool {
        true
    }
}

impl LinkTiming for MultiCluster {
    fn latency(&self, r: u32, p: u32) -> f64 {
        let (lat, _) = self.channel_timing(r, p);
        lat
    }
    fn period(&self, r: u32, p: u32) -> f64 {
        let (_, per) = self.channel_timing(r, p);
        per
    }
    fn timing(&self, r: u32, p: u32) -> (f64, f64) {
        self.channel_timing(r, p)
    }
}

impl MultiCluster {
    /// (latency, period) of channel (r, p) in cycles.
    fn channel_timing(&self, r: u32, p: u32) -> (f64, f64) {
        let i = self.clu[r as usize];
        let both = |t: f64| (t, t);
        match self.kind[r as usize] {
            Kind::Node => {
                if p == 0 {
                    both(self.spec.clusters[i as usize].acn.t_cn)
                } else {
                    both(self.spec.ecn.t_cn)
                }
            }
            k @ (Kind::Acn | Kind::Ecn) => {
                let t = self.tree(i);
                if k == Kind::Ecn && p == t.m {
                    return (1.0, 1.0);
                }
                let net = if k == Kind::Acn {
                    self.spec.clusters[i as usize].acn
                } else {
                    self.spec.ecn
                };
                let (l, _) = t.switch(self.loc[r as usize]);
                if l == t.n - 1 && (p < t.k || (l == 0 && p < t.m)) {
                    both(net.t_cn)
                } else {
                    both(net.t_cs)
                }
            }
            Kind::Conc | Kind::Icn | Kind::Lane => both(self.spec.icn_cs),
            Kind::Disp => (1.0, self.spec.icn_cs),
        }
    }
}

impl Destinations for MultiCluster {
    fn nodes(&self) -> u32 {
        self.n_nodes
    }
    fn pick(&self, src: u32, rng: &mut Stream) -> u32 {
        Destinations::route(self, src, rng).dst
    }
    #[inline]
    fn route(&self, src: u32, rng: &mut Stream) -> Leg {
        let dst = match &self.ch4 {
            Some(c) => c.pick(src, rng),
            None => {
                let x = below(rng, self.n_nodes as usize - 1) as u32;
                if x >= src {
                    x + 1
                } else {
                    x
                }
            }
        };
        let i = self.clu[src as usize];
        if self.clu[dst as usize] == i {
            Leg {
                dst,
                class: 0,
                tag: 0,
                group: 2 * i,
                aux: 0,
            }
        } else {
            self.inter_leg(src, dst, rng)
        }
    }
    fn next_leg(&self, at: u32, leg: &mut Leg) -> bool {
        let k = self.kind[at as usize];
        let fin = leg.aux & 0xFF_FFFF;
        let u = leg.aux >> 24;
        match k {
            Kind::Conc => {
                leg.dst = self.disp(self.clu[fin as usize]);
                leg.tag = 0;
                true
            }
            Kind::Disp => {
                let v = self.clu[fin as usize];
                let t = self.tree(v);
                let xl = self.loc[fin as usize];
                // Entry switch at level n − u above the destination, its
                // free digits the destination's own lower digits.
                let y = t.ancestor(xl, t.n - u, xl);
                leg.dst = fin;
                leg.tag = y;
                true
            }
            _ => false,
        }
    }
    fn cut_through(&self) -> bool {
        self.spec.cut_through
    }
    fn rate_scale(&self, node: u32) -> f64 {
        self.spec.clusters[self.clu[node as usize] as usize].rate_scale
    }
    fn groups(&self) -> usize {
        2 * self.clusters()
    }
    fn relay_slots(&self) -> usize {
        2 * self.clusters()
    }
    fn relay_slot(&self, r: u32) -> usize {
        (r - self.cd_base) as usize
    }
}

#[cfg(test)]
#[path = "fattree_tests.rs"]
mod tests;
