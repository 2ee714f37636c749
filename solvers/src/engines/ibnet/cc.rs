//! Congestion-control plug-ins of the InfiniBand engine (docs/design.md,
//! "Shape of a simulation engine": a trait used as a generic parameter of `run`).
//!
//! The trait has the four places where a congestion-control scheme acts:
//! the switch output deciding whether to mark a packet (IBA FECN; Yan's ECN),
//! the destination deciding what to send back (IBA CNP; Yan's ACK per packet),
//! the source reacting to that feedback and to its own timer, and the source
//! HCA's arbitration asking for the inter-packet gap of a flow. Yan ch.3's
//! ECN + PIPD/FIMD plug-in (catalogue §1.1, [`super::ecn::YanEcn`]) uses the
//! same hooks plus the ones with defaults below, which the IBA plug-in leaves
//! alone (so its results do not move): a per-output state armed when a switch
//! input buffer becomes full (`on_input_full`), an ACK per data packet
//! (`Reply::Ack`, `on_ack`, after which the engine re-times the flow's next
//! packet from the new gap), an initial source state per SL, a window of
//! unacknowledged packets and a trace of the level. (Yan's admission control,
//! weighted VL arbitration, is a VL arbitration table of the `Scenario`.)

/// What a switch output sees when it is about to send a data packet on a VL.
#[derive(Debug, Clone, Copy)]
pub struct PortView<'a> {
    /// Occupancy (64-byte blocks) of each input's VoQ on this VL heading for this output.
    pub voq_blocks: &'a [u32],
    /// Input buffer capacity per VL per input port, in blocks.
    pub capacity_blocks: u32,
    /// The output has credits for (at least) one more packet after this one.
    pub credits_available: bool,
    /// Victim_Mask of the port (set on ports facing channel adapters).
    pub victim_mask: bool,
    /// Size of the packet being sent, in blocks.
    pub packet_blocks: u32,
}

/// What the destination returns to the source of a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Nothing,
    /// A congestion notification packet with BECN set (IBA CNP).
    Cnp,
    /// An acknowledgement echoing the packet's ECN bit (Yan §3.3.1): sent
    /// like a CNP (control packet of `Scenario::cnp_bytes`, priority, no
    /// credits), handed to `on_ack` at the source.
    Ack,
}

pub trait CongestionControl {
    /// State of a source flow (per QP, or per SL at SL level).
    type Source: Copy + Default;
    /// State of a switch output per VL (marking counters).
    type PortVl: Copy + Default;
    /// State of a switch output port over all its VLs (Yan's cnt2).
    type Port: Copy + Default;

    /// False for the plug-in that does nothing, so the engine skips the work.
    fn enabled(&self) -> bool;
    /// Initial state of a source whose (first) flow has service level `sl`.
    fn init_source(&self, _sl: u8) -> Self::Source {
        Self::Source::default()
    }
    /// Switch output: whether to set FECN (ECN) on the data packet about to leave.
    fn mark(&self, port: &mut Self::Port, st: &mut Self::PortVl, view: &PortView) -> bool;
    /// Whether the engine must call `on_input_full` (costs a scan per event).
    fn watches_input_full(&self) -> bool {
        false
    }
    /// A switch input buffer (one input port, one VL) has just become full
    /// (no room for another data packet). Called once for each output that
    /// packets in that buffer wait for, with that output's state and the
    /// number of data packets in the switch waiting for it (Yan's cnt1).
    fn on_input_full(&self, _port: &mut Self::Port, _waiting: u32) {}
    /// Destination: what a data packet with (or without) FECN makes it send back.
    fn reply(&self, fecn: bool) -> Reply;
    /// Source: an ACK of one of the flow's packets arrived, echoing `ecn`.
    /// The engine then re-times the flow's next packet with the new `gap`.
    fn on_ack(&self, _st: &mut Self::Source, _ecn: bool) {}
    /// Most packets a flow may have sent and not had acknowledged.
    fn window(&self) -> u32 {
        u32::MAX
    }
    /// Record (time, level) of every flow at every change (`Counters::level_trace`).
    fn trace_level(&self) -> bool {
        false
    }
    /// Source: a BECN arrived for this flow. Returns true if the timer of
    /// the flow's port SL must run.
    fn on_becn(&self, st: &mut Self::Source) -> bool;
    /// Source: the port SL's timer expired. Returns true while the flow still
    /// needs the timer.
    fn on_timer(&self, st: &mut Self::Source) -> bool;
    /// Period of the source timer, in seconds.
    fn timer_period(&self) -> f64;
    /// Extra delay (seconds) between consecutive packets of the flow.
    fn gap(&self, st: &Self::Source) -> f64;
    /// A number to trace per flow (CCTI for IBA CC).
    fn level(&self, st: &Self::Source) -> f64;
}

