//! Packet-level InfiniBand network engine (catalogue §6 SIM-3; issue 9).
//!
//! HCAs (greedy flow generators paced at the end-node cap, a sink draining at
//! the sink cap, CNP priority queue, congestion-control state) and switches
//! (input buffers with a VoQ per output per VL; VL arbitration by IBA's
//! high/low-priority tables, round robin over the inputs within a VL with one
//! pointer per output and VL) joined by full-duplex links of per-link rate and latency;
//! lossless credit flow control per VL in 64-byte blocks; virtual cut-through
//! or store-and-forward; static forwarding tables. Congestion control is a
//! plug-in ([`cc::CongestionControl`]) chosen at compile time per task.
//!
//! The engine knows nothing of JSON: `systems/ibcc/` builds a [`Scenario`].

pub mod cc;
pub mod ecn;
mod run;
pub mod topology;

pub use run::{run, SLS};
pub use topology::{Fabric, LinkSpec, NodeRef, Topology, TopologyError};

/// Where a flow's packets go.
#[derive(Debug, Clone, PartialEq)]
pub enum Dest {
    Host(u32),
    /// Each packet: one of `hot` (uniformly) with probability `p_hot`,
    /// otherwise a uniformly chosen other host (the benchmark's traffic).
    HotSpot {
        hot: Vec<u32>,
        p_hot: f64,
    },
}

/// A greedy flow (one QP) from `src`, active from `start` to the end of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub src: u32,
    pub dest: Dest,
    /// Service level; VL = SL mod the number of data VLs. Must be < 16.
    pub sl: u8,
    pub start: f64,
    /// Share in the HCA's lottery among its eligible flows.
    pub weight: f64,
}

/// One entry of a VL arbitration table (IBA 1.2.1 §7.6.9): a data VL and
/// its weight in 64-byte units. An entry may send while it has weight left,
/// so a packet longer than the rest is sent whole (weights round up to whole
/// packets); weight 0 skips the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlArbEntry {
    pub vl: u8,
    pub weight: u8,
}

/// An output port's VL arbitration (IBA 1.2.1 §7.6.9): weighted round robin
/// over the entries of the high-priority table, then of the low-priority
/// one; `high_limit` (units of 4096 bytes; 255 = unbounded, 0 = one packet)
/// bounds the high-priority bytes sent before the low-priority table gets
/// its turn. A table's pointer moves to its next entry when the entry's
/// weight is spent or its VL has nothing that can be sent (no packet, or no
/// credits downstream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlArbitration {
    pub high: Vec<VlArbEntry>,
    pub low: Vec<VlArbEntry>,
    pub high_limit: u8,
}

impl VlArbitration {
    /// Every data VL once in the low-priority table with one block of weight,
    /// so each turn sends one packet: plain round robin over the VLs (what
    /// OpenSM's default low table, weight 4 per VL, does with 2 KB packets).
    pub fn round_robin(vls: u8) -> Self {
        VlArbitration {
            high: Vec::new(),
            low: (0..vls).map(|vl| VlArbEntry { vl, weight: 1 }).collect(),
            high_limit: 0,
        }
    }

    /// The low-priority table giving VL v up to `packets[v]` packets of
    /// `blocks` 64-byte blocks in a row, then the next VL (an entry holds at
    /// most 255 blocks, so a long run takes several entries of its VL).
    pub fn weighted(packets: &[u32], blocks: u32) -> Self {
        let per_entry = (255 / blocks.max(1)).max(1);
        let mut low = Vec::new();
        for (vl, &n) in packets.iter().enumerate() {
            let mut left = n;
            while left > 0 {
                let k = left.min(per_entry);
                let weight = (k * blocks).min(255) as u8;
                low.push(VlArbEntry {
                    vl: vl as u8,
                    weight,
                });
                left -= k;
            }
        }
        VlArbitration {
            high: Vec::new(),
            low,
            high_limit: 0,
        }
    }
}

