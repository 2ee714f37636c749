//! Yan (2012) ch.3: ECN marking with PIPD / FIMD source response and
//! admission control on a two-switch InfiniBand network (catalogue §1.1,
//! errata Y-5..Y-7, §5 M-11, §6 SIM-3 plug-in A; docs/models/ratecc.md).
//!
//! The packet-level engine `engines/ibnet` runs the Fig. 3.1 scenario with
//! the Yan-ECN plug-in (`engines::ibnet::ecn::YanEcn`). `ibecn.sim` reports
//! the average injection rates of Tables 3.2/3.3 and the rate traces of
//! Figs 3.4-3.7; `ibecn.claims` runs PIPD and PIPD+FIMD on the same seeds and
//! reports the quantities behind the thesis's comparisons of the two.

use crate::engines::ibnet::ecn::{Response, SlClass, YanEcn};
use crate::engines::ibnet::{
    Dest, Fabric, Flow, LinkSpec, NodeRef, Scenario, Topology, VlArbitration,
};
use crate::params::{non_negative, positive};
use crate::{ParamDoc, Registry, SolveError};
use serde::Deserialize;

mod sim;

pub use sim::{bench_scenario, Replication};

pub fn register(r: &mut Registry) {
    r.add(sim::IbecnSim);
    r.add(sim::IbecnClaims);
}

/// Parameters of `ibecn.sim` and `ibecn.claims`; every one has the
/// catalogue's choice as its default, so `{}` is the Fig. 3.1 scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawParams {
    #[serde(default)]
    function: Option<String>,
    #[serde(default)]
    low_function: Option<String>,
    #[serde(default)]
    rate_unit: Option<String>,
    #[serde(default)]
    m: Option<f64>,
    #[serde(default)]
    n: Option<f64>,
    #[serde(default)]
    rmin_low: Option<f64>,
    #[serde(default)]
    rmin_high: Option<f64>,
    #[serde(default)]
    link_gbytes: Option<f64>,
    #[serde(default)]
    header_bytes: Option<f64>,
    #[serde(default)]
    payload_bytes: Option<f64>,
    #[serde(default)]
    buffer_packets: Option<f64>,
    #[serde(default)]
    ack_bytes: Option<f64>,
    #[serde(default)]
    switch_latency_ns: Option<f64>,
    #[serde(default)]
    link_latency_ns: Option<f64>,
    #[serde(default)]
    wrr_high: Option<f64>,
    #[serde(default)]
    window: Option<f64>,
    #[serde(default)]
    duration_ms: Option<f64>,
    #[serde(default)]
    warmup_ms: Option<f64>,
    #[serde(default)]
    bin_us: Option<f64>,
    #[serde(default)]
    start_jitter_us: Option<f64>,
    #[serde(default)]
    replications: Option<f64>,
}

