//! Gran & Reinemo (2011): InfiniBand congestion control on a two-switch test
//! bed (catalogue §2, errata G-1..G-6; docs/models/ibcc.md).
//!
//! `ibcc.sim` runs the packet-level engine (`engines/ibnet`) with the IBA CC
//! plug-in or none; `ibcc.fluid` is the per-interval fluid prediction of the
//! catalogue (round robin and head-of-line coupling with CC off, max-min fair
//! shares with CC on). Both take the same parameters and report
//! `thr_F<k>_<j>` (mean payload Gbit/s of flow k over interval j, from
//! j·interval + 0.1·interval to (j+1)·interval) and `share_F<k>` (fraction of
//! the contributors' throughput in the last interval).

use crate::engines::ibnet::cc::{IbaCc, ThresholdMapping};
use crate::engines::ibnet::topology::{folded_clos, gran_testbed, RouteSpec};
use crate::engines::ibnet::{
    Dest, Fabric, Flow, LinkSpec, NodeRef, Scenario, Topology, VlArbEntry, VlArbitration,
};
use crate::params::{non_negative, positive, show};
use crate::{ParamDoc, Registry, SolveError};
use serde::Deserialize;

mod fluid;
mod sim;

pub use sim::{bench_run, bench_scenario, solve_counting, BENCH_CC};

pub fn register(r: &mut Registry) {
    r.add(sim::IbccSim);
    r.add(fluid::IbccFluid);
}

/// One flow of a custom flow list: 1-based host numbers (H1 = 1), start in
/// intervals, service level (default 0).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    src: f64,
    dst: f64,
    start: f64,
    #[serde(default)]
    sl: Option<f64>,
}

/// IBA VL arbitration tables (the `vl_arbitration` parameter).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVlArb {
    #[serde(default)]
    high: Vec<RawVlArbEntry>,
    #[serde(default)]
    low: Vec<RawVlArbEntry>,
    #[serde(default)]
    high_limit: Option<f64>,
}

/// One table entry: a data VL and its weight in 64-byte units.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVlArbEntry {
    vl: f64,
    weight: f64,
}

impl RawVlArb {
    /// Checks the tables against IBA's bounds (64 entries, weights 0..255,
    /// limit 0..255), the data VLs, and that every VL a flow uses has an
    /// entry with weight (otherwise its flows could never leave).
    fn build(&self, vls: u8, flow_vls: &[u8]) -> Result<VlArbitration, SolveError> {
        let table = |name: &str, t: &[RawVlArbEntry]| -> Result<Vec<VlArbEntry>, SolveError> {
            if t.len() > 64 {
                return Err(SolveError::param(
                    &format!("vl_arbitration.{name}"),
                    format!("has {} entries; IBA allows at most 64", t.len()),
                ));
            }
            t.iter()
                .map(|e| {
                    let vl = whole(
                        &format!("vl_arbitration.{name}.vl"),
                        e.vl,
                        0.0,
                        vls as f64 - 1.0,
                    )? as u8;
                    let weight = whole(
                        &format!("vl_arbitration.{name}.weight"),
                        e.weight,
                        0.0,
                        255.0,
                    )? as u8;
                    Ok(VlArbEntry { vl, weight })
                })
                .collect()
        };
        let high = table("high", &self.high)?;
        let low = table("low", &self.low)?;
        let high_limit = whole(
            "vl_arbitration.high_limit",
            self.high_limit.unwrap_or(0.0),
            0.0,
            255.0,
        )? as u8;
        for &vl in flow_vls {
            if !high.iter().chain(&low).any(|e| e.vl == vl && e.weight > 0) {
                return Err(SolveError::param(
                    "vl_arbitration",
                    format!("VL {vl} carries a flow but has no table entry with weight > 0 (its packets could never be sent)"),
                ));
            }
        }
        Ok(VlArbitration {
            high,
            low,
            high_limit,
        })
    }
}

