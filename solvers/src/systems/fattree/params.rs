//! Parameters of `multicluster.model` (and `multicluster.sim`): the names of
//! issue 22's table, parsed with `deny_unknown_fields` and validated once into
//! a typed [`System`] (catalogue §3.2, §3.3; Wu eqs 4.1–4.3, 4.15, 4.17, 5.1,
//! 5.2, 5.6).
//!
//! Two shapes:
//! - **ch.4** (homogeneous): `m`, `n`, `C`, one `acn`, `xi`, `eta_in`.
//!   Defaults are Fig. 4.5(a) with L_f = 512: 16 clusters of 4-port 3-trees,
//!   ACN = Net.1, ECN = ICN = Net.2 (Table 4.2), ω = 64, φ = (0.07, 0.07),
//!   λ_s2 = 0, ξ = 0.5, η_in = 0.6.
//! - **ch.5** (heterogeneous): `clusters: [{m, n, user_level, acn}]` and
//!   `m_c`; ξ_i follows from the sizes (5.6); `ecn` and `icn` default to
//!   Table 5.3's Net.2 and Net.1 of Table 5.2; every cluster needs its `acn`.
//!
//! A simulator that adds its own run-length keys parses through
//! [`parse_with_extras`], which removes those keys before the strict parse.

use crate::params::{count, non_negative, positive, probability, within};
use crate::traffic::mmpp::Mmpp2;
use crate::SolveError;
use serde::Deserialize;

/// Largest node count either solver accepts (whole system).
pub const MAX_NODES: u64 = 1 << 20;
/// Most clusters of a ch.5 system.
pub const MAX_CLUSTERS: usize = 64;
/// Most (source, destination, a, r, u) path classes of a ch.5 system
/// (Fig 5.5's scenario (4) has 32·32·5·5·4 = 102,400).
pub const MAX_PATH_CLASSES: u64 = 2_000_000;

/// One network's raw timings (Tables 4.2 / 5.2). All three are required
/// wherever a network is given; a missing one is a [`SolveError`] naming it.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct NetParams {
    /// Bytes per time unit (γ = 1/bandwidth is the time per byte).
    pub bandwidth: Option<f64>,
    /// θ_n: network latency (time units).
    pub network_latency: Option<f64>,
    /// θ_s: switch latency (time units).
    pub switch_latency: Option<f64>,
}

impl NetParams {
    pub const fn new(bandwidth: f64, network_latency: f64, switch_latency: f64) -> Self {
        NetParams {
            bandwidth: Some(bandwidth),
            network_latency: Some(network_latency),
            switch_latency: Some(switch_latency),
        }
    }
}

/// Table 4.2.
pub const CH4_NET1: NetParams = NetParams::new(800.0, 0.02, 0.01);
pub const CH4_NET2: NetParams = NetParams::new(600.0, 0.1, 0.05);
/// Table 5.2 (Net.1 … Net.5).
pub const CH5_NETS: [NetParams; 5] = [
    NetParams::new(1000.0, 0.01, 0.005),
    NetParams::new(800.0, 0.01, 0.01),
    NetParams::new(600.0, 0.04, 0.06),
    NetParams::new(400.0, 0.1, 0.05),
    NetParams::new(200.0, 0.2, 0.1),
];

/// One cluster of a ch.5 system (W-39: 0-based, `user_level` = ϕ_i).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterParams {
    pub m: f64,
    pub n: f64,
    #[serde(default)]
    pub user_level: f64,
    pub acn: Option<NetParams>,
}

macro_rules! variant_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $s)] $v,)+
        }
        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)+ }
            }
        }
    };
}

