//! Wu ch.7: WLANs plus an Internet-access WMN (catalogue §3.5).
//!
//! n×n grid, 3 <= n <= 21, gateway with no WLAN (W-58) at the MR
//! ((n−1)/2, (n−1)/2) (0-based, integer division): the centre for odd n, the
//! upper-left of the four central MRs for even n ([`gateway`]); every other
//! MR has one AP with N stations. Hop rings by Chebyshev (8-neighbour)
//! distance, N_i by (7.2)/(7.3) ([`ring_size`], W-53, W-54).
//!
//! The model (§7.2): every entity an MMPP/M/1/K queue (K counts the packet in
//! service). Station: MMPP_s/M/1/K_s, effective input (7.4), output = that of
//! the infinite MMPP^e/M/1 (W-57, M-3). AP: the superposition of N station
//! outputs. Ring h_max receives the AP output; ring i < h_max receives
//! {N_{i+1} copies of the ring-(i+1) output, superposed, split by 1/N_i} ⊕
//! the AP output. Delay per ring (7.11), throughput (7.12 with W-56, 7.13),
//! average delay (7.14).
//!
//! The simulator: the same entities on `engines::qnet` with drop-tail
//! buffers and a shortest-path tree to the gateway, with split weights that
//! give every ring-i MR the same load (`balanced`, W-59) or a uniform choice
//! among ring-(i−1) neighbours (`uniform`).

use super::flow::{Flow, OutputMethod, OutputRule};
use super::{
    access_probability, access_rate, group_loss, group_sojourn, mmpp_docs, ratio, service_kind,
    sim_length_docs, source_kind, source_mmpp, Replications, ServiceKind, SimLength, SourceKind,
};
use crate::engines::qnet::{self, Entity, EntityId, Hop, Markov, Source};
use crate::params::{count, parse, positive};
use crate::traffic::mmpp::Mmpp2;
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

/// Smallest grid side (one full ring around the gateway).
pub const MIN_GRID: usize = 3;
/// Largest grid side (at most 10 rings; metric names are static).
pub const MAX_GRID: usize = 21;

/// Gateway coordinate (row = column, 0-based) on an n×n grid: the centre
/// for odd n; for even n the upper-left of the four central MRs, n/2 − 1.
/// The four are equivalent (a rotation or reflection of the grid maps one
/// onto another, ring for ring), so the choice only names the MRs; this one
/// is the one for which (7.3)'s min(x, y), read with 0-based coordinates,
/// is the number of complete rings (W-54), and the one formula serves both
/// parities.
pub fn gateway(n: usize) -> usize {
    (n - 1) / 2
}

/// Number of rings h_max: the Chebyshev distance from the gateway to the
/// far corner, (n − 1)/2 for odd n and n/2 for even n.
pub fn h_max(n: usize) -> usize {
    n - 1 - gateway(n)
}

/// N_i, the number of MRs i hops from the gateway, by (7.2)/(7.3): 8i while
/// the ring is complete (i <= min(x, y) = gateway(n), every ring of an odd
/// grid, (7.2)); otherwise 2n − 1, the L-shaped last ring i = n/2 of an even
/// grid (W-54). Tested against enumeration for every n in 3..=21.
pub fn ring_size(n: usize, i: usize) -> usize {
    if i <= gateway(n) {
        8 * i
    } else {
        2 * n - 1
    }
}
const MAX_STATIONS: usize = 1000;
const MAX_K: usize = 100_000;

const DELAY_RING: [&str; 10] = [
    "delay_ring1",
    "delay_ring2",
    "delay_ring3",
    "delay_ring4",
    "delay_ring5",
    "delay_ring6",
    "delay_ring7",
    "delay_ring8",
    "delay_ring9",
    "delay_ring10",
];
const LOSS_RING: [&str; 10] = [
    "P_loss_ring1",
    "P_loss_ring2",
    "P_loss_ring3",
    "P_loss_ring4",
    "P_loss_ring5",
    "P_loss_ring6",
    "P_loss_ring7",
    "P_loss_ring8",
    "P_loss_ring9",
    "P_loss_ring10",
];
const LOAD_RING: [&str; 10] = [
    "load_ring1",
    "load_ring2",
    "load_ring3",
    "load_ring4",
    "load_ring5",
    "load_ring6",
    "load_ring7",
    "load_ring8",
    "load_ring9",
    "load_ring10",
];
/// Model-only metrics that say where an entity is past saturation and how
/// its output was obtained: offered loads λ/μ of a station and an AP,
/// `output_*` = 0 for the infinite MMPP^e/M/1 output (W-57) and 1 for the
/// exact finite-queue output, and the count of finite-queue outputs over
/// all entities (MRs included).
const SATURATION_METRICS: [&str; 5] = [
    "rho_station",
    "rho_ap",
    "output_station",
    "output_ap",
    "finite_outputs",
];
const N_EQ_RING: [&str; 10] = [
    "N_eq_ring1",
    "N_eq_ring2",
    "N_eq_ring3",
    "N_eq_ring4",
    "N_eq_ring5",
    "N_eq_ring6",
    "N_eq_ring7",
    "N_eq_ring8",
    "N_eq_ring9",
    "N_eq_ring10",
];
const N_RING: [&str; 10] = [
    "N_ring1", "N_ring2", "N_ring3", "N_ring4", "N_ring5", "N_ring6", "N_ring7", "N_ring8",
    "N_ring9", "N_ring10",
];
const MU_RING: [&str; 10] = [
    "mu_mr_ring1",
    "mu_mr_ring2",
    "mu_mr_ring3",
    "mu_mr_ring4",
    "mu_mr_ring5",
    "mu_mr_ring6",
    "mu_mr_ring7",
    "mu_mr_ring8",
    "mu_mr_ring9",
    "mu_mr_ring10",
];

