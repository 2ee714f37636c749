import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from mmpp import *
from common import mu_of
mus = mu_of(9e-3, 7.27e-4)
for (p1, p2) in [(0.09, 0.06), (0.004, 0.004), (0.9, 0.1), (2.0, 0.5)]:
    for l1 in [2, 6, 10, 15, 20, 24]:
        for l2 in [0.0, 3.0]:
            m = M2(p1, p2, l1, l2)
            if m.rate() >= 0.97 * mus: continue
            try:
                f, info = output_fit(m, mus)
                if info["note"] or f.l2 < 0 or f.l1 < 0:
                    print(p1, p2, l1, l2, f, info["note"])
            except Exception as ex:
                print(p1, p2, l1, l2, "ERR", ex)
print("done")
