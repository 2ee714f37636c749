//! Yan ch.3's congestion control as a plug-in of the InfiniBand engine
//! (catalogue §1.1 and §6 SIM-3 plug-in A; errata Y-5, Y-6; §5 M-11;
//! docs/models/ratecc.md).
//!
//! - Marking (§3.3.1, after Santos et al. [109], input-triggered): every
//!   switch output keeps cnt1 (data packets in the switch waiting for it; the
//!   engine's count) and cnt2 (packets still to mark). When an input buffer
//!   becomes full, each output that packets in that buffer wait for copies
//!   cnt1 into cnt2; the next cnt2 data packets sent on that output carry ECN.
//! - The destination returns one ACK per data packet echoing the ECN bit.
//! - The source keeps a rate r (packets/s) per flow, starting at R_min of the
//!   flow's SL; each ACK applies f_dec (marked) or f_inc (unmarked); the flow
//!   sends its packets 1/r apart (the engine re-times the next one after each
//!   ACK), optionally with at most `window` packets unacknowledged.
//! - Admission control (§3.2): the high-priority SL gets twice the low one's
//!   bandwidth, realised by the scenario's VL arbitration table (a weighted
//!   low-priority table, `VlArbitration::weighted`; systems/ratecc).

use super::cc::{CongestionControl, PortView, Reply};

/// A source response function pair f_inc / f_dec (Yan §3.3.2-3.4). The
/// PIPD variants are the readings of eqs (3.6)-(3.10) worked out in
/// docs/models/ratecc.md ("The readings of PIPD"): the printed equations
/// raise a rate to powers, which only means something once the rate is made
/// a pure number, and each reading makes it one in another way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Response {
    /// N, the catalogue's normalised repair (Y-5), with x = r / R_max:
    /// f_dec(x) = max(x^m, x_min), f_inc(x) = min(x^(m^(-x_min/x)), 1).
    Pipd { m: f64 },
    /// P, as printed on the rate counted in a unit: r' = r * `unit` (the
    /// unit's count per packet/s: 1 for packets/s, 2.068 for kB/s with
    /// 2068-byte packets); f_dec(r') = max(r'^(1/m), R_min'),
    /// f_inc(r') = min(r'^(m^(R_min/r)), R_max'). With realistic rates it
    /// switches between R_min and R_max (Y-5).
    PipdPrinted { m: f64, unit: f64 },
    /// H, the printed forms applied to the headroom h = 1 - r/R_max (a pure
    /// number that the increase must shrink): f_dec: h -> h^(1/m),
    /// f_inc: h -> h^(m^(R_min/r)), the rate kept in [R_min, R_max].
    PipdHeadroom { m: f64 },
    /// S, the printed forms applied to u = r / R_min: f_dec: u -> max(u^(1/m), 1),
    /// f_inc: u -> u^(m^(R_min/r)), capped at R_max. From R_min (u = 1) no
    /// increase ever happens: 1^k = 1.
    PipdRmin { m: f64 },
    /// Q, the printed forms applied to x = r / R_max as they stand:
    /// f_dec(x) = max(x^(1/m), x_min) >= x and f_inc(x) = min(x^(m^(x_min/x)), 1)
    /// <= x: a marked ACK raises the rate, an unmarked one lowers it
    /// (without a floor: it can reach 0, and the flow then stops).
    PipdNormalisedPrinted { m: f64 },
    /// FIMD, eqs (3.11)-(3.12) as read in Y-6: f_dec(r) = max(r/n, R_min),
    /// f_inc(r) = min(r n^(R_min/r), R_max).
    Fimd { n: f64 },
}

impl Response {
    /// f_dec(r) for rates in packets/s, `lo` = R_min, `hi` = R_max.
    pub fn dec(self, r: f64, lo: f64, hi: f64) -> f64 {
        match self {
            Response::Pipd { m } => ((r / hi).powf(m) * hi).max(lo),
            Response::PipdPrinted { m, unit } => ((r * unit).powf(1.0 / m) / unit).max(lo),
            Response::PipdHeadroom { m } => (hi * (1.0 - (1.0 - r / hi).powf(1.0 / m))).max(lo),
            Response::PipdRmin { m } => lo * (r / lo).powf(1.0 / m).max(1.0),
            Response::PipdNormalisedPrinted { m } => ((r / hi).powf(1.0 / m) * hi).max(lo),
            Response::Fimd { n } => (r / n).max(lo),
        }
    }

