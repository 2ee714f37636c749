import sys, json; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import *
from ch6_mmpp import ref_ch6_mmpp
from ch7 import ref_ch7, base as b7
which = sys.argv[1]
P = {"grid": 3, "sigma": 0.2, "mr_types": [{"count": 9, "aps": 1, "stations": 2}], "t_wlan": 7.27e-4, "t_mesh": 1.48e-4,
     "p_station": 9e-3, "p_ap_up": 2e-2, "p_ap_down": 4e-2, "p_mr": 6e-2, "phi1": 0.09, "phi2": 0.06}
if which == "a":
    q = dict(P); q.update(lambda1=20.0, lambda2=0.5); solver = "wlan_mesh.model"; f = ref_ch6_mmpp
elif which == "b":
    q = dict(P); q.update(phi1=0.004, phi2=0.004, lambda1=8.0, lambda2=0.0, mr_types=[{"count": 9, "aps": 2, "stations": 3}]); solver = "wlan_mesh.model"; f = ref_ch6_mmpp
elif which == "c":
    q = dict(b7); q.update(stations=7, phi1=0.5, phi2=0.1, lambda1=5.0); solver = "wlan_access.model"; f = ref_ch7
elif which == "e":
    from ch7 import cases
    q = dict(cases[2][1]); q["source"] = "mmpp"; solver = "wlan_access.model"; f = ref_ch7
elif which == "f":
    q = dict(P); q.update(sigma=0.05, phi1=0.3, phi2=0.1, lambda1=4.0, lambda2=0.5, p_mr=float(__import__("os").environ.get("PMR", "0.3")),
        mr_types=[{"count": 4, "aps": 1, "stations": 3}, {"count": 5, "aps": 2, "stations": 1}]); solver = "wlan_mesh.model"; f = ref_ch6_mmpp
elif which == "h":
    q = dict(b7); q.update(lambda1=1000.0); solver = "wlan_access.model"; f = ref_ch7
elif which == "d":
    q = dict(b7); q.update(grid=5, stations=4, p_mr=[0.02, 0.03], phi1=0.3, phi2=0.2, lambda1=6.0, lambda2=1.0, K_s=8, K_a=10, K_r=6); solver = "wlan_access.model"; f = ref_ch7
if which == "e":
    pass
r = f(q)
m = solve(solver, q).get("metrics", {})
for k, v in r.items():
    sv = m.get(k)
    print(f"stress-{which} | {k:16s} | {v:.10g} | {sv} | {rel(sv, v) if sv is not None else 'NA'}", flush=True)
print(json.dumps(q))
