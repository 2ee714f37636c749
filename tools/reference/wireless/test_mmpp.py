import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from mmpp import *
m = M2(0.6, 0.2, 2.0, 0.5)
c = mmpp_chars(m, 1.7)
print(c, mmpp_var_closed(m, 1.7) / (m.rate() * 1.7))
f, note = hl_fit(c["lam"], c["idc_inf"], c["idc_t"], c["g3"], 1.7)
print("refit", f, note)
m = M2(0.09, 0.06, 3.0, 0.0)
q = mmpp_m1(m, 12.436)
print(q["D"], q["L"])
# check vs truncated CTMC
import numpy as np
D0, D1, pi = departure_map(m, 12.436)
n = D0.shape[0]; lev = np.repeat(np.arange(n // 2), 2)
print("L trunc", pi @ lev, "rate", pi @ (D1 @ np.ones(n)))
fit, info = output_fit(m, 12.436)
print(fit, info)
