import sys, math, json
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import *
from mmpp import *

def mmpp_m1k(m, mu, K):
    """exact MMPP/M/1/K (K counts the packet in service). returns L, Pb (arrival-epoch, 7.9-7.10), D=L/lam_e."""
    n = 2 * (K + 1)
    G = np.zeros((n, n)); Q = m.Q(); lam = [m.l1, m.l2]
    for v in range(K + 1):
        for j in range(2):
            s = 2 * v + j
            G[s, 2 * v + 1 - j] += Q[j, 1 - j]
            if v < K: G[s, s + 2] += lam[j]
            if v > 0: G[s, s - 2] += mu
    G -= np.diag(G.sum(axis=1))
    A = np.vstack([G.T, np.ones(n)])
    b = np.zeros(n + 1); b[-1] = 1
    P = np.linalg.lstsq(A, b, rcond=None)[0]
    lv = np.repeat(np.arange(K + 1), 2)
    L = P @ lv
    arr = P * np.tile(lam, K + 1)
    Pb = arr[-2:].sum() / arr.sum()
    lam_e = m.rate() * (1 - Pb)
    return dict(L=L, Pb=Pb, lam_e=lam_e, D=L / lam_e, thr=mu * (1 - P[:2].sum()))

def is_poisson(m):
    return abs(m.l1 - m.l2) <= 1e-15 * max(abs(m.l1), 1)

def out_fit(m, mu):
    if is_poisson(m):
        return M2(m.phi1, m.phi2, m.l1, m.l2)
    return output_fit(m, mu)[0]

def sup_fit(comps):
    if all(is_poisson(c) for c, k in comps):
        lam = sum(k * c.rate() for c, k in comps)
        return M2(1.0, 1.0, lam, lam)
    return superpose_fit(comps)[0]

def rings(n):
    g = (n - 1) // 2
    Ni = {}
    for x in range(n):
        for y in range(n):
            d = max(abs(x - g), abs(y - g))
            if d > 0: Ni[d] = Ni.get(d, 0) + 1
    return [Ni[i] for i in range(1, max(Ni) + 1)]

def ref_ch7(p, verbose=False):
    n = p["grid"]; N = p["stations"]; Ks, Ka, Kr = p["K_s"], p["K_a"], p["K_r"]
    tl, tm = p["t_wlan"], p["t_mesh"]
    mus = mu_of(p["p_station"], tl); mua = mu_of(p["p_ap"], tl)
    Nr = rings(n); h = len(Nr)
    mur = [mu_of(p["p_mr"][i], tm) for i in range(h)]
    if p.get("source", "mmpp") == "poisson":
        lb = mean_rate(p); src = M2(p["phi1"], p["phi2"], lb, lb)
    else:
        src = M2(p["phi1"], p["phi2"], p["lambda1"], p["lambda2"])
    lam = src.rate()
    qs = mmpp_m1k(src, mus, Ks)
    so = out_fit(src.scale(1 - qs["Pb"]), mus)
    ain = sup_fit([(so, N)])
    qa = mmpp_m1k(ain, mua, Ka)
    ao = out_fit(ain.scale(1 - qa["Pb"]), mua)
    if verbose: print("so", so, "ain", ain, "ao", ao)
    qr = [None] * h; ro = [None] * h; rin = [None] * h
    for i in range(h - 1, -1, -1):
        if i == h - 1:
            rin[i] = ao
        else:
            if p.get("_one_stage"):
                rin[i] = sup_fit([(ro[i + 1].scale(1.0 / Nr[i]), Nr[i + 1]), (ao, 1)])
            else:
                tr = sup_fit([(ro[i + 1], Nr[i + 1])])
                rin[i] = sup_fit([(tr.scale(1.0 / Nr[i]), 1), (ao, 1)])
        qr[i] = mmpp_m1k(rin[i], mur[i], Kr)
        ro[i] = out_fit(rin[i].scale(1 - qr[i]["Pb"]), mur[i])
        if verbose: print("ring", i + 1, rin[i], qr[i])
    res = dict(D_station=qs["D"], D_ap=qa["D"], P_loss_station=qs["Pb"], P_loss_ap=qa["Pb"])
    T = 0.0; DT = 0.0
    for i in range(h):
        Di = (i + 1) * tm + 2 * tl + qs["D"] + qa["D"] + sum(qr[j]["D"] for j in range(i + 1))
        Ti = lam * (1 - qs["Pb"]) * (1 - qa["Pb"]) * np.prod([1 - qr[j]["Pb"] for j in range(i + 1)])
        res[f"delay_ring{i+1}"] = Di; res[f"P_loss_ring{i+1}"] = qr[i]["Pb"]
        res[f"load_ring{i+1}"] = rin[i].rate()
        T += N * Nr[i] * Ti; DT += N * Nr[i] * Ti * Di
    res["throughput"] = T; res["delay"] = DT / T
    return res

base = dict(grid=9, stations=3, K_s=32, K_a=48, K_r=64, t_wlan=7.27e-4, t_mesh=1.48e-4,
            p_station=2.5e-3, p_ap=7e-3, p_mr=[8.2e-2, 7.3e-2, 6.4e-2, 5.5e-2],
            phi1=0.6, phi2=0.4, lambda1=2.0, lambda2=0.0)
cases = []
def add(name, **kw):
    d = dict(base); d.update(kw); cases.append((name, d))
add("7.5 N=3 l1=2 paper", lambda1=2.0)
add("7.6 N=5 l1=6 paper", stations=5, phi1=0.8, phi2=0.2, lambda1=6.0)
add("7.8 N=10 w=10000 l1=3", stations=10, phi1=0.03, phi2=0.02, lambda1=3.0, t_wlan=9.09e-4, t_mesh=1.85e-4)
add("5x5 nonpaper small K", grid=5, stations=4, K_s=3, K_a=5, K_r=4, p_mr=[0.01, 0.02], phi1=0.5, phi2=0.3, lambda1=1.5, lambda2=0.4, p_station=0.01, p_ap=0.02)
add("7x7 nonpaper", grid=7, stations=2, K_s=10, K_a=12, K_r=8, p_mr=[0.02, 0.03, 0.05], phi1=0.2, phi2=0.1, lambda1=3.0, lambda2=1.0)
add("3x3 nonpaper tiny", grid=3, stations=1, K_s=1, K_a=2, K_r=1, p_mr=[0.05], phi1=1.0, phi2=2.0, lambda1=2.0, lambda2=5.0, p_station=0.01, p_ap=0.01)

if __name__ == "__main__":
    sel = [a for a in sys.argv[1:] if not a.startswith("-")]
    srcs = ["mmpp"] if "-only-mmpp" in sys.argv else (["poisson", "mmpp"] if "-mmpp" in sys.argv else ["poisson"])
    for source in srcs:
        for idx, (name, p) in enumerate(cases):
            if sel and str(idx) not in sel: continue
            q = dict(p); q["source"] = source
            if "-bigK" in sys.argv:
                q.update(K_s=3000, K_a=3000, K_r=3000)
            try:
                r = ref_ch7(q, verbose="-v" in sys.argv)
            except Exception as ex:
                import traceback; traceback.print_exc(); r = {}
            out = solve("wlan_access.model", q)
            m = out.get("metrics", out)
            if not r or out.get("status") != "ok": print(json.dumps(out)[:500])
            for k, v in r.items():
                sv = m.get(k.lstrip("_")) if isinstance(m, dict) else None
                print(f"{source:7s} | {name:26s} | {k:28s} | {v:.10g} | {sv} | {rel(sv, v) if isinstance(sv,(int,float)) else 'NA'}", flush=True)