/// A topology description (the `topology` parameter given as an object).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    hosts: f64,
    switches: f64,
    links: Vec<RawLink>,
    #[serde(default)]
    routes: Vec<RawRoute>,
}

/// A full-duplex link between two nodes named `H<n>` / `S<n>` (1-based).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    a: String,
    b: String,
    /// Effective data rate, Gbit/s of packet bytes.
    gbps: f64,
    #[serde(default)]
    latency_ns: Option<f64>,
}

/// A forwarding-table entry replacing the computed one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    switch: String,
    dst: String,
    next: String,
}

/// The calibrated test bed (docs/models/ibcc.md, "Calibration"): the values
/// `experiments/gran-s1.yaml` and `gran-s2.yaml` run with, so that a scenario
/// solved by hand with these parameters omitted is the paper's system
/// (scenario 2, CC off: 11.4 Gbit/s per flow). `gran-calibration.yaml` keeps
/// sweeping the last two; a test checks these equal the manifests' values.
pub const DEFAULT_END_NODE_GBPS: f64 = 13.37;
pub const DEFAULT_S1S2_GBPS: f64 = 34.63;
pub const DEFAULT_CCTI_TIMER: f64 = 20.0;
pub const DEFAULT_CCT_STEP_NS: f64 = 40.0;

/// Largest described fabric (keeps routing, deadlock check and VoQ arrays bounded).
const MAX_HOSTS: u32 = 4096;
const MAX_SWITCHES: u32 = 1024;
const MAX_LINKS: usize = 20_000;

/// `H3` -> Host(2), `S1` -> Switch(0); checked against the sizes.
fn node(field: &str, name: &str, hosts: u32, switches: u32) -> Result<NodeRef, SolveError> {
    let bad = || {
        SolveError::param(
            field,
            format!("`{name}` is not a node name (H<n> for hosts, S<n> for switches, from 1)"),
        )
    };
    let (kind, num) = name.split_at(name.len().min(1));
    let n: u32 = num.parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(bad());
    }
    match kind {
        "H" if n <= hosts => Ok(NodeRef::Host(n - 1)),
        "S" if n <= switches => Ok(NodeRef::Switch(n - 1)),
        "H" => Err(SolveError::param(
            field,
            format!("host {name} does not exist (hosts = {hosts})"),
        )),
        "S" => Err(SolveError::param(
            field,
            format!("switch {name} does not exist (switches = {switches})"),
        )),
        _ => Err(bad()),
    }
}

impl RawTopology {
    fn build(&self, default_latency: f64) -> Result<Topology, SolveError> {
        let hosts = whole("topology.hosts", self.hosts, 1.0, MAX_HOSTS as f64)?;
        let switches = whole("topology.switches", self.switches, 1.0, MAX_SWITCHES as f64)?;
        if self.links.is_empty() || self.links.len() > MAX_LINKS {
            return Err(SolveError::param(
                "topology.links",
                format!("between 1 and {MAX_LINKS} links"),
            ));
        }
        let mut links = Vec::with_capacity(self.links.len());
        for l in &self.links {
            let a = node("topology.links.a", &l.a, hosts, switches)?;
            let b = node("topology.links.b", &l.b, hosts, switches)?;
            let gbps = gbps("topology.links.gbps", l.gbps)?;
            let lat = match l.latency_ns {
                Some(x) => non_negative("topology.links.latency_ns", x)? * 1e-9,
                None => default_latency,
            };
            links.push(LinkSpec {
                a,
                b,
                rate_bps: gbps * 1e9,
                latency: lat,
            });
        }
        let mut routes = Vec::with_capacity(self.routes.len());
        for r in &self.routes {
            let NodeRef::Switch(sw) = node("topology.routes.switch", &r.switch, hosts, switches)?
            else {
                return Err(SolveError::param(
                    "topology.routes.switch",
                    format!("`{}` is not a switch", r.switch),
                ));
            };
            let NodeRef::Host(dst) = node("topology.routes.dst", &r.dst, hosts, switches)? else {
                return Err(SolveError::param(
                    "topology.routes.dst",
                    format!("`{}` is not a host", r.dst),
                ));
            };
            let next = node("topology.routes.next", &r.next, hosts, switches)?;
            routes.push(RouteSpec {
                switch: sw,
                dst,
                next,
            });
        }
        Ok(Topology {
            hosts,
            switches,
            links,
            routes,
        })
    }
}