macro_rules! access_params {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $name {
            grid: f64,
            stations: f64,
            #[serde(rename = "K_s")]
            k_s: f64,
            #[serde(rename = "K_a")]
            k_a: f64,
            #[serde(rename = "K_r")]
            k_r: f64,
            t_wlan: f64,
            t_mesh: f64,
            p_station: f64,
            p_ap: f64,
            p_mr: Vec<f64>,
            phi1: f64,
            phi2: f64,
            lambda1: f64,
            lambda2: f64,
            #[serde(default)]
            source: Option<String>,
            $(#[serde(default)] $field: $ty,)*
        }
        impl $name {
            fn access(&self) -> Result<Access, SolveError> {
                Access::validate(
                    self.grid, self.stations, [self.k_s, self.k_a, self.k_r],
                    self.t_wlan, self.t_mesh, self.p_station, self.p_ap, &self.p_mr,
                    source_mmpp(self.phi1, self.phi2, self.lambda1, self.lambda2)?,
                    source_kind(self.source.as_deref())?,
                )
            }
        }
    };
}

access_params!(ModelParams {
    output: Option<String>,
});
access_params!(SimParams {
    routing: Option<String>,
    service: Option<String>,
    replications: Option<f64>,
    warmup: Option<f64>,
    horizon: Option<f64>,
});

/// A validated ch.7 network.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub n: usize,
    /// Number of rings h_max ([`h_max`]).
    pub rings: usize,
    /// Stations per WLAN (N).
    pub stations: usize,
    pub k_s: usize,
    pub k_a: usize,
    pub k_r: usize,
    pub t_wlan: f64,
    pub t_mesh: f64,
    pub p_station: f64,
    pub p_ap: f64,
    /// Per ring, ring 1 outward.
    pub p_mr: Vec<f64>,
    pub mmpp: Mmpp2,
    pub source: SourceKind,
}

