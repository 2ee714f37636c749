//! `multicluster.model`: Wu's analytical latency models of multi-cluster
//! systems on m-port n-trees, ch.4 (§4.3, eqs 4.5–4.30) and ch.5 (§5.3,
//! eqs 5.4–5.22), with the catalogue's errata W-21…W-40 and issue 22's
//! choice points (docs/models/multicluster.md):
//!
//! - channel loads f (4.10)–(4.12), (5.7)–(5.9) with 4n or 2n channels
//!   (W-23), the ECN numerator as printed or single, the ch.5 inflow term
//!   printed or derived (W-34);
//! - each channel's arrival process: per originating source, ⌊f⌋ copies of
//!   the (ϕ-scaled, M-20) source MMPP plus one copy split by frac(f),
//!   superposed and fitted once by Heffes–Lucantoni at the W-5 time;
//! - every path class (intra 2j channels; inter (a, r, u)) is a list of
//!   stages: service ω·t + Exp(Σ later Wb) (4.16/4.22–4.24, 4.27, 5.17), the
//!   last ω·t_cn (4.14, 4.27); the stage map of W-27/W-36 or one stage
//!   earlier; per stage Pb from the W-25 four-state chain (μ_b ≤ 0 clamped
//!   to 1e-9/T and counted in `clamped`) and Wc from the stage's own
//!   MMPP/G/1 queue (3.37–3.38), Wb = Pb·Wc (4.18);
//! - source queues MMPP/G/1 with the mixture over path classes (W-12);
//! - C/D queues MMPP/D/1 with service ω·t_cs^I and the W-29/W-38 arrivals.
//!
//! The unknowns Wb form a triangular system (a stage's service depends only
//! on the stages after it, and no arrival process depends on a wait), so the
//! damped fixed point of issue 22 (damping 0.5, start 0) converges to the
//! solution of one backward sweep from the last stage. The model computes
//! that sweep directly, sharing identical path suffixes (stages whose whole
//! remainder is the same have the same Wb). The point is `saturated` when
//! any stage, source or C/D queue has utilisation >= 1.

use super::params::{
    Cd, Channels, Dispatcher, EcnLeg2, EcnNum, Locality, Reading, StageMap, System,
};
use super::Tree;
use crate::markov::ctmc::Generator;
use crate::queueing::mmpp::{mmpp_g1, Service, ShiftExp};
use crate::traffic::mmpp::{superpose_fit, Mmpp2};
use crate::SolveError;
use rustc_hash::FxHashMap;

/// Why a point has no finite latency.
pub type Saturation = String;

/// A saturated point with the metrics that stay finite there: the
/// intra-cluster part (`latency_in`, `T_in`, `W_in`, `tau_in`, `net_in`)
/// when only the inter-cluster part saturates (issue 31 item 4: Fig 4.7(c)
/// plots Lat_in past the inter-cluster saturation).
#[derive(Debug, Clone, PartialEq)]
pub struct Saturated {
    pub why: Saturation,
    pub defined: Vec<(&'static str, f64)>,
}

/// Model output.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelResult {
    /// Mean message latency (4.5) / (5.22).
    pub latency: f64,
    /// Mean intra-cluster message latency (ch.4 Lat_in; ch.5 node-weighted Lat_i^in).
    pub latency_in: f64,
    /// Mean inter-cluster message latency including W_c and W_d (4.30).
    pub latency_out: f64,
    /// Waiting at the concentrator (ch.5: mean over clusters weighted by N_i ξ_i).
    pub w_c: f64,
    /// Waiting at the dispatcher (same weighting).
    pub w_d: f64,
    /// ch.5: Lat_i (5.21) per cluster; ch.4: empty.
    pub per_cluster: Vec<f64>,
    /// Largest utilisation of any stage, source or C/D queue.
    pub rho_max: f64,
    /// Stage chains whose μ_b was ≤ 0 and clamped (W-25).
    pub clamped: u32,
    /// Distinct stage queues solved.
    pub stage_queues: u32,
    /// ch.4 parts: T_in, W_in, τ_in, T_out, W_out, τ_out; load multipliers.
    pub parts: Vec<(&'static str, f64)>,
}

/// One stage of a path: its deterministic part ω·t and its channel process.
#[derive(Clone, Copy)]
struct Stage {
    shift: f64,
    proc: usize,
}

/// A fitted channel process with its mean rate.
struct Proc {
    mmpp: Mmpp2,
    rate: f64,
}

/// The end of a list of [`Chains`] links.
const NIL: u32 = u32::MAX;

/// Suffix-shared stage chains: node = (stage, next node).
struct Chains {
    procs: Vec<Proc>,
    nodes: Vec<(Stage, Option<u32>)>,
    /// Per node, the nodes whose next node it is, as a list through `links`
    /// (its first entry, `NIL`: none); `last` the same for the nodes without
    /// a next one. A node has a handful of them (the distinct stages that
    /// can precede a suffix), so a scan finds one sooner than hashing its
    /// key would; the lists share one vector, so a new node allocates
    /// nothing of its own.
    before: Vec<u32>,
    last: u32,
    /// The lists' entries: (shift bits, process, id, next entry or `NIL`).
    links: Vec<(u64, usize, u32, u32)>,
    /// Σ Wb from this node to the end (filled by `solve`).
    tail: Vec<f64>,
}

/// A path class's service law at stage 0 and its weight.
#[derive(Clone, Copy)]
struct Class {
    weight: f64,
    head: u32,
    /// Tail-flit time τ of this class (4.26).
    tau: f64,
}

impl Chains {
    fn new() -> Self {
        Chains {
            procs: Vec::new(),
            nodes: Vec::new(),
            before: Vec::new(),
            last: NIL,
            links: Vec::new(),
            tail: Vec::new(),
        }
    }

