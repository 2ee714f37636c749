import sys, math, json
import numpy as np
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import *

def ref_ch6_poisson(p, averaging="traffic"):
    lam = mean_rate(p)
    eps, lay, st = visit_ratios(p)
    tl, tm, s = p["t_wlan"], p["t_mesh"], p["sigma"]
    mus = mu_of(p["p_station"], tl); mau = mu_of(p["p_ap_up"], tl)
    mad = mu_of(p["p_ap_down"], tl); mr = mu_of(p["p_mr"], tm)
    Ntot = st.sum(); Lam = Ntot * lam
    def mm1(l, m):
        return 1.0 / (m - l) if l < m else float("inf")
    Ds = mm1(lam, mus)
    # uplink APs
    wau = []; dau = []; wr = []; dr = []; wad = []; dad = []
    for i, (a, k) in enumerate(lay):
        for j in range(a):
            wau.append(k); dau.append(mm1(k * lam, mau))
        wr.append(eps[i]); dr.append(mm1(eps[i] * Lam, mr))
        for j in range(a):
            wad.append(s * eps[i] / a); dad.append(mm1(s * eps[i] * Lam / a, mad))
    return ch6_result(averaging, s, tm, tl, Ds, mus, mau, mr, mad, lay, eps, Ntot,
                      wau, dau, wr, dr, wad, dad)

base = {"t_wlan": 7.27e-4, "t_mesh": 1.48e-4, "p_station": 9e-3, "p_ap_up": 2e-2,
        "p_ap_down": 4e-2, "p_mr": 6e-2}
cases = []
def add(name, **kw):
    d = dict(base); d.update(kw); cases.append((name, d))
add("case1 9x9 s=.1 paper", grid=9, sigma=0.1, mr_types=[{"count": 81, "aps": 3, "stations": 5}],
    phi1=0.09, phi2=0.06, lambda1=3.0, lambda2=0.0)
add("case2 9x9 s=.15 paper", grid=9, sigma=0.15, mr_types=[{"count": 40, "aps": 3, "stations": 4}, {"count": 41, "aps": 2, "stations": 6}],
    phi1=0.07, phi2=0.035, lambda1=5.0, lambda2=0.0)
add("case2 6x6 s=.05 nonpaper", grid=6, sigma=0.05, mr_types=[{"count": 18, "aps": 3, "stations": 4}, {"count": 18, "aps": 2, "stations": 6}],
    phi1=0.08, phi2=0.06, lambda1=1.5, lambda2=0.7)
add("mixed 4x4 s=.3 nonpaper", grid=4, sigma=0.3, mr_types=[{"count": 5, "aps": 1, "stations": 2}, {"count": 7, "aps": 4, "stations": 3}, {"count": 4, "aps": 2, "stations": 7}],
    phi1=0.5, phi2=0.2, lambda1=2.0, lambda2=1.0, t_wlan=5e-4, t_mesh=2e-4, p_station=0.02, p_ap_up=0.05, p_ap_down=0.03, p_mr=0.1)
add("3x3 s=.2 brief example", grid=3, sigma=0.2, mr_types=[{"count": 9, "aps": 1, "stations": 2}],
    phi1=0.09, phi2=0.06, lambda1=3.0, lambda2=0.5)
add("2x2 s=1 nonpaper", grid=2, sigma=1.0, mr_types=[{"count": 1, "aps": 2, "stations": 3}, {"count": 3, "aps": 1, "stations": 1}],
    phi1=1.0, phi2=1.0, lambda1=4.0, lambda2=2.0)
add("case1 9x9 s=.1 near sat", grid=9, sigma=0.1, mr_types=[{"count": 81, "aps": 3, "stations": 5}],
    phi1=0.09, phi2=0.06, lambda1=5.9, lambda2=0.0)
add("sigma small 5x5 (eps>1)", grid=5, sigma=0.02, mr_types=[{"count": 25, "aps": 1, "stations": 1}],
    phi1=0.1, phi2=0.1, lambda1=0.6, lambda2=0.2, p_mr=0.5)

if __name__ == "__main__":
    rows = []
    for averaging in ("traffic", "printed"):
        for name, p in cases:
            q = dict(p); q["source"] = "poisson"; q["averaging"] = averaging
            r = ref_ch6_poisson(q, averaging)
            out = solve("wlan_mesh.model", q)
            m = out.get("metrics", out)
            for k, v in r.items():
                sv = m.get(k) if isinstance(m, dict) else None
                print(f"{averaging:8s} | {name:28s} | {k:10s} | {v:.10g} | {sv} | {rel(sv, v) if isinstance(sv,(int,float)) else 'NA'}")
        
    print(json.dumps(out)[:400])