/// No congestion control: never marks, never throttles.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCc;

impl CongestionControl for NoCc {
    type Source = ();
    type PortVl = ();
    type Port = ();
    fn enabled(&self) -> bool {
        false
    }
    fn mark(&self, _: &mut (), _: &mut (), _: &PortView) -> bool {
        false
    }
    fn reply(&self, _: bool) -> Reply {
        Reply::Nothing
    }
    fn on_becn(&self, _: &mut ()) -> bool {
        false
    }
    fn on_timer(&self, _: &mut ()) -> bool {
        false
    }
    fn timer_period(&self) -> f64 {
        f64::INFINITY
    }
    fn gap(&self, _: &()) -> f64 {
        0.0
    }
    fn level(&self, _: &()) -> f64 {
        0.0
    }
}

/// How a switch compares VoQ fill ratios with the threshold (Gran §3.2.1:
/// the three options of the OMNeT++ model; the choice is the designer's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdMapping {
    /// Any single VoQ heading for the port crosses the threshold.
    PerVoq,
    /// The sum of the VoQs heading for the port crosses it.
    Sum,
    /// The sum divided by the number of contributing (non-empty) VoQs crosses it.
    SumPerContributor,
}

/// IBA 1.2.1 Annex A10 congestion control (catalogue §2 "IB CC").
#[derive(Debug, Clone)]
pub struct IbaCc {
    /// 0 (never mark) .. 15 (lowest threshold).
    pub threshold: u8,
    pub mapping: ThresholdMapping,
    /// Eligible packets sent between two marked ones (0: mark every one).
    pub marking_rate: u32,
    /// Packets smaller than this (in 64-byte blocks) are never marked.
    pub packet_size_blocks: u32,
    pub ccti_increase: u16,
    pub ccti_limit: u16,
    pub ccti_min: u16,
    /// Seconds.
    pub ccti_timer: f64,
    /// Inter-packet delay per CCT index, seconds (length >= ccti_limit + 1).
    pub cct: Vec<f64>,
}

/// Source state: the CCT index.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ccti(pub u16);

/// Switch Port-VL state: eligible packets seen since the last mark.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkCounter(pub u32);

impl IbaCc {
    /// Threshold as a fill ratio of one input buffer: weight w in 1..=15
    /// gives (16 - w)/16, uniformly decreasing (Gran §2.1; the exact mapping
    /// is left to the switch designer, docs/models/ibcc.md).
    pub fn fill_threshold(&self) -> f64 {
        (16.0 - self.threshold as f64) / 16.0
    }

    fn congested(&self, v: &PortView) -> bool {
        if self.threshold == 0 {
            return false;
        }
        // Root (credits available) or victim with Victim_Mask set (§2.1).
        if !(v.credits_available || v.victim_mask) {
            return false;
        }
        let limit = self.fill_threshold() * v.capacity_blocks as f64;
        match self.mapping {
            ThresholdMapping::PerVoq => v.voq_blocks.iter().any(|&b| b as f64 >= limit),
            ThresholdMapping::Sum => v.voq_blocks.iter().sum::<u32>() as f64 >= limit,
            ThresholdMapping::SumPerContributor => {
                let n = v.voq_blocks.iter().filter(|&&b| b > 0).count();
                n > 0 && v.voq_blocks.iter().sum::<u32>() as f64 / n as f64 >= limit
            }
        }
    }
}