    /// Adds a channel process; an identical one already present is reused, so
    /// that stages on identical processes share their suffixes.
    fn add_proc(&mut self, mmpp: Mmpp2) -> usize {
        if let Some(i) = self.procs.iter().position(|p| p.mmpp == mmpp) {
            return i;
        }
        self.procs.push(Proc {
            rate: mmpp.mean_rate(),
            mmpp,
        });
        self.procs.len() - 1
    }

    /// Interns the stage list (stage 0 first), returning stage 0's node.
    fn path(&mut self, stages: &[Stage]) -> u32 {
        let mut next: Option<u32> = None;
        for s in stages.iter().rev() {
            let key = (s.shift.to_bits(), s.proc);
            let first = match next {
                Some(c) => self.before[c as usize],
                None => self.last,
            };
            // The keys of a list are distinct, so the order of its entries
            // does not change which one is found.
            let mut e = first;
            let mut found = None;
            while e != NIL {
                let (b, p, id, nx) = self.links[e as usize];
                if (b, p) == key {
                    found = Some(id);
                    break;
                }
                e = nx;
            }
            let id = match found {
                Some(id) => id,
                None => {
                    let id = self.nodes.len() as u32;
                    let entry = self.links.len() as u32;
                    self.links.push((key.0, key.1, id, first));
                    match next {
                        Some(c) => self.before[c as usize] = entry,
                        None => self.last = entry,
                    }
                    self.nodes.push((*s, next));
                    self.before.push(NIL);
                    id
                }
            };
            next = Some(id);
        }
        next.expect("a path has at least one stage")
    }

    /// B(node) = Σ Wb over the stages after it.
    fn after(&self, node: u32) -> f64 {
        self.nodes[node as usize]
            .1
            .map_or(0.0, |c| self.tail[c as usize])
    }

    /// Backward sweep: nodes are created children first, so creation order
    /// is a valid evaluation order. A stage queue at utilisation >= 1 gets
    /// an infinite tail, as does every stage before it on its paths, and
    /// the sweep goes on, so paths that do not pass it (another network's)
    /// keep finite values; the first such queue in creation order is the
    /// returned reason.
    fn solve(&mut self, out: &mut ModelResult) -> Result<Option<Saturation>, SolveError> {
        self.tail = vec![0.0; self.nodes.len()];
        let mut first: Option<Saturation> = None;
        for id in 0..self.nodes.len() {
            let (st, child) = self.nodes[id];
            let b = child.map_or(0.0, |c| self.tail[c as usize]);
            if !b.is_finite() {
                self.tail[id] = f64::INFINITY;
                continue;
            }
            let t = st.shift + b;
            let p = &self.procs[st.proc];
            let rho = p.rate * t;
            out.rho_max = out.rho_max.max(rho);
            if rho >= 1.0 {
                first.get_or_insert_with(|| {
                    format!(
                        "channel utilisation {rho:.4} >= 1 (stage service {t:.4}, arrival rate {:.4e})",
                        p.rate
                    )
                });
                self.tail[id] = f64::INFINITY;
                continue;
            }
            let wb = if p.rate > 0.0 {
                let (wb, clamped) = stage_block(&p.mmpp, st.shift, b)?;
                out.clamped += clamped as u32;
                match wb {
                    Ok(wb) => wb,
                    Err(m) => {
                        first.get_or_insert(m);
                        self.tail[id] = f64::INFINITY;
                        continue;
                    }
                }
            } else {
                0.0
            };
            self.tail[id] = wb + b;
        }
        out.stage_queues = self.nodes.len() as u32;
        Ok(first)
    }

    /// Mean stage-0 service T_0 of a class.
    fn t0(&self, c: &Class) -> f64 {
        self.nodes[c.head as usize].0.shift + self.after(c.head)
    }