impl Access {
    #[allow(clippy::too_many_arguments)]
    fn validate(
        grid: f64,
        stations: f64,
        k: [f64; 3],
        t_wlan: f64,
        t_mesh: f64,
        p_station: f64,
        p_ap: f64,
        p_mr: &[f64],
        mmpp: Mmpp2,
        source: SourceKind,
    ) -> Result<Access, SolveError> {
        let n = count("grid", grid, MIN_GRID as u64)?;
        if n > MAX_GRID {
            return Err(SolveError::param(
                "grid",
                format!("must be <= {MAX_GRID} (at most 10 rings), got {n}"),
            ));
        }
        let rings = h_max(n);
        let stations = count("stations", stations, 1)?;
        if stations > MAX_STATIONS {
            return Err(SolveError::param(
                "stations",
                format!("must be <= {MAX_STATIONS}"),
            ));
        }
        let mut ks = [0usize; 3];
        for (i, name) in ["K_s", "K_a", "K_r"].iter().enumerate() {
            ks[i] = count(name, k[i], 1)?;
            if ks[i] > MAX_K {
                return Err(SolveError::param(
                    name,
                    format!("must be <= {MAX_K} (size of the finite chain)"),
                ));
            }
        }
        if p_mr.len() < rings {
            return Err(SolveError::param(
                "p_mr",
                format!(
                    "needs one probability per ring ({rings} rings on a {n}x{n} grid), got {}",
                    p_mr.len()
                ),
            ));
        }
        let p_mr = p_mr[..rings]
            .iter()
            .map(|&p| access_probability("p_mr", p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Access {
            n,
            rings,
            stations,
            k_s: ks[0],
            k_a: ks[1],
            k_r: ks[2],
            t_wlan: positive("t_wlan", t_wlan)?,
            t_mesh: positive("t_mesh", t_mesh)?,
            p_station: access_probability("p_station", p_station)?,
            p_ap: access_probability("p_ap", p_ap)?,
            p_mr,
            mmpp,
            source,
        })
    }

    /// Ring (Chebyshev distance to the gateway) of MR i, row-major; 0 = gateway.
    pub fn ring(&self, i: usize) -> usize {
        let c = gateway(self.n);
        let (r, col) = (i / self.n, i % self.n);
        r.abs_diff(c).max(col.abs_diff(c))
    }

    /// N_i by enumeration (checked against (7.2)/(7.3) by `wlan_access.config`).
    pub fn ring_sizes(&self) -> Vec<usize> {
        let mut v = vec![0; self.rings + 1];
        for i in 0..self.n * self.n {
            v[self.ring(i)] += 1;
        }
        v
    }

    /// The ring of every MR as text, one grid row per line, `G` for the
    /// gateway (docs/models/wireless.md shows the 5×5 and 6×6 maps).
    pub fn ring_map(&self) -> String {
        let mut s = String::new();
        for r in 0..self.n {
            let row: Vec<String> = (0..self.n)
                .map(|c| match self.ring(r * self.n + c) {
                    0 => "G".to_string(),
                    k => k.to_string(),
                })
                .collect();
            s.push_str(&row.join(" "));
            s.push('\n');
        }
        s
    }

    /// 8-neighbours of MR i.
    pub fn neighbours(&self, i: usize) -> Vec<usize> {
        let n = self.n as isize;
        let (r, c) = ((i / self.n) as isize, (i % self.n) as isize);
        let mut v = Vec::with_capacity(8);
        for dr in -1..=1 {
            for dc in -1..=1 {
                let (rr, cc) = (r + dr, c + dc);
                if (dr, dc) != (0, 0) && (0..n).contains(&rr) && (0..n).contains(&cc) {
                    v.push((rr * n + cc) as usize);
                }
            }
        }
        v
    }

    pub fn mu_station(&self) -> f64 {
        access_rate(self.p_station, self.t_wlan)
    }
    pub fn mu_ap(&self) -> f64 {
        access_rate(self.p_ap, self.t_wlan)
    }
    pub fn mu_mr(&self, ring: usize) -> f64 {
        access_rate(self.p_mr[ring - 1], self.t_mesh)
    }

    /// Default warm-up of the simulation (both fidelities): twice the time a
    /// packet needs to drain through full buffers along the longest path,
    /// K_s/μ_s + K_a/μ_a + Σ_i K_r/μ_r,i, and at least 10 s. Past AP
    /// saturation the buffers fill during the warm-up; a shorter one (the
    /// former quick 5 s, with drain paths of 15–20 s in Figs 7.5–7.8)
    /// measures packets that met half-empty queues and biased the quick
    /// delays 20–50% low.
    pub fn default_warmup(&self) -> f64 {
        let drain = self.k_s as f64 / self.mu_station()
            + self.k_a as f64 / self.mu_ap()
            + (1..=self.rings)
                .map(|i| self.k_r as f64 / self.mu_mr(i))
                .sum::<f64>();
        (2.0 * drain).max(10.0)
    }

    /// The default warm-up is derived from the slot times: when it alone
    /// makes a run too long (issue 32: `t_wlan: 1e308` gave an infinite
    /// warm-up and blamed `horizon`), the error names the slot time behind
    /// the longer drain, `t_wlan` (stations and APs) or `t_mesh` (rings).
    fn check_default_warmup(&self, len: &SimLength, offered: f64) -> Result<(), SolveError> {
        let no_warmup = SimLength {
            warmup: 0.0,
            ..*len
        };
        if len.check_work(offered).is_ok() || no_warmup.check_work(offered).is_err() {
            return Ok(());
        }
        let wlan = self.k_s as f64 / self.mu_station() + self.k_a as f64 / self.mu_ap();
        let mesh: f64 = (1..=self.rings)
            .map(|i| self.k_r as f64 / self.mu_mr(i))
            .sum();
        let (field, t) = if wlan >= mesh {
            ("t_wlan", self.t_wlan)
        } else {
            ("t_mesh", self.t_mesh)
        };
        Err(SolveError::param(
            field,
            format!(
                "{field} = {t:e} s makes the default warm-up (twice the time full buffers take to drain) {:.3e} s, too long for the packet limit of a run; give a smaller {field} or a `warmup`",
                len.warmup
            ),
        ))
    }

    /// The offered load of every entity with a buffer, before any loss: a
    /// station, an AP (its N stations) and one MR of each ring (the traffic
    /// of the WLANs of that ring and the rings beyond, shared by its N_i
    /// MRs), each at most [`super::MAX_LOAD`].
    pub fn check_model(&self) -> Result<(), SolveError> {
        let source = "lambda1, lambda2, phi1, phi2";
        let lam = self.mmpp.mean_rate();
        super::check_load(
            "a station",
            lam / self.mu_station(),
            &format!("{source}, t_wlan and p_station"),
        )?;
        let ap = self.stations as f64 * lam;
        super::check_load(
            "an AP",
            ap / self.mu_ap(),
            &format!("{source}, stations, t_wlan and p_ap"),
        )?;
        let mut beyond = 0.0;
        for i in (1..=self.rings).rev() {
            let n_i = ring_size(self.n, i) as f64;
            beyond += n_i * ap;
            super::check_load(
                &format!("an MR of ring {i}"),
                beyond / n_i / self.mu_mr(i),
                &format!("{source}, stations, grid, t_mesh and p_mr[{}]", i - 1),
            )?;
        }
        Ok(())
    }

    pub fn station_flow(&self) -> Flow {
        match self.source {
            SourceKind::Mmpp => Flow::Mmpp(self.mmpp),
            SourceKind::Poisson => Flow::Poisson(self.mmpp.mean_rate()),
        }
    }
}

/// Model results; ring vectors are indexed ring − 1.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessResult {
    pub delay: f64,
    pub throughput: f64,
    pub d_station: f64,
    pub d_ap: f64,
    pub p_loss_station: f64,
    pub p_loss_ap: f64,
    pub delay_ring: Vec<f64>,
    pub p_loss_ring: Vec<f64>,
    /// Mean arrival rate offered to one MR of the ring.
    pub load_ring: Vec<f64>,
    /// How many entity outputs used the exact finite-queue departure MAP
    /// instead of the infinite queue (see `Flow::departure_lossy`).
    pub finite_outputs: usize,
    /// Offered load λ/μ of a station and of an AP (before any loss): >= 1
    /// means the entity is past saturation and its output is that of a
    /// server that is almost always busy (docs/models/wireless.md, W-57).
    pub rho_station: f64,
    pub rho_ap: f64,
    /// How the station's and the AP's outputs were obtained.
    pub output_station: OutputMethod,
    pub output_ap: OutputMethod,
}

