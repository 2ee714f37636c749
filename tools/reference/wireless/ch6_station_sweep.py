import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import *
from mmpp import *
panels = [("6.3a",1,.09,.06),("6.3b",1,.08,.02),("6.3c",1,.09,.03),("6.3d",1,.004,.004),
          ("6.4a",2,.07,.035),("6.4b",2,.06,.02),("6.4c",2,.04,.01),("6.4d",2,.09,.09)]
base = {"grid": 9, "t_wlan": 7.27e-4, "t_mesh": 1.48e-4, "p_station": 9e-3, "p_ap_up": 2e-2,
        "p_ap_down": 4e-2, "p_mr": 6e-2, "lambda2": 0.0}
mus = mu_of(9e-3, 7.27e-4)
worst = 0
for name, case, p1, p2 in panels:
    for s in (0.1, 0.15):
        for frac in (0.3, 0.7, 0.95):
            q = dict(base); q.update(sigma=s, phi1=p1, phi2=p2)
            q["mr_types"] = [{"count": 81, "aps": 3, "stations": 5}] if case == 1 else \
                [{"count": 40, "aps": 3, "stations": 4}, {"count": 41, "aps": 2, "stations": 6}]
            Tmax = (2.409 if case == 1 else 3.011) * s / 0.1
            lam_bar = frac * Tmax
            q["lambda1"] = lam_bar * (p1 + p2) / p2
            src = M2(p1, p2, q["lambda1"], 0.0)
            ref = mmpp_m1(src, mus)["D"]
            out = solve("wlan_mesh.model", q)
            sv = out.get("metrics", {}).get("D_station")
            r = rel(sv, ref) if sv is not None else float("nan")
            worst = max(worst, r) if r == r else worst
            print(f"{name} sigma={s} lambda1={q['lambda1']:.5g} | D_station ref {ref:.12g} | solver {sv} | rel {r:.2e} | status {out.get('status')}")
print("worst", worst)
