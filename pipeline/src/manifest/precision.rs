//! A series' `precision:` target (moved unchanged from parse.rs, which
//! calls it, to keep that file under the 600-line limit).

use super::limits;
use super::place::Ctx;
use super::raw::RawPrecision;
use super::values::check_name;
use super::{ManifestError, Precision, PrecisionTarget};

/// Checks a series' `precision:` (the metric's name is checked against the
/// solver's outputs only when results arrive: solvers declare no metric list).
pub(super) fn precision(
    ctx: &Ctx,
    key: &str,
    p: &RawPrecision,
    kind: solvers::Kind,
    replications: u32,
) -> Result<Precision, ManifestError> {
    if kind != solvers::Kind::Simulation {
        return Err(ctx.err(key, "only a simulation series can have a precision target"));
    }
    check_name(ctx, &format!("{key}.metric"), &p.metric)?;
    let positive = |k: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(ctx.err(
                &format!("{key}.{k}"),
                format!("must be a finite number > 0 (got {v})"),
            ))
        }
    };
    let target = match (p.rel_half_width, p.half_width) {
        (Some(r), None) => PrecisionTarget::Relative(positive("rel_half_width", r)?),
        (None, Some(h)) => PrecisionTarget::Absolute(positive("half_width", h)?),
        _ => return Err(ctx.err(
            key,
            "give exactly one of rel_half_width (relative to the mean) and half_width (absolute)",
        )),
    };
    let max = p.max_replications;
    let mkey = format!("{key}.max_replications");
    if max < replications.max(2) {
        return Err(ctx.err(
            &mkey,
            format!("must be >= 2 and >= the series' replications ({replications})"),
        ));
    }
    if max > limits::MAX_REPLICATIONS {
        return Err(ctx.err(
            &mkey,
            format!(
                "{max} replications; the limit is {}",
                limits::MAX_REPLICATIONS
            ),
        ));
    }
    Ok(Precision {
        metric: p.metric.clone(),
        target,
        max_replications: max,
    })
}
