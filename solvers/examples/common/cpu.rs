//! CPU time of this process for the examples' timings (shared by the
//! examples that include it with `#[path = "common/cpu.rs"] mod cpu;`).

/// User + system CPU seconds of this process from /proc/self/stat (Linux;
/// clock ticks of 1/100 s), if /proc says.
pub fn seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start at ')'.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