pub(crate) fn param_docs() -> Vec<ParamDoc> {
    let d = |name, doc| ParamDoc { name, doc };
    vec![
        d("function", "source response, a reading of PIPD's eqs (3.6)-(3.10) (docs/models/ratecc.md): pipd (N: normalised repair, x = r/R_max, f_dec = x^m, f_inc = x^(m^(-x_min/x)); default), pipd_printed (P: as printed on the rate counted in rate_unit), pipd_headroom (H: as printed on the headroom 1 - r/R_max), pipd_rmin (S: as printed on r/R_min; never leaves R_min), pipd_normalised_printed (Q: as printed on r/R_max; marks raise the rate); or fimd_low (= pipd with low_function fimd: Table 3.3), fimd (every flow FIMD). ibecn.claims takes a PIPD reading only"),
        d("low_function", "what the low SL (r1 and the victim) runs: pipd (the `function`'s PIPD reading, default) or fimd (FIMD, Table 3.3); not with function fimd_low or fimd, not taken by ibecn.claims"),
        d("rate_unit", "unit of every reported rate: packets (packets/s, default) or kB (1000 bytes/s of whole packets); pipd_printed also computes in it"),
        d("m", "PIPD power m, 1 < m <= 64 (default 4)"),
        d("n", "FIMD factor n, 1 < n <= 64 (default 4)"),
        d("rmin_low", "R_min of the low-priority SL (r1, victim) as a fraction of R_max, 1e-6 <= rmin_low < 1 (default 1/256 = 0.00390625)"),
        d("rmin_high", "R_min of the high-priority SL (r2) as a fraction of R_max, 1e-6 <= rmin_high < 1 (default 1/128 = 0.0078125)"),
        d("link_gbytes", "link bandwidth in GB/s (1e9 bytes/s); R_max = link rate in packets/s (default 1: 4x link, Table 3.1)"),
        d("header_bytes", "packet header bytes (default 20, Table 3.1)"),
        d("payload_bytes", "data payload bytes per packet (default 2048, Table 3.1)"),
        d("buffer_packets", "input buffer per port per VL, in packets (default 8, Table 3.1)"),
        d("ack_bytes", "ACK size in bytes (default 28)"),
        d("switch_latency_ns", "switch forwarding latency (default 100)"),
        d("link_latency_ns", "propagation latency per link (default 100)"),
        d("wrr_high", "VL arbitration weight of the high-priority VL against 1 for the low one (admission control; default 2)"),
        d("window", "most unacknowledged packets per flow (default: no window)"),
        d("duration_ms", "simulated time per replication, ms (default 50)"),
        d("warmup_ms", "initial time left out of the averages, ms (default 1)"),
        d("bin_us", "bin of the rate series, us (default 10)"),
        d("start_jitter_us", "flows start at independent uniform offsets in [0, start_jitter_us] (default 2)"),
        d("replications", "independent replications, each with its own start offsets (default 5)"),
    ]
}

/// A reading of PIPD's eqs (3.6)-(3.10) (docs/models/ratecc.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// N: the catalogue's normalised repair (default).
    Normalised,
    /// P: as printed, on the rate counted in the rate unit.
    Printed,
    /// H: as printed, on the headroom 1 - r/R_max.
    Headroom,
    /// S: as printed, on r/R_min.
    Rmin,
    /// Q: as printed, on r/R_max.
    NormalisedPrinted,
}

/// What the flows of each SL run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// The high SL's PIPD reading (`None`: every flow FIMD).
    pub pipd: Option<Reading>,
    /// The low SL (r1, victim) runs FIMD instead of the PIPD reading.
    pub low_fimd: bool,
}

impl Function {
    /// Every flow on PIPD reading `r`.
    pub fn pipd(r: Reading) -> Self {
        Function {
            pipd: Some(r),
            low_fimd: false,
        }
    }
    /// r2 on PIPD reading `r`, r1 and the victim on FIMD (Table 3.3).
    pub fn fimd_low(r: Reading) -> Self {
        Function {
            pipd: Some(r),
            low_fimd: true,
        }
    }
}

/// Hosts of Fig. 3.1 (0-based).
pub const A1: u32 = 0;
pub const AV: u32 = 1;
pub const B1: u32 = 2;
pub const BC: u32 = 3;
pub const BV: u32 = 4;

/// Flow indices: r1 and r2 of A1 and B1 (to Bc), then the victim Av -> Bv.
pub const FLOWS: [&str; 5] = ["r1_A", "r2_A", "r1_B", "r2_B", "victim"];

/// A validated Fig. 3.1 set-up.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Flow start times are zero here; each replication draws its offsets.
    pub scenario: Scenario,
    pub cc: YanEcn,
    pub replications: usize,
    pub start_jitter: f64,
    pub warmup: f64,
    pub bin: f64,
    /// Table 3.1 quantities as given (bytes, GB/s, packets).
    pub link_gbytes: f64,
    pub header: u32,
    pub packet_bytes: u32,
    pub buffer_packets: u32,
    /// Reported rate units per packet/s (`rate_unit`).
    pub unit: f64,
}