/// Parameters shared by `ibcc.sim` and `ibcc.fluid`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawParams {
    /// A name (`gran`, `clos648`) or a description object (`RawTopology`).
    #[serde(default)]
    topology: Option<serde_json::Value>,
    #[serde(default)]
    vls: Option<f64>,
    #[serde(default)]
    vl_arbitration: Option<RawVlArb>,
    #[serde(default)]
    scenario: Option<f64>,
    #[serde(default)]
    flows: Option<Vec<RawFlow>>,
    #[serde(default)]
    cc: bool,
    #[serde(default)]
    interval: Option<f64>,
    #[serde(default)]
    intervals: Option<f64>,
    #[serde(default)]
    bin: Option<f64>,
    #[serde(default)]
    host_gbps: Option<f64>,
    #[serde(default)]
    s1s2_gbps: Option<f64>,
    #[serde(default)]
    end_node_gbps: Option<f64>,
    #[serde(default)]
    link_latency_ns: Option<f64>,
    #[serde(default)]
    switch_latency_ns: Option<f64>,
    #[serde(default)]
    buffer_kb: Option<f64>,
    #[serde(default)]
    mtu: Option<f64>,
    #[serde(default)]
    store_and_forward: bool,
    #[serde(default)]
    threshold: Option<f64>,
    #[serde(default)]
    threshold_mapping: Option<String>,
    #[serde(default)]
    marking_rate: Option<f64>,
    #[serde(default)]
    packet_size: Option<f64>,
    #[serde(default)]
    victim_mask: Option<bool>,
    #[serde(default)]
    ccti_increase: Option<f64>,
    #[serde(default)]
    ccti_limit: Option<f64>,
    #[serde(default)]
    ccti_min: Option<f64>,
    #[serde(default)]
    ccti_timer: Option<f64>,
    #[serde(default)]
    cct: Option<Vec<f64>>,
    #[serde(default)]
    cct_step_ns: Option<f64>,
    #[serde(default)]
    cc_level: Option<String>,
    #[serde(default)]
    pace_jitter: Option<f64>,
}

