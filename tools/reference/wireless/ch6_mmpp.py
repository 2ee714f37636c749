import sys, math, json
import numpy as np
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import *
from mmpp import *
from ch6_poisson import cases as pcases

def ref_ch6_mmpp(p, averaging="traffic", verbose=False):
    eps, lay, st = visit_ratios(p)
    tl, tm, s = p["t_wlan"], p["t_mesh"], p["sigma"]
    mus = mu_of(p["p_station"], tl); mau = mu_of(p["p_ap_up"], tl)
    mad = mu_of(p["p_ap_down"], tl); mr = mu_of(p["p_mr"], tm)
    Ntot = st.sum()
    src = M2(p["phi1"], p["phi2"], p["lambda1"], p["lambda2"])
    lam = src.rate()
    res = {}
    qs = mmpp_m1(src, mus); Ds = qs["D"]
    so, info_s = output_fit(src, mus)
    if verbose: print("station out", so, info_s)
    # uplink APs by type (stations per AP)
    kinds = sorted(set(k for a, k in lay))
    au_in = {}; au_D = {}; au_out = {}
    for k in kinds:
        fit, note = superpose_fit([(so, k)])
        au_in[k] = fit
        q = mmpp_m1(fit, mau); au_D[k] = q["D"]
        au_out[k], info = output_fit(fit, mau)
        if verbose: print("AP in", k, fit, note, "D", q["D"], "out", au_out[k], info)
    wau = []; dau = []
    comps = {}
    for a, k in lay:
        for j in range(a):
            wau.append(k); dau.append(au_D[k])
            comps[k] = comps.get(k, 0) + 1
    tr, note = superpose_fit([(au_out[k], c) for k, c in comps.items()])
    if verbose: print("MMPP_tr", tr, note, "rate", tr.rate(), "expected", Ntot * lam)
    wr = []; dr = []; wad = []; dad = []
    cache = {}
    for i, (a, k) in enumerate(lay):
        e = eps[i]
        key = (round(e, 14), a)
        if key not in cache:
            if e <= 1:
                rin = tr.scale(e)
            else:
                z = int(math.floor(e)); f = e - z
                comp = [(tr, z)] + ([(tr.scale(f), 1)] if f > 0 else [])
                rin, _ = superpose_fit(comp, t=tr.tfit())
            q = mmpp_m1(rin, mr)
            rout, _ = output_fit(rin, mr)
            adin = rout.scale(s / a)
            qd = mmpp_m1(adin, mad)
            cache[key] = (q["D"], qd["D"])
        Dr_i, Dad_i = cache[key]
        wr.append(e); dr.append(Dr_i)
        for j in range(a):
            wad.append(s * e / a); dad.append(Dad_i)
    return ch6_result(averaging, s, tm, tl, Ds, mus, mau, mr, mad, lay, eps, Ntot,
                      wau, dau, wr, dr, wad, dad)

if __name__ == "__main__":
    sel = sys.argv[1:] 
    for averaging in ("traffic", "printed"):
        for idx, (name, p) in enumerate(pcases):
            if sel and str(idx) not in sel: continue
            q = dict(p); q["source"] = "mmpp"; q["averaging"] = averaging
            try:
                r = ref_ch6_mmpp(q, averaging, verbose=(averaging == "traffic" and "-v" in sys.argv))
            except Exception as ex:
                print(averaging, name, "REF ERROR", ex); r = {}
            out = solve("wlan_mesh.model", q)
            m = out.get("metrics", out)
            if not r: print(out)
            for k, v in r.items():
                sv = m.get(k) if isinstance(m, dict) else None
                print(f"{averaging:8s} | {name:28s} | {k:10s} | {v:.10g} | {sv} | {rel(sv, v) if isinstance(sv,(int,float)) else 'NA'}", flush=True)