fn whole(name: &str, x: f64, lo: f64, hi: f64) -> Result<u32, SolveError> {
    if !x.is_finite() || x.fract() != 0.0 || x < lo || x > hi {
        return Err(SolveError::param(
            name,
            format!("must be a whole number in {lo}..={hi}, got {x}"),
        ));
    }
    Ok(x as u32)
}

/// `lo < x <= hi` (the rule names the open bound).
fn above(name: &str, x: f64, lo: f64, hi: f64, what: &str) -> Result<f64, SolveError> {
    if !x.is_finite() || x <= lo || x > hi {
        return Err(SolveError::param(
            name,
            format!("{what}: must satisfy {lo} < {name} <= {hi}, got {x}"),
        ));
    }
    Ok(x)
}

fn rmin(name: &str, x: f64) -> Result<f64, SolveError> {
    if !x.is_finite() || !(1e-6..1.0).contains(&x) {
        return Err(SolveError::param(
            name,
            format!(
                "R_min must lie below R_max: 1e-6 <= {name} < 1 (a fraction of R_max), got {x}"
            ),
        ));
    }
    Ok(x)
}

impl RawParams {
    /// The PIPD reading `function` names (`None`: fimd_low or fimd).
    pub(crate) fn reading(&self) -> Result<Option<Reading>, SolveError> {
        Ok(Some(match self.function.as_deref().unwrap_or("pipd") {
            "pipd" => Reading::Normalised,
            "pipd_printed" => Reading::Printed,
            "pipd_headroom" => Reading::Headroom,
            "pipd_rmin" => Reading::Rmin,
            "pipd_normalised_printed" => Reading::NormalisedPrinted,
            "fimd_low" | "fimd" => return Ok(None),
            o => {
                return Err(SolveError::param(
                    "function",
                    format!("`{o}`: must be pipd, pipd_printed, pipd_headroom, pipd_rmin, pipd_normalised_printed, fimd_low or fimd"),
                ))
            }
        }))
    }

    pub(crate) fn function(&self) -> Result<Function, SolveError> {
        let low_fimd = match self.low_function.as_deref() {
            None | Some("pipd") => false,
            Some("fimd") => true,
            Some(o) => {
                return Err(SolveError::param(
                    "low_function",
                    format!("`{o}`: must be pipd or fimd"),
                ))
            }
        };
        match (self.reading()?, self.function.as_deref()) {
            (Some(r), _) => Ok(Function {
                pipd: Some(r),
                low_fimd,
            }),
            (None, f) if self.low_function.is_some() => Err(SolveError::param(
                "low_function",
                format!(
                    "not with function {}: it names both SLs' functions",
                    f.unwrap_or("")
                ),
            )),
            (None, Some("fimd_low")) => Ok(Function::fimd_low(Reading::Normalised)),
            (None, _) => Ok(Function {
                pipd: None,
                low_fimd: true,
            }),
        }
    }

    /// Reported units per packet/s.
    fn unit(&self, packet_bytes: u32) -> Result<f64, SolveError> {
        match self.rate_unit.as_deref().unwrap_or("packets") {
            "packets" => Ok(1.0),
            "kB" => Ok(f64::from(packet_bytes) / 1000.0),
            o => Err(SolveError::param(
                "rate_unit",
                format!("`{o}`: must be packets or kB"),
            )),
        }
    }