pub(crate) fn param_docs() -> Vec<ParamDoc> {
    let d = |name, doc| ParamDoc { name, doc };
    vec![
        d("topology", "`gran` (the two-switch test bed, default), `clos648` (3-stage folded Clos of 36-port switches, every link at host_gbps) or a description {hosts, switches, links: [{a, b, gbps, latency_ns?}], routes?: [{switch, dst, next}]} with nodes named H<n>/S<n> from 1; shortest-path d-mod-k routes unless overridden; routes that cannot reach or can deadlock are refused"),
        d("vls", "data virtual lanes (1..15, default 1); a flow's VL is its SL mod vls"),
        d("vl_arbitration", "IBA VL arbitration tables at every output: {high: [{vl, weight}], low: [{vl, weight}], high_limit} (IBA 1.2.1 §7.6.9: at most 64 entries each, weight 0..255 in 64-byte units, an entry sending whole packets while weight is left; high_limit 0..255 in 4096-byte units, 255 unbounded, 0 one packet, default 0); every VL with a flow needs an entry of weight > 0. Default: round robin over the VLs, one packet each (OpenSM's default low table with 2 KB packets), and a lottery among an HCA's flows; given, HCAs pick the VL by the tables too"),
        d("scenario", "1 (victim F1 + contributors F2..F5 to H5) or 2 (three flows over S1-S2), on `gran` only; or give `flows`"),
        d("flows", "custom flows: list of {src, dst, start, sl?} with 1-based host numbers, start in intervals, SL 0..15 (default 0)"),
        d("cc", "IBA congestion control on (true) or off (false, default)"),
        d("interval", "seconds between flow starts (default 1.0; the quick profile uses 0.05)"),
        d("intervals", "number of intervals simulated (default 6 for scenario 1, 4 for scenario 2)"),
        d("bin", "throughput series bin in seconds (default interval/100: 10 ms at 1 s)"),
        d("host_gbps", "host link data rate, Gbit/s (default 16: 4x DDR after 8b/10b)"),
        d("s1s2_gbps", "S1-S2 effective data rate, Gbit/s of packet bytes (default 34.63 = 3 x 11.4 Gbit/s of payload, the calibrated value of the gran manifests, erratum G-1; 4x QDR after 8b/10b would be 32)"),
        d("end_node_gbps", "end-node injection and sink cap (PCIe), Gbit/s of packet bytes (default 13.37 = 13.2 of payload, the calibrated value of the gran manifests; G-4)"),
        d("link_latency_ns", "propagation latency per link (default 100 ns)"),
        d("switch_latency_ns", "switch forwarding latency (default 200 ns)"),
        d("buffer_kb", "input buffer per VL per port in KiB (default 32; credits in 64-byte blocks)"),
        d("mtu", "payload bytes per packet (default 2048; 26 header bytes are added)"),
        d("store_and_forward", "store-and-forward switching instead of virtual cut-through (default false)"),
        d("threshold", "cc_sw_cong_setting_threshold: 0 (never mark) .. 15 (lowest threshold); default 15"),
        d("threshold_mapping", "per_voq (default), sum or sum_per_contributor (Gran §3.2.1)"),
        d("marking_rate", "cc_sw_cong_setting_marking_rate: eligible packets between marks (default 0: all)"),
        d("packet_size", "cc_sw_cong_setting_packet_size: smallest packet marked, in 64-byte blocks (default 0)"),
        d("victim_mask", "cc_sw_cong_setting_victim_mask on switch ports facing HCAs (default true)"),
        d("ccti_increase", "cc_ca_cong_setting_ccti_increase (default 1)"),
        d("ccti_limit", "CCTI_Limit, highest CCT index used (default 127)"),
        d("ccti_min", "cc_ca_cong_setting_ccti_min (default 0)"),
        d("ccti_timer", "cc_ca_cong_setting_ccti_timer in units of 1.024 us (default 20, chosen by experiments/gran-calibration.yaml; G-3: the paper does not give it)"),
        d("cct", "congestion control table: inter-packet delays in ns, at least 128 entries and ccti_limit + 1"),
        d("cct_step_ns", "when `cct` is absent: linear CCT, IRD(i) = i * cct_step_ns (default 40 ns, chosen by experiments/gran-calibration.yaml; G-3)"),
        d("cc_level", "qp (default) or sl: CCTI per queue pair or per service level"),
        d("pace_jitter", "relative spread of the HCA's pacing interval, uniform with the mean kept (default 0.02; 0 = fully deterministic)"),
    ]
}

/// Which flows count as contributors for `share_F<k>`.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub scenario: Scenario,
    pub cc: Option<IbaCc>,
    pub interval: f64,
    pub intervals: usize,
    /// Flows (0-based) whose shares are reported.
    pub contributors: Vec<usize>,
    /// The fabric is Gran's test bed (the CC-off fluid model needs it).
    pub gran: bool,
    /// Payload bytes per packet byte (MTU / (MTU + header)).
    pub payload: f64,
    /// Host and S1-S2 data rates and end-node cap in Gbit/s of payload (fluid model).
    pub payload_host: f64,
    pub payload_s12: f64,
    pub payload_cap: f64,
    /// Source and destination host of each flow (0-based).
    pub pairs: Vec<(u32, u32)>,
}

const HEADER: u32 = 26;