variant_enum!(
    /// The source law: the MMPP or a Poisson process of the same mean.
    SourceLaw { #[default] Mmpp = "mmpp", Poisson = "poisson" }
);
variant_enum!(
    /// Channel count in the load denominators (W-23): 4n (printed) or 2n.
    Channels { #[default] Printed = "printed", Derived = "derived" }
);
variant_enum!(
    /// C/D arrivals (W-29, W-38): the cluster's outbound traffic (derived)
    /// or one ICN channel's process MMPP_cI (printed).
    Cd { #[default] Derived = "derived", Printed = "printed" }
);
variant_enum!(
    /// ECN numerator: (Nξ + Nξ) as printed (4.11), or each message once.
    EcnNum { #[default] Printed = "printed", Single = "single" }
);
variant_enum!(
    /// Stage-to-network map of inter-cluster paths: W-27/W-36, or the ICN
    /// range one stage earlier (physical).
    StageMap { #[default] W27 = "w27", Physical = "physical" }
);
variant_enum!(
    /// ch.5 inflow term (W-34) and destination weights (W-37).
    Reading { #[default] Derived = "derived", Printed = "printed" }
);
variant_enum!(
    /// ch.5 dispatcher arrivals: the traffic entering the cluster (inflow),
    /// the concentrator's process (same), or by destination weights (dest).
    Dispatcher { #[default] Inflow = "inflow", Same = "same", Dest = "dest" }
);
variant_enum!(
    /// ch.5 ECN process on the destination leg: the i→v path's (path) or the
    /// destination cluster's own v→i process (own).
    EcnLeg2 { #[default] Path = "path", Own = "own" }
);

/// The raw parameters: exactly the names of issue 22's table.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub m: Option<f64>,
    pub n: Option<f64>,
    #[serde(rename = "C")]
    pub c: Option<f64>,
    pub clusters: Option<Vec<ClusterParams>>,
    pub m_c: Option<f64>,
    pub acn: Option<NetParams>,
    pub ecn: Option<NetParams>,
    pub icn: Option<NetParams>,
    pub omega: Option<f64>,
    #[serde(rename = "Lf")]
    pub lf: Option<f64>,
    pub lambda1: Option<f64>,
    pub lambda2: Option<f64>,
    pub phi1: Option<f64>,
    pub phi2: Option<f64>,
    #[serde(default)]
    pub source: SourceLaw,
    pub xi: Option<f64>,
    pub eta_in: Option<f64>,
    #[serde(default)]
    pub channels: Channels,
    #[serde(default)]
    pub cd: Cd,
    #[serde(default)]
    pub ecn_num: EcnNum,
    #[serde(default)]
    pub stage_map: StageMap,
    pub inflow: Option<Reading>,
    pub weights: Option<Reading>,
    pub dispatcher: Option<Dispatcher>,
    pub ecn_leg2: Option<EcnLeg2>,
}

/// Per-flit link times of one network (4.15), (4.17).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkTimes {
    /// t_cn = 0.5 θ_n + L_f/B: node↔switch.
    pub t_cn: f64,
    /// t_cs = θ_s + L_f/B: switch↔switch.
    pub t_cs: f64,
}

/// A validated network: its raw values and derived link times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    pub bandwidth: f64,
    pub network_latency: f64,
    pub switch_latency: f64,
    pub times: LinkTimes,
}

/// An m-port n-tree's size (4.2), (4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tree {
    pub m: u32,
    pub n: u32,
}

impl Tree {
    /// N = 2 (m/2)^n (4.2).
    pub fn nodes(&self) -> u64 {
        2 * (self.m as u64 / 2).pow(self.n)
    }
    /// N_sw = (2n − 1)(m/2)^(n−1) (4.3).
    pub fn switches(&self) -> u64 {
        (2 * self.n as u64 - 1) * (self.m as u64 / 2).pow(self.n - 1)
    }
    /// P_j, j = 1..=n (4.6 / 5.4 with m_i per W-33): probability that a
    /// uniformly chosen other leaf is 2j channels away. Index 0 unused.
    pub fn distance_probs(&self) -> Vec<f64> {
        self.class_sizes()
            .iter()
            .map(|&c| c as f64 / (self.nodes() - 1) as f64)
            .collect()
    }
    /// Number of leaves 2j channels away from a leaf, j = 0..=n (index 0 = 0):
    /// (m/2 − 1)(m/2)^(j−1) for j < n and (m − 1)(m/2)^(n−1) for j = n.
    pub fn class_sizes(&self) -> Vec<u64> {
        let h = self.m as u64 / 2;
        (0..=self.n)
            .map(|j| match j {
                0 => 0,
                j if j == self.n => (self.m as u64 - 1) * h.pow(j - 1),
                j => (h - 1) * h.pow(j - 1),
            })
            .collect()
    }
}

/// One validated cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// The ACN and ECN tree of this cluster (m_i, n_i).
    pub tree: Tree,
    /// N_i (4.2 / 5.1).
    pub nodes: u64,
    /// Switches per tree (4.3).
    pub switches: u64,
    /// ϕ_i in [0, 1) (ch.4: 0).
    pub user_level: f64,
    pub acn: Network,
}

/// Which chapter's system, with the chapter's own inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Locality {
    /// ch.4: inter-cluster probability ξ = η_out and intra-cluster locality η_in (4.7).
    Ch4 { xi: f64, eta_in: f64 },
    /// ch.5: uniform destinations over all nodes; ξ_i from (5.6).
    Ch5,
}

/// Every model variant (issue 22 "Choice points").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Variants {
    pub channels: Channels,
    pub cd: Cd,
    pub ecn_num: EcnNum,
    pub stage_map: StageMap,
    pub inflow: Reading,
    pub weights: Reading,
    pub dispatcher: Dispatcher,
    pub ecn_leg2: EcnLeg2,
}

/// A validated multi-cluster system: what the model and the simulator take.
#[derive(Debug, Clone, PartialEq)]
pub struct System {
    pub locality: Locality,
    /// All C clusters (ch.4: C identical ones).
    pub clusters: Vec<Cluster>,
    /// The ICN m_c-port n_c-tree whose leaves are the clusters (4.1 / 5.2).
    pub icn_tree: Tree,
    pub ecn: Network,
    pub icn: Network,
    /// ω, message length in flits.
    pub omega: u32,
    /// L_f, flit length in bytes.
    pub lf: f64,
    /// The source MMPP as given (before ϕ scaling).
    pub source: Mmpp2,
    pub source_law: SourceLaw,
    pub variants: Variants,
}

impl System {
    /// C.
    pub fn num_clusters(&self) -> usize {
        self.clusters.len()
    }
    /// Σ N_i.
    pub fn total_nodes(&self) -> u64 {
        self.clusters.iter().map(|c| c.nodes).sum()
    }
    /// ξ_i: the probability that a message of cluster i leaves its cluster
    /// (ch.4: ξ; ch.5: (5.6)).
    pub fn xi(&self, i: usize) -> f64 {
        match self.locality {
            Locality::Ch4 { xi, .. } => xi,
            Locality::Ch5 => {
                let tot = self.total_nodes() as f64;
                (tot - self.clusters[i].nodes as f64) / (tot - 1.0)
            }
        }
    }
    /// The source law actually used by a node of cluster i: the MMPP (or its
    /// Poisson mean) with rates scaled by 1/(1 − ϕ_i) (M-20).
    pub fn node_source(&self, i: usize) -> Mmpp2 {
        let s = 1.0 / (1.0 - self.clusters[i].user_level);
        let p = match self.source_law {
            SourceLaw::Mmpp => self.source,
            SourceLaw::Poisson => Mmpp2::poisson(self.source.mean_rate()),
        };
        Mmpp2 {
            lambda1: p.lambda1 * s,
            lambda2: p.lambda2 * s,
            ..p
        }
    }
    /// Total ICN switches (4.3 for the m_c-port n_c-tree).
    pub fn icn_switches(&self) -> u64 {
        self.icn_tree.switches()
    }
}

/// `check` under the field name `name()`, which is formatted only when the
/// check fails: the checks are pure, so the second call gives the error
/// the first would have given under that name (a ch.5 point has a few
/// dozen names, and formatting them all was 1 % of the model's time).
fn named<T>(
    name: impl FnOnce() -> String,
    check: impl Fn(&str) -> Result<T, SolveError>,
) -> Result<T, SolveError> {
    check("").or_else(|_| check(&name()))
}

fn network(field: &str, p: Option<NetParams>, lf: f64) -> Result<Network, SolveError> {
    let p = p.ok_or_else(|| {
        SolveError::param(
            field,
            "missing network timings {bandwidth, network_latency, switch_latency}",
        )
    })?;
    let get = |name: &str, v: Option<f64>| {
        v.ok_or_else(|| SolveError::param(&format!("{field}.{name}"), "missing network timing"))
    };
    let bandwidth = get("bandwidth", p.bandwidth)?;
    let bandwidth = named(|| format!("{field}.bandwidth"), |f| positive(f, bandwidth))?;
    let network_latency = get("network_latency", p.network_latency)?;
    let network_latency = named(
        || format!("{field}.network_latency"),
        |f| non_negative(f, network_latency),
    )?;
    let switch_latency = get("switch_latency", p.switch_latency)?;
    let switch_latency = named(
        || format!("{field}.switch_latency"),
        |f| non_negative(f, switch_latency),
    )?;
    let times = LinkTimes {
        t_cn: 0.5 * network_latency + lf / bandwidth,
        t_cs: switch_latency + lf / bandwidth,
    };
    if !(times.t_cn.is_finite() && times.t_cs.is_finite() && times.t_cs > 0.0 && times.t_cn > 0.0) {
        return Err(SolveError::param(
            &format!("{field}.bandwidth"),
            format!("the flit times 0.5θ_n + L_f/B and θ_s + L_f/B must be finite and > 0, got {} and {}", times.t_cn, times.t_cs),
        ));
    }
    Ok(Network {
        bandwidth,
        network_latency,
        switch_latency,
        times,
    })
}

fn tree(field_m: &str, m: f64, field_n: &str, n: f64) -> Result<Tree, SolveError> {
    let mi = count(field_m, m, 4)?;
    if mi % 2 != 0 || mi > 1024 {
        return Err(SolveError::param(
            field_m,
            format!("an m-port n-tree needs an even port count 4 <= m <= 1024, got {mi}"),
        ));
    }
    let ni = count(field_n, n, 1)?;
    let t = Tree {
        m: mi as u32,
        n: ni.min(64) as u32,
    };
    if ni > 64 || (mi as f64 / 2.0).powi(ni as i32) * 2.0 > MAX_NODES as f64 {
        return Err(SolveError::param(
            field_n,
            format!("2(m/2)^n is more than the {MAX_NODES} nodes the solvers accept"),
        ));
    }
    Ok(t)
}

/// The ICN tree of C leaves with m_c ports: C must equal 2(m_c/2)^(n_c) with
/// n_c >= 1 (4.1 / 5.2), otherwise P_q (4.6 with N → C) would not sum to 1.
fn icn_tree(field: &str, c: usize, m_c: u32) -> Result<Tree, SolveError> {
    let h = (m_c / 2) as usize;
    let mut size = 2 * h;
    let mut n_c = 1u32;
    while size < c {
        size *= h;
        n_c += 1;
    }
    if size != c {
        return Err(SolveError::param(
            field,
            format!(
                "{c} clusters is not an m-port n-tree size 2(m/2)^n_c (n_c >= 1) for the ICN's m = {m_c}: the ICN's leaves are the clusters (4.1, 5.2)"
            ),
        ));
    }
    Ok(Tree { m: m_c, n: n_c })
}

fn refuse(present: bool, field: &str, rule: &str) -> Result<(), SolveError> {
    if present {
        return Err(SolveError::param(field, rule));
    }
    Ok(())
}

/// Accepted phase rates phi1, phi2 of the model (per time unit).
const PHASE_RANGE: (f64, f64) = (1e-12, 1e12);
/// Largest source rate lambda1, lambda2 the model accepts (messages/node/time unit).
const MAX_SOURCE_RATE: f64 = 1e12;

/// The source ranges of `multicluster.model` (issue 32): past them its
/// MMPP fits and its G iteration lose every digit ("fit: characteristics
/// are not finite", "G did not converge"); the thesis's rates are
/// 1e-5..1e-2 and its phase rates 0.07 per time unit. The simulator takes
/// any rate (far past saturation it answers `saturated` without a run).
pub fn check_model_ranges(sys: &System) -> Result<(), SolveError> {
    let s = &sys.source;
    let rate = (0.0, MAX_SOURCE_RATE);
    within(
        "lambda1",
        s.lambda1,
        rate,
        " messages/node/time unit for the model",
    )?;
    within(
        "lambda2",
        s.lambda2,
        rate,
        " messages/node/time unit for the model",
    )?;
    within("phi1", s.phi1, PHASE_RANGE, " per time unit for the model")?;
    within("phi2", s.phi2, PHASE_RANGE, " per time unit for the model")?;
    Ok(())
}

/// Validates raw parameters into a [`System`].
pub fn validate(p: &Params) -> Result<System, SolveError> {
    let lf = positive("Lf", p.lf.unwrap_or(512.0))?;
    let omega = count("omega", p.omega.unwrap_or(64.0), 1)?;
    if omega > 1_000_000 {
        return Err(SolveError::param("omega", "must be <= 1e6 flits"));
    }
    let lambda1 = p
        .lambda1
        .ok_or_else(|| SolveError::param("lambda1", "required (the x-axis of every figure)"))?;
    let lambda1 = non_negative("lambda1", lambda1)?;
    let lambda2 = non_negative("lambda2", p.lambda2.unwrap_or(0.0))?;
    let phi1 = positive("phi1", p.phi1.unwrap_or(0.07))?;
    let phi2 = positive("phi2", p.phi2.unwrap_or(0.07))?;
    let source = Mmpp2::new(phi1, phi2, lambda1, lambda2)?;
    let ecn_num = p.ecn_num;
    let (locality, clusters, icn_tree, ecn, icn) = if let Some(cl) = &p.clusters {
        for (f, present) in [
            ("m", p.m.is_some()),
            ("n", p.n.is_some()),
            ("C", p.c.is_some()),
        ] {
            refuse(
                present,
                f,
                "give either m, n, C (ch.4, identical clusters) or clusters (ch.5), not both",
            )?;
        }
        refuse(
            p.acn.is_some(),
            "acn",
            "with clusters (ch.5) each cluster has its own acn",
        )?;
        refuse(
            p.xi.is_some(),
            "xi",
            "ch.5 derives ξ_i from the cluster sizes (5.6); xi is a ch.4 parameter",
        )?;
        refuse(
            p.eta_in.is_some(),
            "eta_in",
            "ch.5 destinations are uniform; eta_in is a ch.4 parameter",
        )?;
        if cl.len() > MAX_CLUSTERS {
            return Err(SolveError::param(
                "clusters",
                format!(
                    "at most {MAX_CLUSTERS} clusters (the model solves C(C − 1) path families), got {}",
                    cl.len()
                ),
            ));
        }
        if cl.len() < 2 {
            return Err(SolveError::param(
                "clusters",
                format!("need at least 2 clusters, got {}", cl.len()),
            ));
        }
        let mut out = Vec::with_capacity(cl.len());
        for (i, c) in cl.iter().enumerate() {
            let t = tree("", c.m, "", c.n).or_else(|_| {
                tree(
                    &format!("clusters[{i}].m"),
                    c.m,
                    &format!("clusters[{i}].n"),
                    c.n,
                )
            })?;
            let phi = match probability("", c.user_level) {
                Ok(phi) if phi < 1.0 => phi,
                _ => {
                    let f = format!("clusters[{i}].user_level");
                    probability(&f, c.user_level)?;
                    return Err(SolveError::param(&f, "ϕ_i must lie in [0, 1), got 1"));
                }
            };
            out.push(Cluster {
                tree: t,
                nodes: t.nodes(),
                switches: t.switches(),
                user_level: phi,
                acn: named(|| format!("clusters[{i}].acn"), |f| network(f, c.acn, lf))?,
            });
        }
        let m_c = match p.m_c {
            Some(x) => tree("m_c", x, "m_c", 1.0)?.m,
            None => {
                let m0 = out[0].tree.m;
                if out.iter().any(|c| c.tree.m != m0) {
                    return Err(SolveError::param(
                        "m_c",
                        "required when the clusters' m differ (Table 5.3 uses m_i = m_c)",
                    ));
                }
                m0
            }
        };
        let it = icn_tree("clusters", out.len(), m_c)?;
        // Path classes of the model: Σ_i Σ_v n_i n_c n_v.
        let ns: u64 = out.iter().map(|c| c.tree.n as u64).sum();
        let classes = ns * ns * it.n as u64;
        if classes > MAX_PATH_CLASSES {
            return Err(SolveError::param(
                "clusters",
                format!("{classes} inter-cluster path classes; the limit is {MAX_PATH_CLASSES}"),
            ));
        }
        if out.iter().map(|c| c.nodes).sum::<u64>() > MAX_NODES {
            return Err(SolveError::param(
                "clusters",
                format!("more than {MAX_NODES} nodes in total"),
            ));
        }
        let ecn = network("ecn", Some(p.ecn.unwrap_or(CH5_NETS[1])), lf)?;
        let icn = network("icn", Some(p.icn.unwrap_or(CH5_NETS[0])), lf)?;
        (Locality::Ch5, out, it, ecn, icn)
    } else {
        refuse(
            p.m_c.is_some(),
            "m_c",
            "ch.4 derives the ICN from C and m (4.1); m_c is a ch.5 parameter",
        )?;
        for (f, present) in [
            ("inflow", p.inflow.is_some()),
            ("weights", p.weights.is_some()),
            ("dispatcher", p.dispatcher.is_some()),
            ("ecn_leg2", p.ecn_leg2.is_some()),
        ] {
            refuse(present, f, "a ch.5 variant (give clusters to use it)")?;
        }
        let t = tree("m", p.m.unwrap_or(4.0), "n", p.n.unwrap_or(3.0))?;
        let c = count("C", p.c.unwrap_or(16.0), 2)?;
        let it = icn_tree("C", c, t.m)?;
        if c as f64 * t.nodes() as f64 > MAX_NODES as f64 {
            return Err(SolveError::param(
                "C",
                format!("C·N is more than {MAX_NODES} nodes"),
            ));
        }
        let xi = probability("xi", p.xi.unwrap_or(0.5))?;
        let eta_in = probability("eta_in", p.eta_in.unwrap_or(0.6))?;
        if eta_in <= 0.0 {
            return Err(SolveError::param(
                "eta_in",
                "must lie in (0, 1]: (4.7) weights distance class j by η_in^j",
            ));
        }
        let acn = network("acn", Some(p.acn.unwrap_or(CH4_NET1)), lf)?;
        let cluster = Cluster {
            tree: t,
            nodes: t.nodes(),
            switches: t.switches(),
            user_level: 0.0,
            acn,
        };
        let ecn = network("ecn", Some(p.ecn.unwrap_or(CH4_NET2)), lf)?;
        let icn = network("icn", Some(p.icn.unwrap_or(CH4_NET2)), lf)?;
        (Locality::Ch4 { xi, eta_in }, vec![cluster; c], it, ecn, icn)
    };
    Ok(System {
        locality,
        clusters,
        icn_tree,
        ecn,
        icn,
        omega: omega as u32,
        lf,
        source,
        source_law: p.source,
        variants: Variants {
            channels: p.channels,
            cd: p.cd,
            ecn_num,
            stage_map: p.stage_map,
            inflow: p.inflow.unwrap_or_default(),
            weights: p.weights.unwrap_or_default(),
            dispatcher: p.dispatcher.unwrap_or_default(),
            ecn_leg2: p.ecn_leg2.unwrap_or_default(),
        },
    })
}

/// Parses and validates `multicluster.*` parameters.
pub fn parse_system(params: &serde_json::Value) -> Result<System, SolveError> {
    validate(&crate::params::parse(params)?)
}

/// For a solver with keys of its own (a simulator's run length): removes the
/// keys named in `extra` from the object, parses the rest strictly into a
/// [`System`], and returns the removed keys' values. Unknown keys that are in
/// neither set are still refused.
pub fn parse_with_extras(
    params: &serde_json::Value,
    extra: &[&str],
) -> Result<(System, serde_json::Map<String, serde_json::Value>), SolveError> {
    let mut obj = params
        .as_object()
        .cloned()
        .ok_or_else(|| SolveError::BadParams("parameters must be a JSON object".into()))?;
    let mut taken = serde_json::Map::new();
    for k in extra {
        if let Some(v) = obj.remove(*k) {
            taken.insert((*k).to_string(), v);
        }
    }
    let sys = parse_system(&serde_json::Value::Object(obj)).map_err(|e| list_extras(e, extra))?;
    Ok((sys, taken))
}

/// serde's answer to an unknown key lists the fields of [`Params`] only; the
/// solver accepts `extra` too, so the list the user sees names them as well.
fn list_extras(e: SolveError, extra: &[&str]) -> SolveError {
    match e {
        SolveError::BadParams(msg) if msg.contains("expected one of ") && !extra.is_empty() => {
            let more: Vec<String> = extra.iter().map(|k| format!("`{k}`")).collect();
            SolveError::BadParams(format!("{msg}, {}", more.join(", ")))
        }
        other => other,
    }
}
