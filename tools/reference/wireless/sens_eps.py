import sys, math; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import ch6_mmpp, mmpp
from common import *
q = {"grid": 3, "sigma": 0.05, "mr_types": [{"count": 4, "aps": 1, "stations": 3}, {"count": 5, "aps": 2, "stations": 1}], "t_wlan": 0.000727, "t_mesh": 0.000148, "p_station": 0.009, "p_ap_up": 0.02, "p_ap_down": 0.04, "p_mr": 0.02, "phi1": 0.3, "phi2": 0.1, "lambda1": 4.0, "lambda2": 0.5}
a = ch6_mmpp.ref_ch6_mmpp(q)
# variant: eps>1 handled as a plain rate scaling of MMPP_tr (no copies+fit)
orig = mmpp.superpose_fit
def fake(comps, t=None):
    if t is not None and len(comps) >= 1 and comps[0][1] >= 1 and len(set(id(c) for c, k in comps)) <= 2:
        tot = sum(k * c.rate() for c, k in comps)
        base = comps[0][0]
        return base.scale(tot / base.rate()), "scaled"
    return orig(comps, t)
ch6_mmpp.superpose_fit = fake
b = ch6_mmpp.ref_ch6_mmpp(q)
for k in a: print(f"{k}: copies+fit {a[k]:.10g} | plain scaling {b[k]:.10g} | rel {abs(a[k]-b[k])/a[k]:.2e}")