/// The §7.2 model with the default output rule ([`OutputRule::Auto`]).
pub fn access_model(a: &Access) -> Result<AccessResult, SolveError> {
    access_model_with(a, OutputRule::Auto)
}

/// The §7.2 model; `rule` chooses the output process of each finite queue.
pub fn access_model_with(a: &Access, rule: OutputRule) -> Result<AccessResult, SolveError> {
    let h = a.rings;
    let n_i = |i: usize| ring_size(a.n, i) as f64; // (7.2)/(7.3)
    let src = a.station_flow();
    let lam = src.rate();
    let mut finite_outputs = 0;
    let mut lossy =
        |f: &Flow, mu: f64, k: usize, pb: f64| -> Result<(Flow, OutputMethod), SolveError> {
            let (o, how) = f.departure_lossy_with(mu, k, pb, rule)?;
            if how == OutputMethod::Finite {
                finite_outputs += 1;
            }
            Ok((o, how))
        };
    let st = src.finite(a.mu_station(), a.k_s)?;
    let (out_s, output_station) = lossy(&src, a.mu_station(), a.k_s, st.p_block)?;
    let in_a = Flow::superpose(&[(out_s, a.stations as f64)])?;
    let ap = in_a.finite(a.mu_ap(), a.k_a)?;
    let (out_a, output_ap) = lossy(&in_a, a.mu_ap(), a.k_a, ap.p_block)?;
    let mut d_r = vec![0.0; h];
    let mut pb_r = vec![0.0; h];
    let mut load = vec![0.0; h];
    let mut upstream: Option<Flow> = None; // output of one ring-(i+1) MR
    for i in (1..=h).rev() {
        let input = match upstream {
            None => out_a,
            Some(o) => {
                let tr = Flow::superpose(&[(o, n_i(i + 1))])?;
                Flow::superpose(&[(tr.split(1.0 / n_i(i)), 1.0), (out_a, 1.0)])?
            }
        };
        let q = input.finite(a.mu_mr(i), a.k_r)?;
        d_r[i - 1] = q.w;
        pb_r[i - 1] = q.p_block;
        load[i - 1] = input.rate();
        if i > 1 {
            upstream = Some(lossy(&input, a.mu_mr(i), a.k_r, q.p_block)?.0);
        }
    }
    let mut delay_ring = Vec::with_capacity(h);
    let (mut t, mut td) = (0.0, 0.0);
    let mut pass = lam * (1.0 - st.p_block) * (1.0 - ap.p_block);
    let mut d_sum = 0.0;
    for i in 1..=h {
        d_sum += d_r[i - 1];
        // (7.11)
        let d = i as f64 * a.t_mesh + 2.0 * a.t_wlan + st.w + ap.w + d_sum;
        // (7.12) with W-56: the product runs over the rings crossed, j <= i.
        pass *= 1.0 - pb_r[i - 1];
        let w = a.stations as f64 * n_i(i) * pass;
        t += w;
        td += w * d;
        delay_ring.push(d);
    }
    Ok(AccessResult {
        delay: td / t,
        throughput: t,
        d_station: st.w,
        d_ap: ap.w,
        p_loss_station: st.p_block,
        p_loss_ap: ap.p_block,
        delay_ring,
        p_loss_ring: pb_r,
        load_ring: load,
        finite_outputs,
        rho_station: lam / a.mu_station(),
        rho_ap: in_a.rate() / a.mu_ap(),
        output_station,
        output_ap,
    })
}

