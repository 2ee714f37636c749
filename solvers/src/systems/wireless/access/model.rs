//! The §7.2 model: MMPP/M/1/K stations, APs and ring MRs, and its solver
//! `wlan_access.model`.

use super::{
    common_docs, ring_metrics, ring_size, Access, ModelParams, DELAY_RING, LOAD_RING, LOSS_RING,
    SATURATION_METRICS,
};
use crate::params::parse;
use crate::systems::wireless::flow::{Flow, OutputMethod, OutputRule};
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};

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
        crate::systems::wireless::check_model_scales(
            p.t_wlan,
            p.t_mesh,
            [p.phi1, p.phi2, p.lambda1, p.lambda2],
        )?;
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
            .map_err(|e| crate::systems::wireless::in_user_terms(e, a.t_wlan, a.t_mesh, &a.mmpp))?;
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
