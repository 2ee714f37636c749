//! Destination plug-ins of the flit engine ([`super::Destinations`]):
//! uniform, hot spot (Wu §3.1.4, SIM-4) and clustered with hierarchical
//! locality (Wu §4.3.1 / catalogue §3.2 "Destination sampling in the
//! simulator", SIM-5). Each draws from the engine's stream in a fixed order,
//! so a run is reproducible for its seed; none allocates per message.

use super::torus::below;
use super::Destinations;
use crate::des::Stream;

/// Uniform over the other `nodes − 1` nodes.
#[derive(Debug, Clone, Copy)]
pub struct Uniform {
    pub nodes: u32,
}

#[inline]
fn other_than(src: u32, nodes: u32, rng: &mut Stream) -> u32 {
    let x = below(rng, nodes as usize - 1) as u32;
    if x >= src {
        x + 1
    } else {
        x
    }
}

impl Destinations for Uniform {
    fn relays(&self) -> bool {
        false
    }
    fn nodes(&self) -> u32 {
        self.nodes
    }
    #[inline]
    fn pick(&self, src: u32, rng: &mut Stream) -> u32 {
        other_than(src, self.nodes, rng)
    }
}

/// Hot spot (Wu §3.1.4): with probability `delta` a message of any node but
/// `node` goes to `node`; otherwise (and always from `node`) uniform over the
/// other `nodes − 1` nodes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotSpot {
    pub nodes: u32,
    pub node: u32,
    pub delta: f64,
}

impl Destinations for HotSpot {
    fn relays(&self) -> bool {
        false
    }
    fn nodes(&self) -> u32 {
        self.nodes
    }
    #[inline]
    fn pick(&self, src: u32, rng: &mut Stream) -> u32 {
        if src != self.node && rng.uniform() < self.delta {
            self.node
        } else {
            other_than(src, self.nodes, rng)
        }
    }
}

/// Clusters of `cluster` consecutive node ids with a locality hierarchy
/// inside each (Wu ch.4; catalogue §3.2): with probability `xi` the
/// destination is uniform over the nodes of the other clusters; otherwise it
/// is in the source's cluster, in distance class j with probability w_j and
/// uniform within the class. Class j of source s is the nodes that share s's
/// block of size b_j but not its block of size b_{j−1} (b_0 = 1 < b_1 < … <
/// b_L = cluster, each dividing the next). With node ids numbered as in an
/// m-port n-tree (leaf switch = block of m/2 nodes, then blocks of (m/2)^j,
/// the top digit of radix m), class j is exactly the nodes 2j channels away,
/// and w_j ∝ |class j| η_in^j is P_{j,η_in} of (4.7).
#[derive(Debug, Clone, PartialEq)]
pub struct Clustered {
    nodes: u32,
    cluster: u32,
    /// b_0 = 1, b_1, …, b_L = cluster.
    blocks: Vec<u32>,
    /// Cumulative class probabilities, class j at index j − 1; the last is 1.
    cum: Vec<f64>,
    xi: f64,
}

impl Clustered {
    /// `blocks` = b_1 … b_L (the last is the cluster size), `weights` = w_1 …
    /// w_L (any non-negative scale, not all zero), `xi` ∈ [0, 1] the
    /// inter-cluster probability. Errors name the argument and the rule.
    pub fn new(nodes: u32, blocks: &[u32], weights: &[f64], xi: f64) -> Result<Self, String> {
        let Some(&cluster) = blocks.last() else {
            return Err("blocks: at least one level (the cluster size)".into());
        };
        if weights.len() != blocks.len() {
            return Err(format!(
                "weights: one per level ({}), got {}",
                blocks.len(),
                weights.len()
            ));
        }
        let mut b = vec![1u32];
        for &x in blocks {
            let last = *b.last().unwrap();
            if x <= last || !x.is_multiple_of(last) {
                return Err(format!(
                    "blocks: each must exceed and be a multiple of the one before, got {x} after {last}"
                ));
            }
            b.push(x);
        }
        if !nodes.is_multiple_of(cluster) {
            return Err(format!(
                "blocks: the cluster size {cluster} must divide the {nodes} nodes"
            ));
        }
        if !(xi.is_finite() && (0.0..=1.0).contains(&xi)) {
            return Err(format!("xi: must lie in [0, 1], got {xi}"));
        }
        if xi > 0.0 && nodes == cluster {
            return Err("xi: > 0 needs more than one cluster".into());
        }
        let total: f64 = weights.iter().sum();
        if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) || total.is_nan() || total <= 0.0 {
            return Err("weights: finite, >= 0 and not all zero".into());
        }
        let mut acc = 0.0;
        let mut cum: Vec<f64> = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        *cum.last_mut().unwrap() = 1.0;
        Ok(Clustered {
            nodes,
            cluster,
            blocks: b,
            cum,
            xi,
        })
    }

    /// Agrawal's locality η_in ∈ (0, 1] on the hierarchy: w_j ∝ |class j|·η^j
    /// (Wu 4.7); η = 1 is uniform over the other nodes of the cluster.
    pub fn with_locality(nodes: u32, blocks: &[u32], eta: f64, xi: f64) -> Result<Self, String> {
        if !(eta.is_finite() && eta > 0.0 && eta <= 1.0) {
            return Err(format!("eta: must lie in (0, 1], got {eta}"));
        }
        let mut prev = 1u32;
        let w: Vec<f64> = blocks
            .iter()
            .enumerate()
            .map(|(j, &b)| {
                let size = b.saturating_sub(prev) as f64;
                prev = b;
                size * eta.powi(j as i32 + 1)
            })
            .collect();
        Clustered::new(nodes, blocks, &w, xi)
    }

    /// Probability that a message leaves its cluster.
    pub fn xi(&self) -> f64 {
        self.xi
    }

    pub fn cluster(&self) -> u32 {
        self.cluster
    }
}