fn common_docs() -> Vec<ParamDoc> {
    let mut v = vec![
        ParamDoc {
            name: "grid",
            doc: "side n of the n x n MR grid, 3..=21, odd or even; gateway without WLAN at the centre (odd n) or at the upper-left of the four central MRs, 0-based (n/2-1, n/2-1) (even n, equivalent by symmetry); 8-neighbour links (W-53); N_i by (7.2)/(7.3)",
        },
        ParamDoc {
            name: "stations",
            doc: "stations per WLAN N (>= 1); one AP per non-gateway MR",
        },
        ParamDoc {
            name: "K_s",
            doc: "station buffer incl. the packet in service (>= 1)",
        },
        ParamDoc {
            name: "K_a",
            doc: "AP buffer incl. the packet in service (>= 1)",
        },
        ParamDoc {
            name: "K_r",
            doc: "MR buffer incl. the packet in service (>= 1)",
        },
        ParamDoc {
            name: "t_wlan",
            doc: "WLAN slot = packet airtime t_l (s, > 0; the model: 1e-9..=1e3, with phi1, phi2 in 1e-6..=1e6/s and lambda1, lambda2 <= 1e9/s)",
        },
        ParamDoc {
            name: "t_mesh",
            doc: "mesh slot = packet airtime t_m (s, > 0; the model: 1e-9..=1e3)",
        },
        ParamDoc {
            name: "p_station",
            doc: "station access probability per slot, in (0, 1)",
        },
        ParamDoc {
            name: "p_ap",
            doc: "AP access probability per slot, in (0, 1)",
        },
        ParamDoc {
            name: "p_mr",
            doc: "MR access probability per slot for rings 1, 2, ... outward (list, at least one per ring)",
        },
    ];
    v.extend(mmpp_docs());
    v
}

fn ring_metrics(h: usize) -> Vec<&'static str> {
    let mut m = vec![
        "delay",
        "throughput",
        "D_station",
        "D_ap",
        "P_loss_station",
        "P_loss_ap",
    ];
    m.extend_from_slice(&DELAY_RING[..h]);
    m.extend_from_slice(&LOSS_RING[..h]);
    m.extend_from_slice(&LOAD_RING[..h]);
    m
}

pub struct AccessModelSolver;

impl Solver for AccessModelSolver {
    fn name(&self) -> &'static str {
        "wlan_access.model"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_loss_<where>")]
    }
    fn version(&self) -> u32 {
        // 2: departure counting moments in the Laplace domain (same values
        // to about 1e-10; no work bounds or long-window shortcut needed).
        // 3: even grids (7.3) and the saturation metrics (rho_station,
        // rho_ap, output_station, output_ap, finite_outputs); the values of
        // every odd-grid metric are unchanged (bit for bit, tested against
        // version 2's snapshot), the new metrics need the tasks rerun.
        3
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        let mut params = common_docs();
        params.push(ParamDoc {
            name: "output",
            doc: "output process of a finite queue (W-57): `auto` (default: the infinite MMPP^e/M/1 fed by the effective flow (7.4), except where its tail needs more than 2000 levels, i.e. heavily past saturation, where the exact MMPP/M/1/K departure MAP is fitted) or `finite` (the exact MMPP/M/1/K departure MAP for every queue)",
        });
        let mut metrics = ring_metrics(10);
        metrics.extend_from_slice(&SATURATION_METRICS);
        SolverDoc {
            summary: "Wu ch.7 WLANs + Internet-access WMN: MMPP/M/1/K stations, APs and ring MRs; delay per ring (7.11), throughput (7.12-7.13, W-56), average delay (7.14); offered loads rho and the output process used past saturation (W-57)",
            params,
            metrics,
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: ModelParams = parse(params)?;
        super::check_model_scales(p.t_wlan, p.t_mesh, [p.phi1, p.phi2, p.lambda1, p.lambda2])?;
        let a = p.access()?;
        a.check_model()?;
        let rule = match p.output.as_deref().unwrap_or("auto") {
            "auto" => OutputRule::Auto,
            "finite" => OutputRule::Finite,
            other => {
                return Err(SolveError::param(
                    "output",
                    format!("must be `auto` or `finite`, got `{other}`"),
                ))
            }
        };
        let r = access_model_with(&a, rule)
            .map_err(|e| super::in_user_terms(e, a.t_wlan, a.t_mesh, &a.mmpp))?;
        let method = |m: OutputMethod| match m {
            OutputMethod::Infinite => 0.0,
            OutputMethod::Finite => 1.0,
        };
        let mut o = Outcome::new()
            .with("delay", r.delay)
            .with("throughput", r.throughput)
            .with("D_station", r.d_station)
            .with("D_ap", r.d_ap)
            .with("P_loss_station", r.p_loss_station)
            .with("P_loss_ap", r.p_loss_ap)
            .with("rho_station", r.rho_station)
            .with("rho_ap", r.rho_ap)
            .with("output_station", method(r.output_station))
            .with("output_ap", method(r.output_ap))
            .with("finite_outputs", r.finite_outputs as f64);
        if r.finite_outputs > 0 {
            o.note = Some(format!(
                "{} entity output(s) from the exact finite-queue departure MAP (the infinite queue of W-57 is too close to saturation)",
                r.finite_outputs
            ));
        }
        for i in 0..a.rings {
            o = o
                .with(DELAY_RING[i], r.delay_ring[i])
                .with(LOSS_RING[i], r.p_loss_ring[i])
                .with(LOAD_RING[i], r.load_ring[i]);
        }
        o.checked(self.name())
    }
}

