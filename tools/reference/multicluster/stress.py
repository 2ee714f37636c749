"""Stress cases (non-paper): the mu_b <= 0 clamp of the W-25 chain, strong burstiness, slow
modulation, very low load, large user levels (xi s > 1: copies in the C/D), lambda2 > lambda1.
Prints reference vs repro per case.    python3 stress.py > stress_out.txt"""
import json
import model
from compare import rust
from cases import ch4_params, ch5_params, NET, saturation_point

netA = {"bandwidth": 1000, "network_latency": 0.05, "switch_latency": 0.02}
netB = {"bandwidth": 450, "network_latency": 0.2, "switch_latency": 0.03}
cases = []
# strong bursts: phase-1 rate 20x the mean; mu_b = 1/T - lambda_1 < 0 on busy stages
for fr in (0.2, 0.5, 0.8):
    p = ch4_params("wu-4.5c", 512, None, phi1=0.19, phi2=0.01)
    cases.append((f"burst 20x wu-4.5c-like {fr}sat", p, fr))
    p = ch4_params("wu-4.7", 512, None, phi1=0.95, phi2=0.05, xi=0.3, eta_in=0.5)
    cases.append((f"burst 20x 4.7-like xi .3 {fr}sat", p, fr))
p = ch4_params("wu-4.5b", 1024, None, phi1=0.0005, phi2=0.0005)
cases.append(("very slow modulation phi .0005 0.7sat", p, 0.7))
cases.append(("very low load 1e-3 sat", ch4_params("wu-4.6a", 512, None), 1e-3))
cases.append(("lambda2 > lambda1 (phase 2 busy)", ch4_params("wu-4.6b", 512, None, lambda2=0.0005), 0.5))
cl = [{"m": 4, "n": 2, "user_level": 0.9, "acn": netA}] * 2 + [{"m": 4, "n": 3, "user_level": 0.6, "acn": netB}] * 2
cases.append(("ch5 user levels .9/.6 (xi s up to 9)", dict(clusters=cl, m_c=4, ecn=netB, icn=netA, omega=16, Lf=512,
              phi1=0.3, phi2=0.1, lambda2=0.0), 0.6))
cases.append(("ch5 user levels .9/.6 burst 20x", dict(clusters=cl, m_c=4, ecn=netB, icn=netA, omega=16, Lf=512,
              phi1=0.95, phi2=0.05, lambda2=0.0), 0.6))
cases.append(("ch5 config (ii) burst 20x om64 Lf512", ch5_params("ii", 64, 512, 0.19, 0.01, None), 0.5))
worst = 0.0
for name, p, fr in cases:
    ls = saturation_point(dict(p, lambda1=None), rtol=1e-4)
    q = dict(p, lambda1=fr * ls)
    me = model.solve(q)
    rs = rust(q)
    line = f"{name:<42s} lambda1 {q['lambda1']:.6g}: status {me['status']}/{rs.get('status')}"
    if me["status"] == "ok" and rs.get("status") == "ok":
        e = {k: abs(rs['metrics'][k] - v) / abs(v) for k, v in me["metrics"].items()}
        k = max(e, key=e.get)
        worst = max(worst, e[k])
        line += (f"  latency {me['metrics']['latency']:.8g}/{rs['metrics']['latency']:.8g}; worst {k} {e[k]:.1e};"
                 f" mu_b clamps (distinct queues) ref {me['info']['mu_clamped']}, repro 'clamped' {rs['metrics'].get('clamped')};"
                 f" IPP clamps ref {me['info']['ipp_clamps']}")
    print(line, flush=True)
print(f"worst relative difference over all metrics: {worst:.2e}")