/// (source, destination, start in intervals, SL) of one flow, 0-based hosts.
type FlowRow = (u32, u32, f64, u8);

/// Fastest link or end-node rate accepted, Gbit/s: far above any InfiniBand
/// link (a 4x NDR link carries 400), low enough that rates in bytes per
/// second and the work bound stay finite.
const MAX_GBPS: f64 = 1e5;

/// A data rate in Gbit/s: finite, > 0 and at most [`MAX_GBPS`].
fn gbps(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || x <= 0.0 || x > MAX_GBPS {
        return Err(SolveError::param(
            name,
            format!(
                "must be a rate > 0 and <= {MAX_GBPS:.0} Gbit/s, got {}",
                show(x)
            ),
        ));
    }
    Ok(x)
}

fn whole(name: &str, x: f64, lo: f64, hi: f64) -> Result<u32, SolveError> {
    if !x.is_finite() || x.fract() != 0.0 || x < lo || x > hi {
        return Err(SolveError::param(
            name,
            format!("must be a whole number in {lo}..={hi}, got {}", show(x)),
        ));
    }
    Ok(x as u32)
}

impl RawParams {
    pub(crate) fn validate(&self) -> Result<Setup, SolveError> {
        let interval = positive("interval", self.interval.unwrap_or(1.0))?;
        let host = gbps("host_gbps", self.host_gbps.unwrap_or(16.0))?;
        let s12 = gbps("s1s2_gbps", self.s1s2_gbps.unwrap_or(DEFAULT_S1S2_GBPS))?;
        let cap = gbps(
            "end_node_gbps",
            self.end_node_gbps.unwrap_or(DEFAULT_END_NODE_GBPS),
        )?;
        let lat = non_negative("link_latency_ns", self.link_latency_ns.unwrap_or(100.0))? * 1e-9;
        let vls = whole("vls", self.vls.unwrap_or(1.0), 1.0, 15.0)? as u8;
        // The fabric: a named generator or a description.
        let (topology, gran) = match &self.topology {
            None => (gran_testbed(host * 1e9, s12 * 1e9, lat), true),
            Some(serde_json::Value::String(name)) => match name.as_str() {
                "gran" => (gran_testbed(host * 1e9, s12 * 1e9, lat), true),
                "clos648" => (folded_clos(36, host * 1e9, lat), false),
                other => {
                    return Err(SolveError::param(
                        "topology",
                        format!("unknown topology `{other}` (known: gran, clos648, or a description object)"),
                    ))
                }
            },
            Some(v @ serde_json::Value::Object(_)) => {
                let raw: RawTopology = serde_json::from_value(v.clone()).map_err(|e| {
                    SolveError::param("topology", format!("bad description: {e}"))
                })?;
                (raw.build(lat)?, false)
            }
            Some(other) => {
                return Err(SolveError::param(
                    "topology",
                    format!("must be a name or a description object, got {other}"),
                ))
            }
        };
        // Bound the VoQ arrays: sum over switches of radix^2 x VLs.
        let mut deg = vec![0u64; topology.switches as usize];
        for l in &topology.links {
            for n in [l.a, l.b] {
                if let NodeRef::Switch(s) = n {
                    if let Some(d) = deg.get_mut(s as usize) {
                        *d += 1;
                    }
                }
            }
        }
        let voqs: u64 = deg.iter().map(|d| d * d * vls as u64).sum();
        if voqs > 20_000_000 {
            return Err(SolveError::param(
                "topology",
                format!("{voqs} VoQs (sum of radix^2 x vls) exceed the limit 2e7"),
            ));
        }
        let fabric = Fabric::build(&topology)
            .map_err(|e| SolveError::param(&format!("topology.{}", e.field), e.rule))?;
        let hosts = fabric.hosts;
        let (flows_raw, default_intervals, contributors): (Vec<FlowRow>, f64, Vec<usize>) =
            match (self.scenario, &self.flows) {
                (Some(_), Some(_)) => {
                    return Err(SolveError::param(
                        "flows",
                        "give either `scenario` or `flows`, not both",
                    ))
                }
                (None, None) => {
                    return Err(SolveError::param(
                        "scenario",
                        "required (1 or 2) unless `flows` is given",
                    ))
                }
                (Some(_), None) if !gran => return Err(SolveError::param(
                    "scenario",
                    "the scenarios live on the `gran` test bed; give `flows` for another topology",
                )),
                (Some(s), None) => match whole("scenario", s, 1.0, 2.0)? {
                    // Catalogue §2: hosts H1..H7 are 0..6; F_k starts at (k-1) intervals (G-2).
                    1 => (
                        vec![
                            (0, 3, 0.0, 0),
                            (1, 4, 1.0, 0),
                            (2, 4, 2.0, 0),
                            (5, 4, 3.0, 0),
                            (6, 4, 4.0, 0),
                        ],
                        6.0,
                        vec![1, 2, 3, 4],
                    ),
                    _ => (
                        vec![(0, 3, 0.0, 0), (1, 4, 1.0, 0), (2, 5, 2.0, 0)],
                        4.0,
                        vec![0, 1, 2],
                    ),
                },
                (None, Some(fl)) => {
                    if fl.is_empty() || fl.len() > MAX_HOSTS as usize {
                        return Err(SolveError::param(
                            "flows",
                            format!("between 1 and {MAX_HOSTS} flows"),
                        ));
                    }
                    let mut v = Vec::new();
                    let mut last: f64 = 0.0;
                    for f in fl {
                        let s = whole("flows.src", f.src, 1.0, hosts as f64)? - 1;
                        let d = whole("flows.dst", f.dst, 1.0, hosts as f64)? - 1;
                        if s == d {
                            return Err(SolveError::param(
                                "flows.dst",
                                "a flow cannot go to its own source",
                            ));
                        }
                        let st = non_negative("flows.start", f.start)?;
                        let sl = whole("flows.sl", f.sl.unwrap_or(0.0), 0.0, 15.0)? as u8;
                        last = last.max(st);
                        v.push((s, d, st, sl));
                    }
                    let n = v.len();
                    (v, last.floor() + 2.0, (0..n).collect())
                }
            };
        let intervals = whole(
            "intervals",
            self.intervals.unwrap_or(default_intervals),
            1.0,
            100.0,
        )? as usize;
        let duration = intervals as f64 * interval;
        if !duration.is_finite() {
            return Err(SolveError::param(
                "interval",
                format!(
                    "intervals x interval = {intervals} x {} s is not a finite time",
                    show(interval)
                ),
            ));
        }
        let bin = positive("bin", self.bin.unwrap_or(interval / 100.0))?;
        if bin > interval {
            return Err(SolveError::param("bin", "must not exceed `interval`"));
        }
        if duration / bin > 100_000.0 {
            return Err(SolveError::param("bin", "at most 100000 bins per run"));
        }
        let mtu = whole("mtu", self.mtu.unwrap_or(2048.0), 64.0, 4096.0)?;
        let swlat =
            non_negative("switch_latency_ns", self.switch_latency_ns.unwrap_or(200.0))? * 1e-9;
        let buffer_kb = positive("buffer_kb", self.buffer_kb.unwrap_or(32.0))?;
        let buffer_blocks = (buffer_kb * 1024.0 / 64.0).floor() as u32;
        let pkt_blocks = (mtu + HEADER).div_ceil(64);
        if buffer_blocks < pkt_blocks || buffer_kb > 1024.0 {
            return Err(SolveError::param(
                "buffer_kb",
                format!(
                    "must hold one packet ({} bytes) and be at most 1024",
                    mtu + HEADER
                ),
            ));
        }
        let flows: Vec<Flow> = flows_raw
            .iter()
            .map(|&(s, d, st, sl)| Flow {
                src: s,
                dest: Dest::Host(d),
                sl,
                start: st * interval,
                weight: 1.0,
            })
            .collect();
        // Bound the work: link transmissions = simulated time x the sending
        // hosts' injection rate x the hops of their longest route.
        let mut per_host = vec![0usize; hosts as usize];
        for &(s, d, _, _) in &flows_raw {
            let hops = fabric.path(s, d).len() + 1;
            per_host[s as usize] = per_host[s as usize].max(hops);
        }
        let hop_sum: usize = per_host.iter().sum();
        let pkts = duration * cap * 1e9 / 8.0 / (mtu + HEADER) as f64 * hop_sum as f64;
        if pkts > 1e8 {
            // Blame the one of the three factors the user moved furthest
            // above its default; the message names all three.
            let blame = [
                ("interval", interval / 1.0),
                ("intervals", intervals as f64 / default_intervals),
                ("end_node_gbps", cap / DEFAULT_END_NODE_GBPS),
            ]
            .into_iter()
            .fold(("interval", f64::NEG_INFINITY), |a, b| {
                if b.1 > a.1 {
                    b
                } else {
                    a
                }
            })
            .0;
            return Err(SolveError::param(
                blame,
                format!("intervals x interval = {intervals} x {interval} s at end_node_gbps = {cap} would need ~{pkts:.1e} link transmissions (limit 1e8)"),
            ));
        }
        let nbins = (duration / bin).ceil();
        if nbins * flows.len() as f64 > 1e7 {
            return Err(SolveError::param(
                "bin",
                format!("{nbins} bins x {} flows exceed 1e7 samples", flows.len()),
            ));
        }
        let cc_per_sl = match self.cc_level.as_deref().unwrap_or("qp") {
            "qp" => false,
            "sl" => true,
            o => {
                return Err(SolveError::param(
                    "cc_level",
                    format!("`{o}`: must be qp or sl"),
                ))
            }
        };
        let flow_vls: Vec<u8> = flows_raw.iter().map(|f| f.3 % vls).collect();
        let vl_arb = match &self.vl_arbitration {
            Some(t) => Some(t.build(vls, &flow_vls)?),
            None => None,
        };
        let victim = self.victim_mask.unwrap_or(true);
        let cc = if self.cc { Some(self.iba()?) } else { None };
        let jitter = non_negative("pace_jitter", self.pace_jitter.unwrap_or(0.02))?;
        if jitter > 0.5 {
            return Err(SolveError::param(
                "pace_jitter",
                format!("must be at most 0.5, got {jitter}"),
            ));
        }
        let windows = (0..intervals)
            .map(|j| ((j as f64 + 0.1) * interval, (j as f64 + 1.0) * interval))
            .collect();
        let wire = |g: f64| g * 1e9 / 8.0;
        let payload = mtu as f64 / (mtu + HEADER) as f64;
        let scenario = Scenario {
            fabric,
            flows,
            vls,
            vl_arb,
            mtu,
            header: HEADER,
            cnp_bytes: 64,
            buffer_blocks,
            switch_latency: swlat,
            cut_through: !self.store_and_forward,
            inject_rate: wire(cap),
            sink_rate: wire(cap),
            victim_mask_hca: victim,
            pace_jitter: jitter,
            cc_per_sl,
            duration,
            bin,
            samples: true,
            windows,
            max_events: 1_000_000_000,
        };
        Ok(Setup {
            scenario,
            cc,
            interval,
            intervals,
            contributors,
            gran,
            payload,
            payload_host: host * payload,
            payload_s12: s12 * payload,
            payload_cap: cap * payload,
            pairs: flows_raw.iter().map(|&(s, d, _, _)| (s, d)).collect(),
        })
    }