/// Everything the engine needs, already validated by the system.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub fabric: Fabric,
    pub flows: Vec<Flow>,
    /// Data VLs (1..=15).
    pub vls: u8,
    /// VL arbitration at every output (every VL named is below `vls`).
    /// `None`: round robin over the VLs at switch outputs
    /// ([`VlArbitration::round_robin`]) and a lottery by flow weight among
    /// an HCA's eligible flows; `Some`: these tables at switch outputs and
    /// HCAs (at an HCA, a lottery among the chosen VL's eligible flows).
    pub vl_arb: Option<VlArbitration>,
    /// Payload bytes per data packet (MTU) and header bytes.
    pub mtu: u32,
    pub header: u32,
    pub cnp_bytes: u32,
    /// Input buffer per VL per port (switches and HCAs), in 64-byte blocks.
    pub buffer_blocks: u32,
    pub switch_latency: f64,
    pub cut_through: bool,
    /// End-node caps (bytes/s): injection pacing and sink drain (PCIe; G-4).
    pub inject_rate: f64,
    pub sink_rate: f64,
    pub victim_mask_hca: bool,
    /// Relative spread of the injection pacing interval (uniform, mean kept; 0 = none).
    pub pace_jitter: f64,
    /// CC state per host SL instead of per QP.
    pub cc_per_sl: bool,
    /// Simulated seconds; throughput bin width (s).
    pub duration: f64,
    pub bin: f64,
    /// Keep the per-bin records: each flow's delivered bytes per bin
    /// (`Counters::bin_bytes`), and samples of the CC level of every flow and
    /// of the input buffers of every switch at the end of each bin
    /// (`Counters::level`, `Counters::occupancy`). Without, the three are
    /// left empty and the samples are not events (they are still counted in
    /// `Counters::events`).
    pub samples: bool,
    /// Windows [from, to) over which the mean throughput of every flow is kept.
    pub windows: Vec<(f64, f64)>,
    /// Refuse runs needing more events than this.
    pub max_events: u64,
}

/// What a run counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Counters {
    pub events: u64,
    pub generated: u64,
    pub delivered: u64,
    /// Payload bytes delivered.
    pub delivered_bytes: u64,
    /// Data packets still in the network at the end (counted in the pool).
    pub live_data: u64,
    pub marks: u64,
    /// Marked packets per flow (where the congestion-control load falls).
    pub flow_marks: Vec<u64>,
    pub cnps: u64,
    pub becns: u64,
    /// ACKs sent by destinations and received by sources; ACKs in flight at the end.
    pub acks: u64,
    pub acks_received: u64,
    pub live_acks: u64,
    /// Switch input buffers (port, VL) that became full, per switch (counted
    /// only for plug-ins that watch for it, `watches_input_full`).
    pub input_full: Vec<u64>,
    pub min_credits: i64,
    pub max_in_used: u32,
    pub credit_overflow: bool,
    pub bookkeeping_ok: bool,
    pub nbins: usize,
    /// Payload bytes per flow per bin: `bin_bytes[f * nbins + b]` (empty
    /// without `Scenario::samples`).
    pub bin_bytes: Vec<f64>,
    /// Payload bytes per flow per window: `window_bytes[f * windows + j]`.
    pub window_bytes: Vec<f64>,
    /// Data packets injected per flow per window (same layout).
    pub window_sent: Vec<u64>,
    /// Per flow, (time, level) at the start and at every change, when the
    /// plug-in asks for it (`CongestionControl::trace_level`); else empty.
    pub level_trace: Vec<Vec<(f64, f64)>>,
    /// CC level (CCTI) per flow at the end of each bin (empty without
    /// `Scenario::samples`).
    pub level: Vec<f64>,
    /// Input-buffer bytes per switch at the end of each bin (empty without
    /// `Scenario::samples`).
    pub occupancy: Vec<f64>,
    pub sim_time: f64,
}

impl Counters {
    fn new(flows: usize, switches: usize, nbins: usize, windows: usize, samples: bool) -> Self {
        let sampled = if samples { nbins } else { 0 };
        Counters {
            events: 0,
            generated: 0,
            delivered: 0,
            delivered_bytes: 0,
            live_data: 0,
            marks: 0,
            flow_marks: vec![0; flows],
            cnps: 0,
            becns: 0,
            acks: 0,
            acks_received: 0,
            live_acks: 0,
            input_full: vec![0; switches],
            min_credits: i64::MAX,
            max_in_used: 0,
            credit_overflow: false,
            bookkeeping_ok: true,
            nbins,
            bin_bytes: vec![0.0; flows * sampled],
            window_bytes: vec![0.0; flows * windows],
            window_sent: vec![0; flows * windows],
            level_trace: vec![Vec::new(); flows],
            level: vec![0.0; flows * sampled],
            occupancy: vec![0.0; switches * sampled],
            sim_time: 0.0,
        }
    }

    /// Mean throughput of flow `f` in bin `b`, Gbit/s of payload.
    pub fn bin_gbps(&self, f: usize, b: usize, bin: f64) -> f64 {
        self.bin_bytes[f * self.nbins + b] * 8.0 / bin / 1e9
    }
}

#[cfg(test)]
mod arb_tests;
#[cfg(test)]
mod tests;