    /// The mixture service law of a set of classes (W-12).
    fn mixture(&self, classes: &[Class]) -> Result<Service, SolveError> {
        let tot: f64 = classes.iter().map(|c| c.weight).sum();
        let parts = classes
            .iter()
            .filter(|c| c.weight > 0.0)
            .map(|c| {
                shift_exp(
                    c.weight / tot,
                    self.nodes[c.head as usize].0.shift,
                    self.after(c.head),
                )
            })
            .collect();
        Service::new(parts)
    }
}

/// The blocking wait Wb = Pb·Wc of a stage with service `shift` plus
/// Exp(mean `b`) on process `p` (`Err` with the reason when its queue is
/// unstable), and whether its μ_b was clamped. Memoised ([`QueueMemo`]).
fn stage_block(
    p: &Mmpp2,
    shift: f64,
    b: f64,
) -> Result<(Result<f64, Saturation>, bool), SolveError> {
    let key = [p.phi1, p.phi2, p.lambda1, p.lambda2, shift, b].map(f64::to_bits);
    if let Some(hit) = QueueMemo::lock().stages.get(&key).copied() {
        return Ok((Ok(hit.0), hit.1));
    }
    let (pb, clamped) = blocking_probability(p, shift + b)?;
    let svc = Service::new(vec![shift_exp(1.0, shift, b)])?;
    match mmpp_g1(p, &svc) {
        Ok(q) => {
            let wb = pb * q.w;
            let mut m = QueueMemo::lock();
            if m.stages.len() >= QueueMemo::CAP {
                m.stages.clear();
            }
            m.stages.insert(key, (wb, clamped));
            Ok((Ok(wb), clamped))
        }
        Err(SolveError::Unstable(m)) => Ok((Err(m), clamped)),
        Err(e) => Err(e),
    }
}

/// The mean wait W of the MMPP/G/1 queue of `arr` and `svc`
/// ([`mmpp_g1`]), memoised ([`QueueMemo`]).
fn mmpp_g1_wait(arr: &Mmpp2, svc: &Service) -> Result<f64, SolveError> {
    let mut k = Vec::with_capacity(4 + 3 * svc.parts.len());
    k.extend([arr.phi1, arr.phi2, arr.lambda1, arr.lambda2].map(f64::to_bits));
    for c in &svc.parts {
        // A rate is finite and > 0, so its bits are never all ones.
        let rate = c.rate.map_or(u64::MAX, f64::to_bits);
        k.extend([c.weight.to_bits(), c.shift.to_bits(), rate]);
    }
    if let Some(&w) = QueueMemo::lock().queues.get(&k) {
        return Ok(w);
    }
    let w = mmpp_g1(arr, svc)?.w;
    let mut m = QueueMemo::lock();
    if m.queues.len() >= QueueMemo::CAP {
        m.queues.clear();
    }
    m.queues.insert(k, w);
    Ok(w)
}

/// The results of the queues solved by earlier points of this process, by
/// the exact bits of their inputs: a hit is the number the computation
/// gives, so no outcome depends on what was solved before or by which
/// thread. Process-wide, not per thread: the pipeline runs tasks on a pool
/// of many threads, which a memo per thread would split. Only finished
/// results are kept (an unstable queue is solved again, and a queue being
/// solved by one thread may be solved by another meanwhile, giving the
/// same number); bounded: each map is cleared at [`QueueMemo::CAP`]
/// entries.
#[derive(Default)]
struct QueueMemo {
    /// Stage queues (process, shift, mean blocking) → (Wb, clamped).
    stages: FxHashMap<[u64; 6], (f64, bool)>,
    /// Source and C/D queues (process, service mixture) → W.
    queues: FxHashMap<Vec<u64>, f64>,
}

impl QueueMemo {
    const CAP: usize = 1 << 14;

    fn lock() -> std::sync::MutexGuard<'static, QueueMemo> {
        static MEMO: std::sync::OnceLock<std::sync::Mutex<QueueMemo>> = std::sync::OnceLock::new();
        MEMO.get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// Shift plus an exponential of mean `block` (none when the blocking is 0).
fn shift_exp(weight: f64, shift: f64, block: f64) -> ShiftExp {
    ShiftExp {
        weight,
        shift,
        rate: (block > 1e-14 * shift.max(1e-300)).then(|| 1.0 / block),
    }
}

/// Pb from the four-state chain of W-25: states (idle, phase 1), (idle, 2),
/// (busy, 1), (busy, 2); idle → busy at λ_b, busy → idle at μ_b = 1/T − λ_b,
/// phases by Q. μ_b ≤ 0 is clamped to 1e-9/T (returned flag).
fn blocking_probability(p: &Mmpp2, t: f64) -> Result<(f64, bool), SolveError> {
    let lam = [p.lambda1, p.lambda2];
    let mut clamped = false;
    let mu = lam.map(|l| {
        let m = 1.0 / t - l;
        if m <= 0.0 {
            clamped = true;
            1e-9 / t
        } else {
            m
        }
    });
    let mut g = Generator::new(4);
    for a in 0..2 {
        g.add(2 * a, 2 * a + 1, p.phi1);
        g.add(2 * a + 1, 2 * a, p.phi2);
    }
    for b in 0..2 {
        if lam[b] > 0.0 {
            g.add(b, 2 + b, lam[b]);
        }
        g.add(2 + b, b, mu[b]);
    }
    let pi = g.into_steady_state()?;
    Ok((pi[2] + pi[3], clamped))
}

/// The channel process for load multipliers per origin: for each (source,
/// f), ⌊f⌋ copies plus one copy split by frac(f); superposed and fitted at
/// the W-5 time. No load gives a process of rate 0.
fn channel_process(loads: &[(Mmpp2, f64)]) -> Result<Mmpp2, SolveError> {
    let mut comps = Vec::with_capacity(2 * loads.len());
    for &(src, f) in loads {
        if f.is_nan() || f <= 0.0 || src.mean_rate() <= 0.0 {
            continue;
        }
        let z = f.floor();
        let frac = f - z;
        if z > 0.0 {
            comps.push((src, z));
        }
        if frac > 1e-12 {
            comps.push((src.split(frac), 1.0));
        }
    }
    if comps.is_empty() {
        return Ok(Mmpp2::poisson(0.0));
    }
    Ok(superpose_fit(&comps, None)?.mmpp)
}

/// Fitted processes by their exact inputs. A system of a few cluster types
/// asks for the same fit many times (the ECN process of every ordered pair
/// of same-type clusters, the C/D arrivals of every same-type cluster);
/// each distinct input list is fitted once and the result reused, which is
/// the same number a new fit would give. A point has a few dozen distinct
/// lists at most, so they are found by comparison (hashing the lists cost
/// more than comparing them).
#[derive(Default)]
struct Fits {
    /// (copies rule, the loads' bits, fitted process).
    seen: Vec<(bool, Vec<[u64; 5]>, Mmpp2)>,
    key: Vec<[u64; 5]>,
}

impl Fits {
    fn get(&mut self, copies: bool, loads: &[(Mmpp2, f64)]) -> Result<Mmpp2, SolveError> {
        self.key.clear();
        self.key.extend(
            loads
                .iter()
                .map(|(m, f)| [m.phi1, m.phi2, m.lambda1, m.lambda2, *f].map(f64::to_bits)),
        );
        if let Some((_, _, m)) = self
            .seen
            .iter()
            .find(|(c, k, _)| *c == copies && *k == self.key)
        {
            return Ok(*m);
        }
        let m = if copies {
            copies_process(loads)?
        } else {
            channel_process(loads)?
        };
        self.seen.push((copies, self.key.clone(), m));
        Ok(m)
    }