    /// f_inc(r) for rates in packets/s, `lo` = R_min, `hi` = R_max.
    pub fn inc(self, r: f64, lo: f64, hi: f64) -> f64 {
        match self {
            Response::Pipd { m } => {
                let x = r / hi;
                (x.powf(m.powf(-(lo / hi) / x)) * hi).min(hi)
            }
            Response::PipdPrinted { m, unit } => ((r * unit).powf(m.powf(lo / r)) / unit).min(hi),
            Response::PipdHeadroom { m } => {
                let h = (1.0 - r / hi).max(0.0);
                (hi * (1.0 - h.powf(m.powf(lo / r)))).clamp(lo, hi)
            }
            Response::PipdRmin { m } => (lo * (r / lo).powf(m.powf(lo / r))).min(hi),
            Response::PipdNormalisedPrinted { m } => {
                let x = r / hi;
                if x <= 0.0 {
                    return 0.0;
                }
                (x.powf(m.powf((lo / hi) / x)) * hi).min(hi)
            }
            Response::Fimd { n } => (r * n.powf(lo / r)).min(hi),
        }
    }
}

/// The response and R_min (packets/s) of the flows of one SL.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlClass {
    pub response: Response,
    pub r_min: f64,
}

/// The plug-in. Rates in packets/s.
#[derive(Debug, Clone)]
pub struct YanEcn {
    /// Per SL (index = SL, 16 entries).
    pub classes: Vec<SlClass>,
    /// R_max: the link rate in packets/s.
    pub r_max: f64,
    /// Time the HCA needs per packet at its injection cap (seconds): the
    /// engine already spaces a flow's packets by this much, the gap adds the rest.
    pub t_pkt: f64,
    /// Most unacknowledged packets per flow (`None`: no window).
    pub window: Option<u32>,
}

/// Source state: the rate and the SL it belongs to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    pub r: f64,
    pub sl: u8,
}

/// Output state: packets still to mark (cnt2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cnt2(pub u32);

impl CongestionControl for YanEcn {
    type Source = Rate;
    type PortVl = ();
    type Port = Cnt2;

    fn enabled(&self) -> bool {
        true
    }

    fn init_source(&self, sl: u8) -> Rate {
        Rate {
            r: self.classes[sl as usize].r_min,
            sl,
        }
    }

    fn mark(&self, port: &mut Cnt2, _: &mut (), _: &PortView) -> bool {
        if port.0 > 0 {
            port.0 -= 1;
            true
        } else {
            false
        }
    }

    fn watches_input_full(&self) -> bool {
        true
    }

    fn on_input_full(&self, port: &mut Cnt2, waiting: u32) {
        port.0 = waiting;
    }

    fn reply(&self, _: bool) -> Reply {
        Reply::Ack
    }

    fn on_ack(&self, st: &mut Rate, ecn: bool) {
        let c = self.classes[st.sl as usize];
        st.r = if ecn {
            c.response.dec(st.r, c.r_min, self.r_max)
        } else {
            c.response.inc(st.r, c.r_min, self.r_max)
        };
    }

    fn on_becn(&self, _: &mut Rate) -> bool {
        false
    }

    fn on_timer(&self, _: &mut Rate) -> bool {
        false
    }

    fn timer_period(&self) -> f64 {
        f64::INFINITY
    }

    fn gap(&self, st: &Rate) -> f64 {
        (1.0 / st.r - self.t_pkt).max(0.0)
    }

    fn level(&self, st: &Rate) -> f64 {
        st.r
    }

    fn window(&self) -> u32 {
        self.window.unwrap_or(u32::MAX)
    }

