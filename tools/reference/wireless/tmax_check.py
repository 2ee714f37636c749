import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import *
from ch6_poisson import ref_ch6_poisson
base = {"t_wlan": 7.27e-4, "t_mesh": 1.48e-4, "p_station": 9e-3, "p_ap_up": 2e-2, "p_ap_down": 4e-2, "p_mr": 6e-2,
        "phi1": 0.08, "phi2": 0.04, "lambda1": 0.1, "lambda2": 0.0}
def c2(n):
    C = n * n; h = C // 2
    return [{"count": h, "aps": 3, "stations": 4}, {"count": C - h, "aps": 2, "stations": 6}]
rows = [("wu-6.5a", 10, 0.05, 1.523), ("wu-6.5b", 6, 0.02, 0.582)] + \
       [("wu-6.6", 6, s, v) for s, v in [(0.005, .145), (0.01, .291), (0.015, .436), (0.03, .874), (0.04, 1.167), (0.05, 1.461)]] + \
       [("wu-6.3 case1", 9, 0.1, 2.409), ("wu-6.3 case1", 9, 0.15, 3.612), ("wu-6.4 case2", 9, 0.1, 3.011), ("wu-6.4 case2", 9, 0.15, 4.515)]
for name, n, s, cat in rows:
    q = dict(base); q.update(grid=n, sigma=s)
    q["mr_types"] = c2(n) if "case1" not in name else [{"count": 81, "aps": 3, "stations": 5}]
    r = ref_ch6_poisson(q)["T_max"]
    sv = solve("wlan_mesh.model", q).get("metrics", {}).get("T_max")
    print(f"{name} n={n} sigma={s} | catalogue {cat} | ref {r:.6g} | solver {sv} | rel(solver,ref) {rel(sv, r):.1e}")
