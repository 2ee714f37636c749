//! Output analysis: time averages, tallies, batch means and Student-t 95% CIs.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Two-sided 95% Student-t quantile t_{0.975, dof}.
pub fn student_t_975(dof: u64) -> f64 {
    if dof == 0 {
        return f64::INFINITY;
    }
    StudentsT::new(0.0, 1.0, dof as f64)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(1.959_963_984_540_054)
}

/// Mean and 95% half-width of independent, identically distributed samples
/// (batch means or replication means). Half-width is infinite with one sample.
pub fn ci95(samples: &[f64]) -> (f64, f64) {
    let n = samples.len();
    if n == 0 {
        return (f64::NAN, f64::INFINITY);
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, f64::INFINITY);
    }
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, student_t_975(n as u64 - 1) * (var / n as f64).sqrt())
}

/// Time integral of a piecewise-constant quantity (queue length, busy flag).
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeAverage {
    start: f64,
    last_t: f64,
    value: f64,
    area: f64,
}

impl TimeAverage {
    pub fn new(t0: f64, value: f64) -> Self {
        TimeAverage {
            start: t0,
            last_t: t0,
            value,
            area: 0.0,
        }
    }

    /// The quantity changes to `value` at time `t`.
    #[inline]
    pub fn set(&mut self, t: f64, value: f64) {
        self.area += self.value * (t - self.last_t);
        self.last_t = t;
        self.value = value;
    }

    /// Forgets the past (end of warm-up or of a batch) keeping the current value.
    pub fn reset(&mut self, t: f64) {
        self.area = 0.0;
        self.start = t;
        self.last_t = t;
    }

    /// Average over [start, t].
    pub fn mean(&self, t: f64) -> f64 {
        let area = self.area + self.value * (t - self.last_t);
        let span = t - self.start;
        if span > 0.0 {
            area / span
        } else {
            self.value
        }
    }

    pub fn current(&self) -> f64 {
        self.value
    }
}

/// Sum and count of observations (sojourn times, losses).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    pub sum: f64,
    pub count: u64,
}

impl Tally {
    #[inline]
    pub fn add(&mut self, x: f64) {
        self.sum += x;
        self.count += 1;
    }
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        }
    }
}

/// Collects one value per batch (or per replication) for each named metric and
/// turns them into (mean, half-width, n).
#[derive(Debug, Clone, Default)]
pub struct BatchStats {
    names: Vec<&'static str>,
    values: Vec<Vec<f64>>,
}

impl BatchStats {
    pub fn new(names: &[&'static str]) -> Self {
        BatchStats {
            names: names.to_vec(),
            values: vec![Vec::new(); names.len()],
        }
    }

    /// Records one batch: `values` in the order of `names`.
    pub fn push(&mut self, values: &[f64]) {
        assert_eq!(values.len(), self.names.len());
        for (v, x) in self.values.iter_mut().zip(values) {
            v.push(*x);
        }
    }

    pub fn batches(&self) -> usize {
        self.values.first().map_or(0, Vec::len)
    }

    /// Writes every metric with its CI into `out`.
    pub fn into_outcome(self, mut out: crate::Outcome) -> crate::Outcome {
        for (name, v) in self.names.iter().zip(&self.values) {
            let (m, h) = ci95(v);
            out = out.with_estimate(name, m, h, v.len() as u64);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles() {
        assert!((student_t_975(9) - 2.262_157).abs() < 1e-5);
        assert!((student_t_975(1) - 12.706_2).abs() < 1e-3);
        assert!((student_t_975(10_000) - 1.960_2).abs() < 1e-3);
    }

    #[test]
    fn ci_of_known_samples() {
        let (m, h) = ci95(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        // s = sqrt(5/3), t_{0.975,3} = 3.182446
        let expect = 3.182_446 * (5.0f64 / 3.0 / 4.0).sqrt();
        assert!((h - expect).abs() < 1e-5);
    }

    #[test]
    fn time_average() {
        let mut a = TimeAverage::new(0.0, 0.0);
        a.set(1.0, 2.0);
        a.set(3.0, 0.0);
        assert!((a.mean(4.0) - 1.0).abs() < 1e-15);
        a.reset(4.0);
        assert_eq!(a.mean(5.0), 0.0);
    }
}