/// Configuration quantities of Table 7.2 with their consistency checks.
pub struct AccessConfigSolver;

impl Solver for AccessConfigSolver {
    fn name(&self) -> &'static str {
        "wlan_access.config"
    }
    fn version(&self) -> u32 {
        // 2: even grids; N_eq_ring<i> ((7.2)/(7.3)) and the gateway's
        // coordinates beside the enumerated N_ring<i> (wu-7.3-opt).
        2
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        let mut metrics = vec![
            "MRs",
            "WLANs",
            "stations",
            "rings",
            "gateway_row",
            "gateway_col",
            "mu_station",
            "mu_ap",
        ];
        metrics.extend_from_slice(&N_RING);
        metrics.extend_from_slice(&N_EQ_RING);
        metrics.extend_from_slice(&MU_RING);
        let mut params = common_docs();
        params.push(ParamDoc {
            name: "output",
            doc: "accepted so that a wlan_access.model parameter set can be passed unchanged (`auto` or `finite`); no effect on the configuration",
        });
        SolverDoc {
            summary: "Wu Table 7.2: rings N_i by enumeration (checked against (7.2)/(7.3)), WLANs and stations (checked against the ring sums), derived service rates per ring (6.7)",
            params,
            metrics,
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: ModelParams = parse(params)?;
        let a = p.access()?;
        let sizes = a.ring_sizes();
        for (i, &s) in sizes.iter().enumerate().skip(1) {
            if s != ring_size(a.n, i) {
                return Err(SolveError::Numerical(format!(
                    "ring {i} has {s} MRs by enumeration, not N_i = {} ((7.2)/(7.3))",
                    ring_size(a.n, i)
                )));
            }
        }
        let wlans: usize = sizes[1..].iter().sum();
        if wlans != a.n * a.n - 1 {
            return Err(SolveError::Numerical(format!(
                "rings hold {wlans} MRs, not n² − 1 = {}",
                a.n * a.n - 1
            )));
        }
        let mut o = Outcome::new()
            .with("MRs", (a.n * a.n) as f64)
            .with("WLANs", wlans as f64)
            .with("stations", (wlans * a.stations) as f64)
            .with("rings", a.rings as f64)
            .with("gateway_row", gateway(a.n) as f64)
            .with("gateway_col", gateway(a.n) as f64)
            .with("mu_station", a.mu_station())
            .with("mu_ap", a.mu_ap());
        for i in 1..=a.rings {
            o = o
                .with(N_RING[i - 1], sizes[i] as f64)
                .with(N_EQ_RING[i - 1], ring_size(a.n, i) as f64)
                .with(MU_RING[i - 1], a.mu_mr(i));
        }
        o.checked(self.name())
    }
}

/// Routing towards the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeRouting {
    /// Split weights that load every ring-i MR equally (W-59).
    Balanced,
    /// Uniform among the ring-(i−1) neighbours.
    Uniform,
}