    fn iba(&self) -> Result<IbaCc, SolveError> {
        let threshold = whole("threshold", self.threshold.unwrap_or(15.0), 0.0, 15.0)? as u8;
        let mapping = match self.threshold_mapping.as_deref().unwrap_or("per_voq") {
            "per_voq" => ThresholdMapping::PerVoq,
            "sum" => ThresholdMapping::Sum,
            "sum_per_contributor" => ThresholdMapping::SumPerContributor,
            o => {
                return Err(SolveError::param(
                    "threshold_mapping",
                    format!("`{o}`: must be per_voq, sum or sum_per_contributor"),
                ))
            }
        };
        let marking_rate = whole(
            "marking_rate",
            self.marking_rate.unwrap_or(0.0),
            0.0,
            65535.0,
        )?;
        let packet_size = whole("packet_size", self.packet_size.unwrap_or(0.0), 0.0, 16383.0)?;
        let ccti_increase = whole(
            "ccti_increase",
            self.ccti_increase.unwrap_or(1.0),
            1.0,
            255.0,
        )? as u16;
        let ccti_limit =
            whole("ccti_limit", self.ccti_limit.unwrap_or(127.0), 0.0, 16383.0)? as u16;
        let ccti_min = whole("ccti_min", self.ccti_min.unwrap_or(0.0), 0.0, 16383.0)? as u16;
        if ccti_min > ccti_limit {
            return Err(SolveError::param("ccti_min", "must not exceed ccti_limit"));
        }
        let timer_units = positive("ccti_timer", self.ccti_timer.unwrap_or(DEFAULT_CCTI_TIMER))?;
        let cct: Vec<f64> = match (&self.cct, self.cct_step_ns) {
            (Some(_), Some(_)) => {
                return Err(SolveError::param(
                    "cct",
                    "give `cct` or `cct_step_ns`, not both",
                ))
            }
            (Some(t), None) => {
                for &x in t {
                    non_negative("cct", x)?;
                }
                t.iter().map(|x| x * 1e-9).collect()
            }
            (None, step) => {
                let s = non_negative("cct_step_ns", step.unwrap_or(DEFAULT_CCT_STEP_NS))?;
                (0..(ccti_limit as usize + 1).max(128))
                    .map(|i| i as f64 * s * 1e-9)
                    .collect()
            }
        };
        if cct.len() < 128 || cct.len() < ccti_limit as usize + 1 {
            return Err(SolveError::param(
                "cct",
                format!(
                    "has {} entries; IBA needs at least 128 and at least ccti_limit + 1 = {}",
                    cct.len(),
                    ccti_limit as usize + 1
                ),
            ));
        }
        Ok(IbaCc {
            threshold,
            mapping,
            marking_rate,
            packet_size_blocks: packet_size,
            ccti_increase,
            ccti_limit,
            ccti_min,
            ccti_timer: timer_units * 1.024e-6,
            cct,
        })
    }
}