    pub(crate) fn validate(&self, function: Function) -> Result<Setup, SolveError> {
        let m = above("m", self.m.unwrap_or(4.0), 1.0, 64.0, "PIPD needs m > 1")?;
        let n = above("n", self.n.unwrap_or(4.0), 1.0, 64.0, "FIMD needs n > 1")?;
        let lo = rmin("rmin_low", self.rmin_low.unwrap_or(1.0 / 256.0))?;
        let hi = rmin("rmin_high", self.rmin_high.unwrap_or(1.0 / 128.0))?;
        let gbytes = positive("link_gbytes", self.link_gbytes.unwrap_or(1.0))?;
        if gbytes > 100.0 {
            return Err(SolveError::param("link_gbytes", "at most 100 GB/s"));
        }
        let header = whole(
            "header_bytes",
            self.header_bytes.unwrap_or(20.0),
            0.0,
            4096.0,
        )?;
        let payload = whole(
            "payload_bytes",
            self.payload_bytes.unwrap_or(2048.0),
            1.0,
            4096.0,
        )?;
        let buffer_packets = whole(
            "buffer_packets",
            self.buffer_packets.unwrap_or(8.0),
            1.0,
            1024.0,
        )?;
        let ack = whole("ack_bytes", self.ack_bytes.unwrap_or(28.0), 1.0, 4096.0)?;
        let swlat = non_negative("switch_latency_ns", self.switch_latency_ns.unwrap_or(100.0))?;
        let lat = non_negative("link_latency_ns", self.link_latency_ns.unwrap_or(100.0))?;
        if swlat > 1e6 || lat > 1e6 {
            let f = if swlat > 1e6 {
                "switch_latency_ns"
            } else {
                "link_latency_ns"
            };
            return Err(SolveError::param(f, "at most 1e6 ns"));
        }
        let wrr_high = whole("wrr_high", self.wrr_high.unwrap_or(2.0), 1.0, 255.0)?;
        let window = match self.window {
            None => None,
            Some(w) => Some(whole("window", w, 1.0, 1e6)?),
        };
        let duration = positive("duration_ms", self.duration_ms.unwrap_or(50.0))? * 1e-3;
        let warmup = non_negative("warmup_ms", self.warmup_ms.unwrap_or(1.0))? * 1e-3;
        if warmup >= duration {
            return Err(SolveError::param(
                "warmup_ms",
                "must be shorter than duration_ms",
            ));
        }
        let bin = positive("bin_us", self.bin_us.unwrap_or(10.0))? * 1e-6;
        let bins = ((duration / bin) * (1.0 - 1e-12)).ceil();
        if bins > 200_000.0 {
            return Err(SolveError::param(
                "bin_us",
                format!("duration_ms / bin_us gives {bins:.0} bins (at most 200000)"),
            ));
        }
        let jitter = non_negative("start_jitter_us", self.start_jitter_us.unwrap_or(2.0))? * 1e-6;
        if jitter >= duration - warmup {
            return Err(SolveError::param(
                "start_jitter_us",
                "must be shorter than the measured time",
            ));
        }
        let replications =
            whole("replications", self.replications.unwrap_or(5.0), 1.0, 100.0)? as usize;
        let bytes_per_s = gbytes * 1e9;
        let packet = payload + header;
        let r_max = bytes_per_s / packet as f64;
        // Work bound: every link of the four busy paths at R_max, data and ACK.
        let transmissions = duration * r_max * 24.0 * replications as f64;
        if transmissions > 2e8 {
            return Err(SolveError::param(
                "duration_ms",
                format!(
                    "duration_ms x replications needs ~{transmissions:.1e} link transmissions (limit 2e8); shorten the run"
                ),
            ));
        }
        let unit = self.unit(packet)?;
        let high = match function.pipd {
            Some(Reading::Normalised) => Response::Pipd { m },
            Some(Reading::Printed) => Response::PipdPrinted { m, unit },
            Some(Reading::Headroom) => Response::PipdHeadroom { m },
            Some(Reading::Rmin) => Response::PipdRmin { m },
            Some(Reading::NormalisedPrinted) => Response::PipdNormalisedPrinted { m },
            None => Response::Fimd { n },
        };
        let low = if function.low_fimd {
            Response::Fimd { n }
        } else {
            high
        };
        let mut classes = vec![
            SlClass {
                response: low,
                r_min: lo * r_max,
            };
            16
        ];
        classes[1] = SlClass {
            response: high,
            r_min: hi * r_max,
        };
        let cc = YanEcn {
            classes,
            r_max,
            t_pkt: packet as f64 / bytes_per_s,
            window,
        };
        let scenario = fig_3_1(FabricSpec {
            bytes_per_s,
            latency: lat * 1e-9,
            switch_latency: swlat * 1e-9,
            payload,
            header,
            ack,
            buffer_packets,
            wrr_high,
            duration,
            warmup,
            bin,
        });
        Ok(Setup {
            scenario,
            cc,
            replications,
            start_jitter: jitter,
            warmup,
            bin,
            link_gbytes: gbytes,
            header,
            packet_bytes: packet,
            buffer_packets,
            unit,
        })
    }
}

