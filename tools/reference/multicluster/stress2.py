"""Stress cases that provoke the mu_b <= 0 clamp of the W-25 chain (bursts 20x the mean on ACN
channels with f_A close to 1) and the IPP clamp of the HL fit.   python3 stress2.py > stress2_out.txt"""
import model
from compare import rust
from cases import NET, saturation_point
from mmpp2 import MMPP, multiplier, chars, hl_fit

netA = {"bandwidth": 1000, "network_latency": 0.05, "switch_latency": 0.02}
worst = 0.0
for chan in ("derived", "printed"):
    for fr in (0.1, 0.3, 0.6, 0.9):
        p = dict(m=4, n=4, C=4, xi=0.05, eta_in=1.0, acn=netA, ecn=netA, icn=netA, omega=40, Lf=512,
                 phi1=0.19, phi2=0.01, lambda2=0.0, channels=chan, lambda1=None)
        ls = saturation_point(p, rtol=1e-5)
        q = dict(p, lambda1=fr * ls)
        me = model.solve(q)
        rs = rust(q)
        line = f"ACN bursts 20x, channels {chan}, {fr} sat (lambda1 {q['lambda1']:.6g}): status {me['status']}/{rs.get('status')}"
        if me["status"] == "ok" and rs.get("status") == "ok":
            e = {k: abs(rs['metrics'][k] - v) / abs(v) for k, v in me["metrics"].items()}
            k = max(e, key=e.get)
            worst = max(worst, e[k])
            line += (f"; latency {me['metrics']['latency']:.10g}/{rs['metrics']['latency']:.10g}; worst {k} {e[k]:.1e};"
                     f" mu_b clamped: ref {me['info']['mu_clamped']} distinct queues, repro 'clamped' {rs['metrics'].get('clamped')}")
        print(line, flush=True)
print(f"worst relative difference: {worst:.2e}")