impl Destinations for Clustered {
    fn relays(&self) -> bool {
        false
    }
    fn nodes(&self) -> u32 {
        self.nodes
    }
    #[inline]
    fn pick(&self, src: u32, rng: &mut Stream) -> u32 {
        let c = self.cluster;
        if self.xi > 0.0 && rng.uniform() < self.xi {
            let x = below(rng, (self.nodes - c) as usize) as u32;
            let base = src / c * c;
            return if x >= base { x + c } else { x };
        }
        let u = rng.uniform();
        let j = self
            .cum
            .iter()
            .position(|&p| u < p)
            .unwrap_or(self.cum.len() - 1)
            + 1;
        let (hi, lo) = (self.blocks[j], self.blocks[j - 1]);
        let hi_base = src / hi * hi;
        let lo_base = src / lo * lo;
        let mut x = hi_base + below(rng, (hi - lo) as usize) as u32;
        if x >= lo_base {
            x += lo;
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts<D: Destinations>(d: &D, src: u32, n: usize) -> Vec<u32> {
        let mut rng = Stream::new(3, 0);
        let mut c = vec![0u32; d.nodes() as usize];
        for _ in 0..n {
            c[d.pick(src, &mut rng) as usize] += 1;
        }
        c
    }

    #[test]
    fn uniform_and_hot_spot_never_pick_the_source() {
        let n = 200_000;
        let c = counts(&Uniform { nodes: 10 }, 4, n);
        assert_eq!(c[4], 0);
        for (i, &x) in c.iter().enumerate() {
            if i != 4 {
                assert!((x as f64 / n as f64 - 1.0 / 9.0).abs() < 0.005);
            }
        }
        let h = HotSpot {
            nodes: 10,
            node: 0,
            delta: 0.3,
        };
        let c = counts(&h, 4, n);
        assert_eq!(c[4], 0);
        // δ + (1 − δ)/9 to the hot spot.
        let p0 = c[0] as f64 / n as f64;
        assert!((p0 - (0.3 + 0.7 / 9.0)).abs() < 0.005, "{p0}");
        // The hot spot's own traffic is regular.
        let c = counts(&h, 0, n);
        assert_eq!(c[0], 0);
        assert!((c[1] as f64 / n as f64 - 1.0 / 9.0).abs() < 0.005);
    }

    #[test]
    fn clustered_classes_follow_the_hierarchy() {
        // 4 clusters of 16 = blocks 2, 8, 16 (an m = 4-port 3-tree's ids).
        let d = Clustered::new(64, &[2, 8, 16], &[1.0, 2.0, 1.0], 0.25).unwrap();
        let n = 400_000;
        let src = 21; // cluster 1 (16..32), 8-block 16..24, 2-block 20..22
        let c = counts(&d, src, n);
        assert_eq!(c[src as usize], 0);
        let frac = |r: std::ops::Range<usize>| c[r].iter().sum::<u32>() as f64 / n as f64;
        let out = frac(0..16) + frac(32..64);
        assert!((out - 0.25).abs() < 0.004, "{out}");
        // Intra: class 1 = {20}, class 2 = 16..24 minus 20..22, class 3 = 24..32.
        assert!((frac(20..21) - 0.75 * 0.25).abs() < 0.004);
        assert!((frac(16..20) + frac(22..24) - 0.75 * 0.5).abs() < 0.004);
        assert!((frac(24..32) - 0.75 * 0.25).abs() < 0.004);
        // Uniform inside a class and over the other clusters.
        assert!((frac(16..17) - frac(23..24)).abs() < 0.004);
        assert!((frac(0..16) - frac(48..64)).abs() < 0.006);
        // η = 1 is uniform over the other 15 nodes of the cluster.
        let u = Clustered::with_locality(64, &[2, 8, 16], 1.0, 0.0).unwrap();
        let c = counts(&u, 5, n);
        assert_eq!(c[5] + c[16..].iter().sum::<u32>(), 0);
        for (i, &x) in c[..16].iter().enumerate() {
            if i != 5 {
                assert!((x as f64 / n as f64 - 1.0 / 15.0).abs() < 0.003, "{i}");
            }
        }
    }

    #[test]
    fn clustered_refuses_bad_shapes() {
        assert!(Clustered::new(64, &[3, 16], &[1.0, 1.0], 0.1).is_err());
        assert!(Clustered::new(60, &[2, 16], &[1.0, 1.0], 0.1).is_err());
        assert!(Clustered::new(64, &[2, 16], &[1.0], 0.1).is_err());
        assert!(Clustered::new(64, &[2, 16], &[0.0, 0.0], 0.1).is_err());
        assert!(Clustered::new(16, &[2, 16], &[1.0, 1.0], 0.1).is_err());
        assert!(Clustered::new(64, &[2, 16], &[1.0, 1.0], 1.5).is_err());
        assert!(Clustered::with_locality(64, &[2, 16], 0.0, 0.1).is_err());
    }
}
