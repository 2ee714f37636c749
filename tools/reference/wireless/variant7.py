import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from ch7 import ref_ch7, cases
for idx in (1, 4):
    name, p = cases[idx]
    q = dict(p); q["source"] = "mmpp"
    a = ref_ch7(q); q["_one_stage"] = True; b = ref_ch7(q)
    for k in ("delay", "throughput", "delay_ring1", "P_loss_ring1"):
        print(f"{name} | {k} | two-stage {a[k]:.10g} | one-stage {b[k]:.10g} | rel {abs(a[k]-b[k])/abs(a[k]):.2e}")
