import sys, math
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import *
from ch7 import cases, rings
# Poisson sources, huge buffers: the ch.7 network is a Jackson network (tree to the gateway)
for name, p in cases:
    for K in (500, 5000):
        q = dict(p); q.update(source="poisson", K_s=K, K_a=K, K_r=K)
        n = q["grid"]; N = q["stations"]; Nr = rings(n); h = len(Nr)
        lam = mean_rate(q)
        mus = mu_of(q["p_station"], q["t_wlan"]); mua = mu_of(q["p_ap"], q["t_wlan"])
        mur = [mu_of(q["p_mr"][i], q["t_mesh"]) for i in range(h)]
        la = N * lam
        if lam >= mus or la >= mua:
            continue
        Ds = 1 / (mus - lam); Da = 1 / (mua - la)
        Dr = []
        ok = True
        for i in range(h):
            li = la * sum(Nr[i:]) / Nr[i]
            if li >= mur[i]: ok = False
            Dr.append(1 / (mur[i] - li))
        if not ok: continue
        ref = dict(D_station=Ds, D_ap=Da, throughput=lam * N * sum(Nr))
        tot = 0
        for i in range(h):
            ref[f"delay_ring{i+1}"] = (i + 1) * q["t_mesh"] + 2 * q["t_wlan"] + Ds + Da + sum(Dr[:i + 1])
            tot += Nr[i] * ref[f"delay_ring{i+1}"]
        ref["delay"] = tot / sum(Nr)
        out = solve("wlan_access.model", q); m = out.get("metrics", {})
        for k, v in ref.items():
            sv = m.get(k)
            print(f"K={K:5d} | {name:26s} | {k:12s} | {v:.10g} | {sv} | {rel(sv, v) if sv is not None else 'NA'}")