/// What `fig_3_1` needs.
pub(crate) struct FabricSpec {
    pub bytes_per_s: f64,
    pub latency: f64,
    pub switch_latency: f64,
    pub payload: u32,
    pub header: u32,
    pub ack: u32,
    pub buffer_packets: u32,
    /// Packets of the high-priority VL per packet of the low one.
    pub wrr_high: u32,
    pub duration: f64,
    pub warmup: f64,
    pub bin: f64,
}

/// Fig. 3.1: switch A (0) holds A1, Av; switch B (1) holds B1, Bc, Bv; one
/// A-B link. Flows r1 (SL 0 -> VL 0) and r2 (SL 1 -> VL 1) from A1 and from
/// B1 to Bc, and the victim Av -> Bv on the low SL.
pub(crate) fn fig_3_1(s: FabricSpec) -> Scenario {
    let host = |h, sw| LinkSpec {
        a: NodeRef::Host(h),
        b: NodeRef::Switch(sw),
        rate_bps: s.bytes_per_s * 8.0,
        latency: s.latency,
    };
    let mut links = vec![
        host(A1, 0),
        host(AV, 0),
        host(B1, 1),
        host(BC, 1),
        host(BV, 1),
    ];
    links.push(LinkSpec {
        a: NodeRef::Switch(0),
        b: NodeRef::Switch(1),
        rate_bps: s.bytes_per_s * 8.0,
        latency: s.latency,
    });
    let topology = Topology {
        hosts: 5,
        switches: 2,
        links,
        routes: Vec::new(),
    };
    let fabric = Fabric::build(&topology).expect("Fig. 3.1 is a valid tree");
    let flow = |src, dst, sl| Flow {
        src,
        dest: Dest::Host(dst),
        sl,
        start: 0.0,
        weight: 1.0,
    };
    let flows = vec![
        flow(A1, BC, 0),
        flow(A1, BC, 1),
        flow(B1, BC, 0),
        flow(B1, BC, 1),
        flow(AV, BV, 0),
    ];
    let blocks = (s.payload + s.header).div_ceil(64);
    Scenario {
        fabric,
        flows,
        vls: 2,
        // Admission control (§3.2): the low-priority table serves VL 1 up
        // to `wrr_high` packets per packet of VL 0, at switches and HCAs.
        vl_arb: Some(VlArbitration::weighted(&[1, s.wrr_high], blocks)),
        mtu: s.payload,
        header: s.header,
        cnp_bytes: s.ack,
        buffer_blocks: s.buffer_packets * blocks,
        switch_latency: s.switch_latency,
        cut_through: true,
        inject_rate: s.bytes_per_s,
        sink_rate: s.bytes_per_s,
        victim_mask_hca: false,
        pace_jitter: 0.0,
        cc_per_sl: false,
        duration: s.duration,
        bin: s.bin,
        // The measures read the level trace and the window counts, not the
        // per-bin records.
        samples: false,
        windows: vec![(s.warmup, s.duration)],
        max_events: u64::MAX,
    }
}