/// The 648-node Clos benchmark's scenario (issue 9 "Speed"): QDR links
/// (32 Gbit/s data), every host greedy, each packet to one of four hot spots
/// with probability 0.2, otherwise to a uniformly chosen other host.
pub(crate) fn clos_scenario(duration: f64) -> Scenario {
    let fabric = Fabric::build(&folded_clos(36, 32e9, 1e-7)).expect("the Clos is valid");
    let hot = vec![0, 161, 322, 483];
    let flows = (0..fabric.hosts)
        .map(|h| Flow {
            src: h,
            dest: Dest::HotSpot {
                hot: hot.clone(),
                p_hot: 0.2,
            },
            sl: 0,
            start: 0.0,
            weight: 1.0,
        })
        .collect();
    let rate = 32e9 / 8.0;
    Scenario {
        fabric,
        flows,
        vls: 1,
        vl_arb: None,
        mtu: 2048,
        header: HEADER,
        cnp_bytes: 64,
        buffer_blocks: 512,
        switch_latency: 2e-7,
        cut_through: true,
        inject_rate: rate,
        sink_rate: rate,
        victim_mask_hca: true,
        pace_jitter: 0.02,
        cc_per_sl: false,
        duration,
        bin: duration / 50.0,
        samples: true,
        windows: vec![(0.0, duration)],
        max_events: u64::MAX,
    }
}