    fn trace_level(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HI: f64 = 1.0 / 2.068e-6;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn pipd_normalised_matches_its_closed_form() {
        let p = Response::Pipd { m: 4.0 };
        let lo = HI / 256.0;
        // From R_min the rate jumps to R_min^(1/4) = 1/4 of R_max.
        assert!(close(p.inc(lo, lo, HI), 0.25 * HI));
        // Near the top the increase is slow: x^(4^(-x_min/x)).
        let x: f64 = 0.5;
        let want = x.powf(4f64.powf(-(1.0 / 256.0) / x)) * HI;
        assert!(close(p.inc(0.5 * HI, lo, HI), want));
        assert!(want > 0.5 * HI && want < 0.51 * HI);
        // A decrease is a power: 0.5 -> 0.0625; floored at R_min.
        assert!(close(p.dec(0.5 * HI, lo, HI), 0.0625 * HI));
        assert!(close(p.dec(0.2 * HI, lo, HI), lo));
        // Capped at R_max.
        assert!(close(p.inc(HI, lo, HI), HI));
        // Condition (3.1): f_inc(f_dec(r)) <= r away from the floor.
        for k in 1..100 {
            let r = HI * k as f64 / 100.0;
            let d = p.dec(r, lo, HI);
            if d > lo {
                assert!(p.inc(d, lo, HI) <= r, "{r}");
            }
        }
    }

    #[test]
    fn pipd_as_printed_is_bang_bang_on_absolute_rates() {
        let p = Response::PipdPrinted { m: 4.0, unit: 1.0 };
        let lo = HI / 256.0;
        assert!(close(p.dec(lo, lo, HI), lo));
        assert!(close(p.dec(HI, lo, HI), lo), "{}", p.dec(HI, lo, HI));
        assert!(close(p.inc(lo, lo, HI), HI));
        // The closed form itself where it stays below R_max: 2^(4^(1/2)) = 4.
        assert!(close(p.inc(2.0, 1.0, 1e9), 4.0));
        assert!(close(p.dec(81.0, 1.0, 1e9), 3.0));
    }

    /// P counted in kB/s (2.068 kB per packet) is bang-bang too: R_min is
    /// 3,906 kB/s, far above the ~6 units below which one power-m increase
    /// from R_min would stay under R_max = 256 R_min.
    #[test]
    fn pipd_as_printed_in_kb_per_s_is_bang_bang_as_well() {
        let p = Response::PipdPrinted {
            m: 4.0,
            unit: 2.068,
        };
        let lo = HI / 256.0;
        assert!(close(p.dec(0.5 * HI, lo, HI), lo));
        assert!(close(p.inc(lo, lo, HI), HI));
        // The unit only rescales the closed form: (2 x 2.068)^(4^(1/2)) / 2.068
        // (the exponent's R_min/r is a ratio, the same in every unit).
        assert!(close(
            p.inc(2.0, 1.0, 1e9),
            (2.0f64 * 2.068).powi(2) / 2.068
        ));
    }

    /// H: the printed forms on the headroom h = 1 - r/R_max.
    #[test]
    fn pipd_on_the_headroom_matches_its_closed_form() {
        let p = Response::PipdHeadroom { m: 4.0 };
        let lo = HI / 256.0;
        // From R_min: h = 255/256 -> h^4, r = (1 - (255/256)^4) R_max = 3.98 R_min.
        let want = (1.0 - (255.0f64 / 256.0).powi(4)) * HI;
        assert!(close(p.inc(lo, lo, HI), want));
        assert!(want > 3.9 * lo && want < 4.0 * lo);
        // A decrease takes the m-th root of the headroom: 0.5 -> 1 - 0.5^(1/4).
        assert!(close(
            p.dec(0.5 * HI, lo, HI),
            (1.0 - 0.5f64.powf(0.25)) * HI
        ));
        // Low rates fall about n = 4-fold, like FIMD: 8 R_min -> ~2 R_min.
        let d = p.dec(8.0 * lo, lo, HI) / lo;
        assert!(d > 2.0 && d < 2.05, "{d}");
        // Near the top the increase is about ln(m) R_min per ACK.
        let step = (p.inc(0.5 * HI, lo, HI) - 0.5 * HI) / lo;
        assert!((step - 0.96).abs() < 0.02, "{step}");
        // Condition (3.1) wherever the decrease stays above the floor.
        for k in 1..100 {
            let r = HI * k as f64 / 100.0;
            let d = p.dec(r, lo, HI);
            if d > lo {
                assert!(p.inc(d, lo, HI) <= r * (1.0 + 1e-12), "{r}");
            }
        }
    }

    /// S: on u = r/R_min the start R_min is a fixed point (1^k = 1).
    #[test]
    fn pipd_on_r_over_rmin_never_leaves_rmin() {
        let p = Response::PipdRmin { m: 4.0 };
        let lo = HI / 256.0;
        assert!(close(p.inc(lo, lo, HI), lo));
        assert!(close(p.dec(lo, lo, HI), lo));
        // Above R_min it does move: 16 R_min -> 2 R_min; 2 R_min -> 2^(4^(1/2)) = 4 R_min.
        assert!(close(p.dec(16.0 * lo, lo, HI), 2.0 * lo));
        assert!(close(p.inc(2.0 * lo, lo, HI), 4.0 * lo));
    }

    /// Q: the printed forms on x = r/R_max raise the rate on a mark and
    /// lower it on an unmarked ACK, down to 0.
    #[test]
    fn pipd_as_printed_on_normalised_rates_inverts_the_control() {
        let p = Response::PipdNormalisedPrinted { m: 4.0 };
        let lo = HI / 256.0;
        assert!(p.dec(0.25 * HI, lo, HI) > 0.25 * HI);
        assert!(close(p.dec(0.0625 * HI, lo, HI), 0.5 * HI));
        assert!(p.inc(0.25 * HI, lo, HI) < 0.25 * HI);
        assert!(close(p.inc(lo, lo, HI), lo / 256.0f64.powi(3)));
        assert_eq!(p.inc(0.0, lo, HI), 0.0);
    }

    #[test]
    fn fimd_matches_its_closed_form() {
        let f = Response::Fimd { n: 4.0 };
        let lo = HI / 256.0;
        assert!(close(f.inc(lo, lo, HI), 4.0 * lo));
        assert!(close(f.inc(4.0 * lo, lo, HI), 4.0 * lo * 4f64.powf(0.25)));
        assert!(close(f.dec(HI, lo, HI), HI / 4.0));
        assert!(close(f.dec(2.0 * lo, lo, HI), lo));
        assert!(close(f.inc(0.998 * HI, lo, HI), HI));
    }

    #[test]
    fn marking_counts_down_from_the_copied_cnt1() {
        let cc = YanEcn {
            classes: vec![
                SlClass {
                    response: Response::Fimd { n: 4.0 },
                    r_min: 1.0,
                };
                16
            ],
            r_max: 10.0,
            t_pkt: 0.1,
            window: None,
        };
        let v = PortView {
            voq_blocks: &[],
            capacity_blocks: 0,
            credits_available: true,
            victim_mask: false,
            packet_blocks: 1,
        };
        let mut p = Cnt2::default();
        assert!(!cc.mark(&mut p, &mut (), &v));
        cc.on_input_full(&mut p, 3);
        let marks: Vec<bool> = (0..5).map(|_| cc.mark(&mut p, &mut (), &v)).collect();
        assert_eq!(marks, [true, true, true, false, false]);
        // Rate 1/r apart: r = 2 packets/s, packet time 0.1 s -> gap 0.4 s.
        assert!(close(cc.gap(&Rate { r: 2.0, sl: 0 }), 0.4));
        let mut s = cc.init_source(3);
        assert_eq!(s, Rate { r: 1.0, sl: 3 });
        cc.on_ack(&mut s, false);
        assert!(close(s.r, 4.0));
        cc.on_ack(&mut s, true);
        assert!(close(s.r, 1.0));
    }
}