impl CongestionControl for IbaCc {
    type Source = Ccti;
    type PortVl = MarkCounter;
    type Port = ();

    fn enabled(&self) -> bool {
        true
    }

    fn mark(&self, _: &mut (), st: &mut MarkCounter, v: &PortView) -> bool {
        if v.packet_blocks < self.packet_size_blocks || !self.congested(v) {
            return false;
        }
        // Marking_Rate: mark one, then let `marking_rate` eligible packets pass.
        if st.0 == 0 {
            st.0 = self.marking_rate;
            true
        } else {
            st.0 -= 1;
            false
        }
    }

    fn reply(&self, fecn: bool) -> Reply {
        if fecn {
            Reply::Cnp
        } else {
            Reply::Nothing
        }
    }

    fn on_becn(&self, st: &mut Ccti) -> bool {
        st.0 = (st.0 + self.ccti_increase).min(self.ccti_limit);
        st.0 > self.ccti_min
    }

    fn on_timer(&self, st: &mut Ccti) -> bool {
        if st.0 > self.ccti_min {
            st.0 -= 1;
        }
        st.0 > self.ccti_min
    }

    fn timer_period(&self) -> f64 {
        self.ccti_timer
    }

    fn gap(&self, st: &Ccti) -> f64 {
        self.cct[st.0 as usize]
    }

    fn level(&self, st: &Ccti) -> f64 {
        st.0 as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(threshold: u8, marking_rate: u32) -> IbaCc {
        IbaCc {
            threshold,
            mapping: ThresholdMapping::PerVoq,
            marking_rate,
            packet_size_blocks: 0,
            ccti_increase: 2,
            ccti_limit: 5,
            ccti_min: 1,
            ccti_timer: 1e-4,
            cct: (0..6).map(|i| i as f64 * 1e-7).collect(),
        }
    }

    fn view(voq: &[u32], credits: bool, victim: bool) -> PortView<'_> {
        PortView {
            voq_blocks: voq,
            capacity_blocks: 512,
            credits_available: credits,
            victim_mask: victim,
            packet_blocks: 33,
        }
    }

    #[test]
    fn root_is_marked_victim_only_with_mask() {
        let c = cc(15, 0);
        let mut m = MarkCounter::default();
        // Threshold 15: 1/16 of 512 blocks = 32 blocks.
        assert!(c.mark(&mut (), &mut m, &view(&[0, 40], true, false)));
        assert!(!c.mark(&mut (), &mut m, &view(&[0, 20], true, false)));
        assert!(!c.mark(&mut (), &mut m, &view(&[0, 40], false, false)));
        assert!(c.mark(&mut (), &mut m, &view(&[0, 40], false, true)));
        assert!(!cc(0, 0).mark(&mut (), &mut m, &view(&[512], true, true)));
    }

    #[test]
    fn marking_rate_spaces_marks() {
        let c = cc(15, 2);
        let mut m = MarkCounter::default();
        let marks: Vec<bool> = (0..6)
            .map(|_| c.mark(&mut (), &mut m, &view(&[100], true, false)))
            .collect();
        assert_eq!(marks, [true, false, false, true, false, false]);
    }

    #[test]
    fn ccti_rises_to_limit_and_falls_to_min() {
        let c = cc(15, 0);
        let mut s = Ccti::default();
        for _ in 0..5 {
            c.on_becn(&mut s);
        }
        assert_eq!(s.0, 5);
        assert!((c.gap(&s) - 5e-7).abs() < 1e-15);
        let mut ticks = 0;
        while c.on_timer(&mut s) {
            ticks += 1;
        }
        assert_eq!((s.0, ticks), (1, 3));
    }
}