/// Split weights from ring i+1 to ring i: for each ring-(i+1) MR, its
/// ring-i neighbours and their probabilities. Balanced weights come from
/// Sinkhorn scaling of the adjacency to row sums 1 and equal column sums
/// N_{i+1}/N_i over the ring-i MRs (the transport plan that loads ring i
/// evenly when every ring-(i+1) MR carries the same load: always on an odd
/// grid). On an even grid the last ring reaches only part of ring n/2 − 1
/// (see below), the column sums are equal over the MRs it reaches, and the
/// rings inside carry unequal loads: the model's "evenly distributed"
/// (§7.2) is then an approximation that the even-grid series measures
/// (docs/models/wireless.md).
pub fn tree_weights(
    a: &Access,
    routing: TreeRouting,
) -> Result<Vec<Vec<(usize, f64)>>, SolveError> {
    let cells = a.n * a.n;
    let mut out: Vec<Vec<(usize, f64)>> = vec![Vec::new(); cells];
    for ring in 2..=a.rings {
        let outer: Vec<usize> = (0..cells).filter(|&i| a.ring(i) == ring).collect();
        let inner: Vec<usize> = (0..cells).filter(|&i| a.ring(i) == ring - 1).collect();
        let pos = |k: usize| inner.iter().position(|&x| x == k).unwrap_or(0);
        let mut rows: Vec<Vec<(usize, f64)>> = outer
            .iter()
            .map(|&m| {
                a.neighbours(m)
                    .into_iter()
                    .filter(|&k| a.ring(k) == ring - 1)
                    .map(|k| (pos(k), 1.0))
                    .collect()
            })
            .collect();
        for r in &mut rows {
            let s = r.len() as f64;
            for x in r.iter_mut() {
                x.1 /= s;
            }
        }
        if routing == TreeRouting::Balanced {
            // Ring-i MRs with a ring-(i+1) neighbour. All of them on an odd
            // grid and on every inner ring; on an even grid the L-shaped
            // last ring (2n − 1 MRs) reaches only the 2n − 3 MRs of the two
            // far sides of ring n/2 − 1, the others get no transit traffic.
            let mut reached = vec![false; inner.len()];
            for r in &rows {
                for &(k, _) in r {
                    reached[k] = true;
                }
            }
            let n_reached = reached.iter().filter(|&&x| x).count();
            let target = outer.len() as f64 / n_reached as f64;
            let mut ok = false;
            for _ in 0..20_000 {
                let mut col = vec![0.0; inner.len()];
                for r in &rows {
                    for &(k, w) in r {
                        col[k] += w;
                    }
                }
                let err = col
                    .iter()
                    .zip(&reached)
                    .filter(|(_, &r)| r)
                    .map(|(c, _)| (c - target).abs())
                    .fold(0.0, f64::max);
                if err < 1e-12 {
                    ok = true;
                    break;
                }
                for r in &mut rows {
                    let mut s = 0.0;
                    for x in r.iter_mut() {
                        x.1 *= target / col[x.0];
                        s += x.1;
                    }
                    for x in r.iter_mut() {
                        x.1 /= s;
                    }
                }
            }
            if !ok {
                return Err(SolveError::Numerical(format!(
                    "no balanced split from ring {ring} to ring {}",
                    ring - 1
                )));
            }
        }
        for (r, &m) in rows.into_iter().zip(&outer) {
            out[m] = r.into_iter().map(|(k, w)| (inner[k], w)).collect();
        }
    }
    Ok(out)
}

/// The simulated network.
pub struct AccessLayout {
    pub scenario: qnet::Scenario,
    pub routing: Markov,
}

pub const G_STATION: usize = 0;
pub const G_AP: usize = 1;
/// Group of ring i is G_AP + i.
pub fn ring_group(i: usize) -> usize {
    G_AP + i
}

pub fn access_layout(a: &Access, routing: TreeRouting) -> Result<AccessLayout, SolveError> {
    let cells = a.n * a.n;
    let weights = tree_weights(a, routing)?;
    let mrs: Vec<usize> = (0..cells).filter(|&i| a.ring(i) > 0).collect();
    let w = mrs.len();
    let n_st = w * a.stations;
    let (ap0, mr0) = (n_st, n_st + w);
    let mut mr_index = vec![usize::MAX; cells];
    for (k, &i) in mrs.iter().enumerate() {
        mr_index[i] = k;
    }
    let (lam, phi) = match a.source {
        SourceKind::Mmpp => ([a.mmpp.lambda1, a.mmpp.lambda2], [a.mmpp.phi1, a.mmpp.phi2]),
        SourceKind::Poisson => ([a.mmpp.mean_rate(); 2], [0.0, 0.0]),
    };
    let ent = |slot: f64, p: f64, k: usize, g: usize| Entity {
        slot,
        p,
        mu: access_rate(p, slot),
        capacity: k as u32,
        group: g as u16,
    };
    let mut entities = Vec::with_capacity(n_st + 2 * w);
    let mut table = Vec::with_capacity(n_st + 2 * w);
    let mut sources = Vec::with_capacity(n_st);
    for (k, &i) in mrs.iter().enumerate() {
        for _ in 0..a.stations {
            sources.push(Source {
                entity: EntityId(entities.len() as u32),
                lambda: lam,
                phi,
                class: (a.ring(i) - 1) as u16,
            });
            entities.push(ent(a.t_wlan, a.p_station, a.k_s, G_STATION));
            table.push(vec![(Hop::To(EntityId((ap0 + k) as u32)), 1.0)]);
        }
    }
    for k in 0..w {
        entities.push(ent(a.t_wlan, a.p_ap, a.k_a, G_AP));
        table.push(vec![(Hop::To(EntityId((mr0 + k) as u32)), 1.0)]);
    }
    for &i in &mrs {
        let r = a.ring(i);
        entities.push(ent(a.t_mesh, a.p_mr[r - 1], a.k_r, ring_group(r)));
        if r == 1 {
            table.push(vec![(Hop::Exit, 1.0)]);
        } else {
            table.push(
                weights[i]
                    .iter()
                    .map(|&(j, p)| (Hop::To(EntityId((mr0 + mr_index[j]) as u32)), p))
                    .collect(),
            );
        }
    }
    Ok(AccessLayout {
        scenario: qnet::Scenario {
            entities,
            sources,
            groups: 2 + a.rings,
            classes: a.rings,
        },
        routing: Markov::new(&table),
    })
}

pub struct AccessSimSolver;