    /// [`channel_process`] of `loads`.
    fn channel(&mut self, loads: &[(Mmpp2, f64)]) -> Result<Mmpp2, SolveError> {
        self.get(false, loads)
    }

    /// [`copies_process`] of `parts`.
    fn copies(&mut self, parts: &[(Mmpp2, f64)]) -> Result<Mmpp2, SolveError> {
        self.get(true, parts)
    }
}

/// N copies of `src` (whole number, no ⌊f⌋ rule), fitted (C/D arrivals).
fn copies_process(parts: &[(Mmpp2, f64)]) -> Result<Mmpp2, SolveError> {
    let comps: Vec<(Mmpp2, f64)> = parts
        .iter()
        .copied()
        .filter(|(s, n)| *n > 0.0 && s.mean_rate() > 0.0)
        .collect();
    if comps.is_empty() {
        return Ok(Mmpp2::poisson(0.0));
    }
    Ok(superpose_fit(&comps, None)?.mmpp)
}

/// Mean waiting time of an MMPP/G/1 queue, or the saturation reason.
fn queue_wait(
    what: &str,
    arr: &Mmpp2,
    svc: &Service,
    out: &mut ModelResult,
) -> Result<Result<f64, Saturation>, SolveError> {
    let rate = arr.mean_rate();
    if rate <= 0.0 {
        return Ok(Ok(0.0));
    }
    let rho = rate * svc.mean();
    out.rho_max = out.rho_max.max(rho);
    if rho >= 1.0 {
        return Ok(Err(format!("{what} utilisation {rho:.4} >= 1")));
    }
    match mmpp_g1_wait(arr, svc) {
        Ok(w) => Ok(Ok(w)),
        Err(SolveError::Unstable(m)) => Ok(Err(format!("{what}: {m}"))),
        Err(e) => Err(e),
    }
}

/// Distance-class probabilities with locality η (4.7), α by direct
/// summation (W-22); η = 1 gives (4.6). Index 0 unused.
pub fn locality_probs(t: &Tree, eta: f64) -> Vec<f64> {
    let sizes = t.class_sizes();
    let w: Vec<f64> = sizes
        .iter()
        .enumerate()
        .map(|(j, &c)| c as f64 * eta.powi(j as i32))
        .collect();
    let alpha: f64 = w.iter().sum();
    w.iter().map(|x| x / alpha).collect()
}

/// Mean distance Σ 2j P_j (4.8), (4.9), (5.5).
fn mean_distance(p: &[f64]) -> f64 {
    p.iter().enumerate().map(|(j, x)| 2.0 * j as f64 * x).sum()
}

/// Per-network flit times and processes of one inter-cluster path family.
struct InterNets {
    omega: f64,
    e_cs: f64,
    e_cn: f64,
    i_cs: f64,
    src_e: usize,
    dst_e: usize,
    icn: usize,
    map: StageMap,
}

impl InterNets {
    /// The ICN stage range of a path with a source leg of `a` channels and
    /// 2r ICN channels: [a, a + 2r) (W-27/W-36) or one earlier (physical).
    fn icn_range(&self, a: usize, r: usize) -> (usize, usize) {
        match self.map {
            StageMap::W27 => (a, a + 2 * r),
            StageMap::Physical => (a - 1, a + 2 * r - 1),
        }
    }
    /// Stages of an (a, r, u) path: K = a + 2r + u − 1 (4.27, 5.17).
    fn stages(&self, a: usize, r: usize, u: usize) -> (Vec<Stage>, f64) {
        let k_n = a + 2 * r + u - 1;
        let (lo, hi) = self.icn_range(a, r);
        let mut v = Vec::with_capacity(k_n);
        for k in 0..k_n {
            let st = if k == k_n - 1 {
                Stage {
                    shift: self.omega * self.e_cn,
                    proc: self.dst_e,
                }
            } else if (lo..hi).contains(&k) {
                Stage {
                    shift: self.omega * self.i_cs,
                    proc: self.icn,
                }
            } else if k < lo {
                Stage {
                    shift: self.omega * self.e_cs,
                    proc: self.src_e,
                }
            } else {
                Stage {
                    shift: self.omega * self.e_cs,
                    proc: self.dst_e,
                }
            };
            v.push(st);
        }
        // τ_out from (4.26): Σ_{k=1}^{K−1} t_cs^k + t_cn^E under the W-27 map,
        // i.e. the flit times of the physical links after the injection
        // channel: (a − 1) + (u − 1) ECN switch links, 2r ICN links and the
        // final node link. The same under `physical` (the tail is a property
        // of the links, not of the stage numbering; mcref D-4).
        let tau = (a + u - 2) as f64 * self.e_cs + 2.0 * r as f64 * self.i_cs + self.e_cn;
        (v, tau)
    }
}

/// Intra-cluster classes 2j, j = 1..=n: K = 2j − 1 stages (4.14), (4.16).
fn intra_classes(
    ch: &mut Chains,
    probs: &[f64],
    omega: f64,
    t_cs: f64,
    t_cn: f64,
    proc: usize,
) -> Vec<Class> {
    let mut out = Vec::with_capacity(probs.len());
    for (j, &w) in probs.iter().enumerate().skip(1) {
        if w <= 0.0 {
            continue;
        }
        let k_n = 2 * j - 1;
        let mut st = vec![
            Stage {
                shift: omega * t_cs,
                proc
            };
            k_n
        ];
        st[k_n - 1].shift = omega * t_cn;
        let head = ch.path(&st);
        out.push(Class {
            weight: w,
            head,
            tau: (k_n - 1) as f64 * t_cs + t_cn,
        });
    }
    out
}

fn mean_of(ch: &Chains, cl: &[Class], f: impl Fn(&Chains, &Class) -> f64) -> f64 {
    let tot: f64 = cl.iter().map(|c| c.weight).sum();
    cl.iter().map(|c| c.weight * f(ch, c)).sum::<f64>() / tot
}

macro_rules! sat {
    ($e:expr) => {
        match $e? {
            Ok(x) => x,
            Err(why) => return Ok(Err(why)),
        }
    };
}

/// Solves the model. `Ok(Err(..))` is a saturated point, with the metrics
/// that stay finite there.
pub fn solve(sys: &System) -> Result<Result<ModelResult, Saturated>, SolveError> {
    let mut defined = Vec::new();
    let r = match sys.locality {
        Locality::Ch4 { xi, eta_in } => solve_ch4(sys, xi, eta_in, &mut defined)?,
        Locality::Ch5 => solve_ch5(sys, &mut defined)?,
    };
    Ok(r.map_err(|why| Saturated { why, defined }))
}

/// The intra-cluster metrics of a point (`Saturated::defined`).
fn intra_metrics(t_in: f64, w_in: f64, tau_in: f64) -> Vec<(&'static str, f64)> {
    vec![
        ("latency_in", t_in + w_in + tau_in),
        ("T_in", t_in),
        ("W_in", w_in),
        ("tau_in", tau_in),
        ("net_in", t_in + tau_in),
    ]
}

fn channel_factor(sys: &System) -> f64 {
    match sys.variants.channels {
        Channels::Printed => 4.0,
        Channels::Derived => 2.0,
    }
}

fn ecn_factor(sys: &System) -> f64 {
    match sys.variants.ecn_num {
        EcnNum::Printed => 1.0,
        EcnNum::Single => 0.5,
    }
}

fn solve_ch4(
    sys: &System,
    xi: f64,
    eta_in: f64,
    defined: &mut Vec<(&'static str, f64)>,
) -> Result<Result<ModelResult, Saturation>, SolveError> {
    let mut out = ModelResult::default();
    let cl = &sys.clusters[0];
    let (n, nc) = (cl.tree.n as f64, sys.icn_tree.n as f64);
    let omega = sys.omega as f64;
    let src = sys.node_source(0);
    let cc = channel_factor(sys);
    let p_in = locality_probs(&cl.tree, eta_in);
    let p_e = cl.tree.distance_probs();
    let p_i = sys.icn_tree.distance_probs();
    let (d_in, d_e, d_i) = (
        mean_distance(&p_in),
        mean_distance(&p_e),
        mean_distance(&p_i),
    );
    // (4.10)–(4.12).
    let f_a = (1.0 - xi) * d_in / (cc * n);
    let f_e = 2.0 * ecn_factor(sys) * xi * d_e / (cc * n);
    let f_i = cl.nodes as f64 * xi * d_i / (cc * nc);
    let mut ch = Chains::new();
    let ca = ch.add_proc(channel_process(&[(src, f_a)])?);
    let ce = ch.add_proc(channel_process(&[(src, f_e)])?);
    let ci = ch.add_proc(channel_process(&[(src, f_i)])?);
    let a = cl.acn.times;
    let intra = intra_classes(&mut ch, &p_in, omega, a.t_cs, a.t_cn, ca);
    let nets = InterNets {
        omega,
        e_cs: sys.ecn.times.t_cs,
        e_cn: sys.ecn.times.t_cn,
        i_cs: sys.icn.times.t_cs,
        src_e: ce,
        dst_e: ce,
        icn: ci,
        map: sys.variants.stage_map,
    };
    let mut inter = Vec::new();
    for (p, &pp) in p_e.iter().enumerate().skip(1) {
        for (q, &pq) in p_i.iter().enumerate().skip(1) {
            if pp * pq <= 0.0 {
                continue;
            }
            let (st, tau) = nets.stages(p, q, p);
            inter.push(Class {
                weight: pp * pq,
                head: ch.path(&st),
                tau,
            });
        }
    }
    let net_sat = ch.solve(&mut out)?;
    let t_in = mean_of(&ch, &intra, Chains::t0);
    let tau_in = mean_of(&ch, &intra, |_, c| c.tau);
    // (4.25): MMPP_sA = MMPP_s split by 1 − ξ; W_out's arrivals split by ξ.
    // The intra-cluster part first: it stays defined when only the
    // inter-cluster networks saturate (issue 31 item 4).
    let w_in = if t_in.is_finite() {
        queue_wait(
            "ACN source queue",
            &src.split(1.0 - xi),
            &ch.mixture(&intra)?,
            &mut out,
        )?
    } else {
        Err(String::new())
    };
    if let Ok(w) = w_in {
        *defined = intra_metrics(t_in, w, tau_in);
    }
    if let Some(why) = net_sat {
        return Ok(Err(why));
    }
    let w_in = sat!(Ok::<_, SolveError>(w_in));
    let t_out = mean_of(&ch, &inter, Chains::t0);
    let tau_out = mean_of(&ch, &inter, |_, c| c.tau);
    let w_out = sat!(queue_wait(
        "ECN source queue",
        &src.split(xi),
        &ch.mixture(&inter)?,
        &mut out
    ));
    // C/D (W-29): N copies of MMPP_s split by ξ (derived) or MMPP_cI.
    let cd_arr = match sys.variants.cd {
        Cd::Derived => copies_process(&[(src.split(xi), cl.nodes as f64)])?,
        Cd::Printed => ch.procs[ci].mmpp,
    };
    let cd_svc = Service::deterministic(omega * sys.icn.times.t_cs);
    let w_c = sat!(queue_wait("concentrator", &cd_arr, &cd_svc, &mut out));
    let w_d = w_c;
    let lat_in = t_in + w_in + tau_in;
    let lat_out = t_out + w_out + w_c + w_d + tau_out;
    out.latency = (1.0 - xi) * lat_in + xi * lat_out;
    out.latency_in = lat_in;
    out.latency_out = lat_out;
    out.w_c = w_c;
    out.w_d = w_d;
    out.parts = vec![
        ("T_in", t_in),
        ("W_in", w_in),
        ("tau_in", tau_in),
        ("T_out", t_out),
        ("W_out", w_out),
        ("tau_out", tau_out),
        ("net_in", t_in + tau_in),
        ("net_out", t_out + tau_out),
        ("f_A", f_a),
        ("f_E", f_e),
        ("f_I", f_i),
        ("d_in", d_in),
    ];
    Ok(Ok(out))
}

fn solve_ch5(
    sys: &System,
    defined: &mut Vec<(&'static str, f64)>,
) -> Result<Result<ModelResult, Saturation>, SolveError> {
    let mut out = ModelResult::default();
    let c = sys.num_clusters();
    let omega = sys.omega as f64;
    let cc = channel_factor(sys);
    let ef = ecn_factor(sys);
    let n_tot = sys.total_nodes() as f64;
    let nn: Vec<f64> = sys.clusters.iter().map(|k| k.nodes as f64).collect();
    let xi: Vec<f64> = (0..c).map(|i| sys.xi(i)).collect();
    let src: Vec<Mmpp2> = (0..c).map(|i| sys.node_source(i)).collect();
    let probs: Vec<Vec<f64>> = sys
        .clusters
        .iter()
        .map(|k| k.tree.distance_probs())
        .collect();
    let d: Vec<f64> = probs.iter().map(|p| mean_distance(p)).collect();
    let p_c = sys.icn_tree.distance_probs();
    let d_c = mean_distance(&p_c);
    let nc = sys.icn_tree.n as f64;
    let mut ch = Chains::new();
    let mut fits = Fits::default();
    // (5.7): ACN_i.
    let ca: Vec<usize> = (0..c)
        .map(|i| {
            let f = d[i] * (1.0 - xi[i]) / (cc * sys.clusters[i].tree.n as f64);
            Ok(ch.add_proc(fits.channel(&[(src[i], f)])?))
        })
        .collect::<Result<_, SolveError>>()?;
    // (5.8): ECN_i towards v; the inflow term printed (N_v ξ_v) or derived
    // (W-34: what actually enters cluster i under uniform destinations).
    let mut ce = vec![vec![usize::MAX; c]; c];
    // One list of loads, refilled for each pair (it has at most c entries).
    let mut loads = Vec::with_capacity(c);
    for i in 0..c {
        let den = cc * sys.clusters[i].tree.n as f64 * nn[i];
        for v in 0..c {
            if v == i {
                continue;
            }
            loads.clear();
            loads.push((src[i], ef * nn[i] * xi[i] * d[i] / den));
            match sys.variants.inflow {
                Reading::Printed => loads.push((src[v], ef * nn[v] * xi[v] * d[i] / den)),
                Reading::Derived => {
                    for u in (0..c).filter(|&u| u != i) {
                        loads.push((src[u], ef * nn[u] * nn[i] / (n_tot - 1.0) * d[i] / den));
                    }
                }
            }
            ce[i][v] = ch.add_proc(fits.channel(&loads)?);
        }
    }
    // (5.9): the ICN.
    let ci_loads: Vec<(Mmpp2, f64)> = (0..c)
        .map(|i| (src[i], nn[i] * xi[i] * d_c / (cc * nc * c as f64)))
        .collect();
    let ci = ch.add_proc(fits.channel(&ci_loads)?);
    let mut intra = Vec::with_capacity(c);
    for i in 0..c {
        let t = sys.clusters[i].acn.times;
        intra.push(intra_classes(
            &mut ch, &probs[i], omega, t.t_cs, t.t_cn, ca[i],
        ));
    }
    // Path classes per ordered pair; pairs with the same processes and trees
    // (identical clusters) share one class list.
    let mut uniq: Vec<Vec<Class>> = Vec::new();
    // Found by comparison: a system has a few distinct keys (a hash map's
    // hashing cost more than the scans).
    let mut uniq_key: Vec<((usize, usize, Tree, Tree), usize)> = Vec::new();
    let mut inter = vec![vec![usize::MAX; c]; c];
    for i in 0..c {
        for v in (0..c).filter(|&v| v != i) {
            let nets = InterNets {
                omega,
                e_cs: sys.ecn.times.t_cs,
                e_cn: sys.ecn.times.t_cn,
                i_cs: sys.icn.times.t_cs,
                src_e: ce[i][v],
                dst_e: match sys.variants.ecn_leg2 {
                    EcnLeg2::Path => ce[i][v],
                    EcnLeg2::Own => ce[v][i],
                },
                icn: ci,
                map: sys.variants.stage_map,
            };
            let key = (
                nets.src_e,
                nets.dst_e,
                sys.clusters[i].tree,
                sys.clusters[v].tree,
            );
            if let Some(&(_, k)) = uniq_key.iter().find(|(x, _)| *x == key) {
                inter[i][v] = k;
                continue;
            }
            let mut cls = Vec::with_capacity(probs[i].len() * p_c.len() * probs[v].len());
            for (a, &pa) in probs[i].iter().enumerate().skip(1) {
                for (r, &pr) in p_c.iter().enumerate().skip(1) {
                    for (u, &pu) in probs[v].iter().enumerate().skip(1) {
                        let w = pa * pr * pu;
                        if w <= 0.0 {
                            continue;
                        }
                        let (st, tau) = nets.stages(a, r, u);
                        cls.push(Class {
                            weight: w,
                            head: ch.path(&st),
                            tau,
                        });
                    }
                }
            }
            uniq.push(cls);
            uniq_key.push((key, uniq.len() - 1));
            inter[i][v] = uniq.len() - 1;
        }
    }
    let net_sat = ch.solve(&mut out)?;
    // The intra-cluster part of every cluster first: it stays defined when
    // only the inter-cluster networks saturate (issue 31 item 4). Its
    // saturation reasons are reported where they were before (below).
    let mut intra_part = Vec::with_capacity(c);
    for i in 0..c {
        let t_in = mean_of(&ch, &intra[i], Chains::t0);
        let r_in = mean_of(&ch, &intra[i], |_, c| c.tau);
        let w_in = if t_in.is_finite() {
            queue_wait(
                &format!("ACN source queue of cluster {i}"),
                &src[i].split(1.0 - xi[i]),
                &ch.mixture(&intra[i])?,
                &mut out,
            )?
        } else {
            Err(String::new())
        };
        intra_part.push((t_in, w_in, r_in));
    }
    if intra_part.iter().all(|(_, w, _)| w.is_ok()) {
        let wt: f64 = (0..c).map(|i| nn[i] * (1.0 - xi[i])).sum();
        let avg = |f: &dyn Fn(f64, f64, f64) -> f64| {
            (0..c)
                .map(|i| {
                    let (t, w, r) = &intra_part[i];
                    nn[i] * (1.0 - xi[i]) * f(*t, *w.as_ref().unwrap(), *r)
                })
                .sum::<f64>()
                / wt
        };
        *defined = intra_metrics(avg(&|t, _, _| t), avg(&|_, w, _| w), avg(&|_, _, r| r));
    }
    if let Some(why) = net_sat {
        return Ok(Err(why));
    }
    // Destination weights (5.20): 1/(C − 1) printed, N_v/(N_tot − N_i) derived (W-37).
    let weight = |i: usize, v: usize| match sys.variants.weights {
        Reading::Printed => 1.0 / (c as f64 - 1.0),
        Reading::Derived => nn[v] / (n_tot - nn[i]),
    };
    let cd_svc = Service::deterministic(omega * sys.icn.times.t_cs);
    // Concentrators and dispatchers (W-29, W-38).
    let mut w_c = vec![0.0; c];
    let mut w_d_in = vec![0.0; c];
    for i in 0..c {
        let conc = match sys.variants.cd {
            Cd::Derived => fits.copies(&[(src[i].split(xi[i]), nn[i])])?,
            Cd::Printed => ch.procs[ci].mmpp,
        };
        w_c[i] = sat!(queue_wait(
            &format!("concentrator of cluster {i}"),
            &conc,
            &cd_svc,
            &mut out
        ));
        let disp = match (sys.variants.cd, sys.variants.dispatcher) {
            (Cd::Printed, _) => ch.procs[ci].mmpp,
            (Cd::Derived, Dispatcher::Same) => conc,
            (Cd::Derived, _) => {
                let parts: Vec<(Mmpp2, f64)> = (0..c)
                    .filter(|&u| u != i)
                    .map(|u| (src[u].split(nn[i] / (n_tot - 1.0)), nn[u]))
                    .collect();
                fits.copies(&parts)?
            }
        };
        w_d_in[i] = sat!(queue_wait(
            &format!("dispatcher of cluster {i}"),
            &disp,
            &cd_svc,
            &mut out
        ));
    }
    let w_d: Vec<f64> = (0..c)
        .map(|i| match (sys.variants.cd, sys.variants.dispatcher) {
            (Cd::Derived, Dispatcher::Dest) => (0..c)
                .filter(|&v| v != i)
                .map(|v| weight(i, v) * w_d_in[v])
                .sum(),
            _ => w_d_in[i],
        })
        .collect();
    let mut lat = vec![0.0; c];
    // (T + R, W) of each distinct pair's inter-cluster part.
    // (As `uniq_key`, found by comparison: the class list and the bits of
    // the arrival process, with (T + R, W).)
    type PairKey = (usize, [u64; 4]);
    let mut pair_memo: Vec<(PairKey, (f64, f64))> = Vec::new();
    let (mut sum_in, mut wt_in, mut sum_out, mut wt_out) = (0.0, 0.0, 0.0, 0.0);
    let (mut sum_wc, mut sum_wd) = (0.0, 0.0);
    let (mut sum_w_in, mut sum_net_in, mut sum_w_out, mut sum_net_out) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..c {
        let (t_in, w_in, r_in) = intra_part[i].clone();
        let w_in = sat!(Ok::<_, SolveError>(w_in));
        let lat_in = t_in + w_in + r_in;
        let (mut net_out, mut w_out_i) = (0.0, 0.0);
        let mut lat_out = 0.0;
        for v in (0..c).filter(|&v| v != i) {
            let k = inter[i][v];
            let arr = src[i].split(xi[i]);
            let key = (
                k,
                [arr.phi1, arr.phi2, arr.lambda1, arr.lambda2].map(f64::to_bits),
            );
            let (net, w_out) = match pair_memo.iter().find(|(x, _)| *x == key) {
                Some(&(_, x)) => x,
                None => {
                    let cls = &uniq[k];
                    let t_out = mean_of(&ch, cls, Chains::t0);
                    let r_out = mean_of(&ch, cls, |_, c| c.tau);
                    let w_out = sat!(queue_wait(
                        &format!("ECN source queue of cluster {i} towards {v}"),
                        &arr,
                        &ch.mixture(cls)?,
                        &mut out
                    ));
                    pair_memo.push((key, (t_out + r_out, w_out)));
                    (t_out + r_out, w_out)
                }
            };
            lat_out += weight(i, v) * (net + w_out);
            net_out += weight(i, v) * net;
            w_out_i += weight(i, v) * w_out;
        }
        // (5.21).
        lat[i] = (1.0 - xi[i]) * lat_in + xi[i] * (lat_out + w_c[i] + w_d[i]);
        sum_in += nn[i] * (1.0 - xi[i]) * lat_in;
        wt_in += nn[i] * (1.0 - xi[i]);
        sum_out += nn[i] * xi[i] * (lat_out + w_c[i] + w_d[i]);
        sum_wc += nn[i] * xi[i] * w_c[i];
        sum_wd += nn[i] * xi[i] * w_d[i];
        wt_out += nn[i] * xi[i];
        sum_w_in += nn[i] * (1.0 - xi[i]) * w_in;
        sum_net_in += nn[i] * (1.0 - xi[i]) * (t_in + r_in);
        sum_w_out += nn[i] * xi[i] * w_out_i;
        sum_net_out += nn[i] * xi[i] * net_out;
    }
    // (5.22).
    out.latency = (0..c).map(|i| nn[i] * lat[i]).sum::<f64>() / n_tot;
    out.latency_in = sum_in / wt_in;
    out.latency_out = sum_out / wt_out;
    out.w_c = sum_wc / wt_out;
    out.w_d = sum_wd / wt_out;
    out.per_cluster = lat;
    out.parts = vec![
        ("d_c", d_c),
        ("W_in", sum_w_in / wt_in),
        ("net_in", sum_net_in / wt_in),
        ("W_out", sum_w_out / wt_out),
        ("net_out", sum_net_out / wt_out),
    ];
    Ok(Ok(out))
}
