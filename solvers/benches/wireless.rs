//! Wu ch.6–7 costs: events per second of the qnet engine on the 9x9
//! chapter-6 network (Case 1, sigma = 0.1, slotted service, lambda_s1 = 4.8,
//! i.e. 0.8 of the model's saturation point), and the time of one model
//! point of each chapter (9x9; ch.6 at 0.9 of saturation, ch.7 at
//! Fig. 7.6's lambda_s1 = 10).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use solvers::engines::qnet::{self, Slotted};
use solvers::systems::wireless::flow::FitMemo;
use solvers::systems::wireless::mesh::{mesh_layout, Mesh};
use solvers::systems::wireless::ServiceKind;
use solvers::{Fidelity, Registry, TaskContext};

fn benches(c: &mut Criterion) {
    let ctx = TaskContext::new(1, Fidelity::Full);
    let layout = mesh_layout(&Mesh::bench_case1(4.8).unwrap(), ServiceKind::Slotted).unwrap();
    let len = qnet::RunLength {
        warmup: 0.0,
        horizon: 20.0,
        max_packets: 10_000_000,
    };
    let first = qnet::run(&layout.scenario, &layout.routing, &Slotted, len, 1, 0, &ctx).unwrap();
    let events = first.events;
    // The same run counted as changes of state, the way a simulator with a
    // message per arrival (OMNeT++) counts its events: here a completion and
    // the arrival it causes are one calendar event. No warm-up, so the group
    // counters cover the whole run; slotted service has no link events, so
    // the source events are `events − departures`, of which `generated`
    // were arrivals and the rest phase switches.
    let arrivals: u64 = first.groups.iter().map(|g| g.arrivals).sum();
    let departures: u64 = first.groups.iter().map(|g| g.departures).sum();
    let switches = events - departures - first.generated;
    let changes = arrivals + departures + switches;
    // Criterion measures wall time, which on a shared machine counts other
    // processes' time slices too; the thread's own CPU time (Linux schedstat)
    // gives the honest single-core rate. Printed once, before the groups.
    if let Some(t0) = thread_cpu_ns() {
        let reps = 10;
        for _ in 0..reps {
            qnet::run(&layout.scenario, &layout.routing, &Slotted, len, 1, 0, &ctx).unwrap();
        }
        let dt = (thread_cpu_ns().unwrap() - t0) as f64 * 1e-9;
        println!(
            "qnet 9x9 ch6: {events} events per run, {:.2} M events per CPU second ({:.1} ms CPU per run)",
            (reps as f64 * events as f64) / dt / 1e6,
            dt / reps as f64 * 1e3
        );
        println!(
            "qnet 9x9 ch6: {changes} changes of state per run ({arrivals} arrivals, {departures} service completions, {switches} phase switches), {:.2} M per CPU second",
            (reps as f64 * changes as f64) / dt / 1e6,
        );
    }
    let mut g = c.benchmark_group("wireless");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function("qnet_9x9_ch6_20s", |b| {
        b.iter(|| qnet::run(&layout.scenario, &layout.routing, &Slotted, len, 1, 0, &ctx).unwrap())
    });
    g.throughput(Throughput::Elements(1));
    let r = Registry::with_all();
    let m6 = r.get("wlan_mesh.model").unwrap();
    let p6 = json!({
        "grid": 9, "sigma": 0.1, "mr_types": [{"count": 81, "aps": 3, "stations": 5}],
        "t_wlan": 7.27e-4, "t_mesh": 1.48e-4, "p_station": 9e-3, "p_ap_up": 2e-2,
        "p_ap_down": 4e-2, "p_mr": 6e-2, "phi1": 0.09, "phi2": 0.06, "lambda1": 5.4, "lambda2": 0.0,
    });
    if let Some(t0) = thread_cpu_ns() {
        let reps = 5;
        for _ in 0..reps {
            FitMemo::clear();
            m6.solve(&p6, &ctx).unwrap();
        }
        let dt = (thread_cpu_ns().unwrap() - t0) as f64 * 1e-9;
        println!(
            "wlan_mesh.model 9x9 point: {:.1} ms CPU",
            dt / reps as f64 * 1e3
        );
    }
    g.bench_function("wlan_mesh.model_9x9_point", |b| {
        b.iter(|| {
            FitMemo::clear();
            m6.solve(&p6, &ctx).unwrap()
        })
    });
    let m7 = r.get("wlan_access.model").unwrap();
    let p7 = json!({
        "grid": 9, "stations": 5, "K_s": 32, "K_a": 48, "K_r": 64,
        "t_wlan": 7.27e-4, "t_mesh": 1.48e-4, "p_station": 2.5e-3, "p_ap": 7e-3,
        "p_mr": [8.2e-2, 7.3e-2, 6.4e-2, 5.5e-2], "phi1": 0.8, "phi2": 0.2, "lambda1": 10.0, "lambda2": 0.0,
    });
    g.bench_function("wlan_access.model_9x9_point", |b| {
        b.iter(|| m7.solve(&p7, &ctx).unwrap())
    });
    g.finish();
}

/// CPU time of the calling thread in ns (first field of Linux's schedstat).
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

criterion_group!(wireless_benches, benches);
criterion_main!(wireless_benches);