impl Solver for AccessSimSolver {
    fn name(&self) -> &'static str {
        "wlan_access.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_loss_<where>")]
    }
    fn version(&self) -> u32 {
        // 2: qnet timer heaps and one-log service draws (new random streams);
        // warm-up from the buffers' drain time.
        // 3: qnet splits the entity timers into fast and slow heaps, which
        // orders events at equal times differently (frequent with slotted
        // service on large networks).
        // 4: qnet draws each service time one service ahead, which changes
        // the order of an entity's service and routing draws.
        // 5: a mean over no packets is undefined with a note (was 0), and a
        // horizon expecting no packet is refused (issue 32); every run in
        // which each metric saw a packet gives the results of version 4.
        5
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = common_docs();
        params.extend(sim_length_docs().into_iter().map(|mut d| {
            if d.name == "warmup" {
                d.doc = "simulated seconds discarded at the start of each replication (default, both fidelities: twice the full-buffer drain time K_s/mu_s + K_a/mu_a + sum_i K_r/mu_r,i, at least 10)";
            }
            d
        }));
        params.push(ParamDoc {
            name: "routing",
            doc: "`balanced` (default: split weights loading every ring-i MR equally, W-59) or `uniform` (uniform among ring-(i-1) neighbours)",
        });
        SolverDoc {
            summary: "Wu ch.7 WLANs + Internet-access WMN, packet-level simulation on the qnet engine (SIM-6): drop-tail buffers, tree routing to the central gateway",
            params,
            metrics: ring_metrics(10),
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: SimParams = parse(params)?;
        let a = p.access()?;
        let service = service_kind(p.service.as_deref())?;
        let routing = match p.routing.as_deref().unwrap_or("balanced") {
            "balanced" => TreeRouting::Balanced,
            "uniform" => TreeRouting::Uniform,
            other => {
                return Err(SolveError::param(
                    "routing",
                    format!("must be `balanced` or `uniform`, got `{other}`"),
                ))
            }
        };
        let warmup = a.default_warmup();
        let len = SimLength::resolve(
            p.replications,
            p.warmup,
            p.horizon,
            ctx.fidelity,
            SimLength {
                replications: 5,
                warmup,
                horizon: 200.0,
            },
            SimLength {
                replications: 3,
                warmup,
                horizon: 40.0,
            },
        )?;
        let offered = ((a.n * a.n - 1) * a.stations) as f64 * a.mmpp.mean_rate();
        if p.warmup.is_none() {
            a.check_default_warmup(&len, offered)?;
        }
        len.check_work(offered)?;
        len.check_not_empty(offered)?;
        let layout = access_layout(&a, routing)?;
        simulate(&a, &layout, service, len, ctx)
    }
}

fn simulate(
    a: &Access,
    layout: &AccessLayout,
    service: ServiceKind,
    len: SimLength,
    ctx: &TaskContext,
) -> Result<Outcome, SolveError> {
    let names = ring_metrics(a.rings);
    let mut reps = Replications::new(&names);
    let run_len = qnet::RunLength {
        warmup: len.warmup,
        horizon: len.horizon,
        max_packets: u32::MAX,
    };
    let sizes = a.ring_sizes();
    for rep in 0..len.replications {
        ctx.check_cancel()?;
        let c = service.run(&layout.scenario, &layout.routing, run_len, ctx, rep)?;
        let delivered: u64 = c.classes.iter().map(|k| k.delivered).sum();
        let delay_sum: f64 = c.classes.iter().map(|k| k.delay_sum).sum();
        let mut v = vec![
            ratio(delay_sum, delivered),
            delivered as f64 / c.window,
            group_sojourn(&c, G_STATION),
            group_sojourn(&c, G_AP),
            group_loss(&c, G_STATION),
            group_loss(&c, G_AP),
        ];
        for k in &c.classes {
            v.push(ratio(k.delay_sum, k.delivered));
        }
        for i in 1..=a.rings {
            v.push(group_loss(&c, ring_group(i)));
        }
        for (i, size) in sizes.iter().enumerate().skip(1) {
            v.push(c.groups[ring_group(i)].arrivals as f64 / c.window / *size as f64);
        }
        reps.push(&v);
    }
    reps.into_outcome(&len, "wlan_access.sim")
}

#[cfg(test)]
pub(crate) fn test_access(
    n: usize,
    stations: usize,
    k: usize,
    mmpp: Mmpp2,
    source: SourceKind,
) -> Access {
    Access {
        n,
        rings: h_max(n),
        stations,
        k_s: k,
        k_a: k,
        k_r: k,
        t_wlan: 7.27e-4,
        t_mesh: 1.48e-4,
        p_station: 2.5e-3,
        p_ap: 7e-3,
        p_mr: vec![
            8.2e-2, 7.3e-2, 6.4e-2, 5.5e-2, 5.0e-2, 4.5e-2, 4.0e-2, 3.5e-2, 3.0e-2, 2.5e-2,
        ],
        mmpp,
        source,
    }
}
