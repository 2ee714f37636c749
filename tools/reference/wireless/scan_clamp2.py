import sys, time; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from mmpp import *
from common import mu_of
mus = mu_of(9e-3, 7.27e-4)
for (p1, p2) in [(0.09, 0.06), (0.9, 0.1), (2.0, 0.5), (0.5, 2.0), (5.0, 5.0)]:
    for frac in [0.2, 0.5, 0.8]:
        lam_bar = frac * mus
        l1 = lam_bar * (p1 + p2) / p2
        m = M2(p1, p2, l1, 0.0)
        t0 = time.time()
        f, info = output_fit(m, mus)
        print(p1, p2, round(l1, 3), f, info["note"], f"{time.time()-t0:.1f}s", flush=True)
