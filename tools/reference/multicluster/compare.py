"""Compare `repro solve multicluster.model` with this reference.

    python3 compare.py build       # (re)build cases.json (loads placed with this reference's saturation points)
    python3 compare.py ref         # evaluate the reference on every case -> ref_results.json
    python3 compare.py run [GROUP] # call $REPRO_BIN on every case, print the per-case and summary tables
    python3 compare.py sat         # saturation status just below / just above this reference's saturation point

REPRO_BIN defaults to /work/wt-mcmodel/target/release/repro.
"""
import json
import math
import os
import subprocess
import sys
import time

import model
from cases import ch4_params, ch5_params, fig55_params, PANELS_4, NET, saturation_point

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("REPRO_BIN", "/work/wt-mcmodel/target/release/repro")
CASES = os.path.join(HERE, "cases.json")
REF = os.path.join(HERE, "ref_results.json")


def rust(params):
    out = subprocess.run([BIN, "solve", "multicluster.model", "--params", json.dumps(params)],
                         capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except Exception:
        return {"status": "error", "raw": (out.stdout + out.stderr).strip()[:400]}


def mean_to_l1(p, lbar):
    return lbar * (p["phi1"] + p["phi2"]) / p["phi2"]


def cd_bound5(p):
    """lambda1 at which the busiest ch.5 concentrator or dispatcher (derived arrivals) reaches
    utilisation 1 (lambda2 = 0).  Used only to place the loads of the ch.5 cases."""
    cl = p["clusters"]
    N = [2 * (c["m"] // 2) ** c["n"] for c in cl]
    Nt = sum(N)
    s = [1 / (1 - c.get("user_level", 0.0)) for c in cl]
    svc = p["omega"] * model.timing(p["icn"], p["Lf"])[1]
    worst = 0.0
    for i in range(len(cl)):
        xi = (Nt - N[i]) / (Nt - 1)
        inflow = sum(N[u] * s[u] for u in range(len(cl)) if u != i) * N[i] / (Nt - 1)
        worst = max(worst, N[i] * xi * s[i], inflow)
    return mean_to_l1(p, 1 / (worst * svc))


# ---------------------------------------------------------------------------- case list

def build():
    cases = []

    def add(group, name, p):
        cases.append({"group": group, "name": name, "params": p})

    # paper ch.4: Figs 4.5/4.6, both L_f, 3 loads (fractions of this reference's saturation point)
    for pid in PANELS_4:
        for Lf in (512, 1024):
            p = ch4_params(pid, Lf, None)
            ls = saturation_point(p, rtol=1e-3)
            for fr in (0.1, 0.5, 0.9):
                add("paper-4.5/4.6", f"{pid} Lf{Lf} {fr:.1f}sat", dict(p, lambda1=fr * ls))
    # every ch.4 variant on two panels at 0.6 of the default saturation point
    var4 = [("channels", "derived"), ("cd", "printed"), ("ecn_num", "single"), ("stage_map", "physical"),
            ("source", "poisson")]
    for pid in ("wu-4.5c", "wu-4.6d"):
        p = ch4_params(pid, 512, None)
        ls = saturation_point(p, rtol=1e-3)
        for k, v in var4:
            add("variants-4", f"{pid} Lf512 {k}={v}", dict(p, lambda1=0.6 * ls, **{k: v}))
        add("variants-4", f"{pid} Lf512 all non-default",
            dict(p, lambda1=0.5 * ls, channels="derived", cd="printed", ecn_num="single", stage_map="physical"))
    # Fig 4.7
    for xi in (0.4, 0.6, 0.8, 3968 / 4095):
        p = ch4_params("wu-4.7", 512, None, xi=xi, eta_in=1.0)
        ls = saturation_point(p, rtol=1e-3)
        for fr in (0.3, 0.8):
            add("paper-4.7", f"4.7a xi {xi:.4f} {fr}sat", dict(p, lambda1=fr * ls))
    for eta in (0.4, 0.6, 0.8, 1.0):
        p = ch4_params("wu-4.7", 512, None, eta_in=eta)
        ls = saturation_point(p, rtol=1e-3)
        add("paper-4.7", f"4.7b/c eta {eta} 0.7sat", dict(p, lambda1=0.7 * ls))
    for src in ("mmpp", "poisson"):
        for eta, xi in ((0.7, 0.7), (1.0, 3968 / 4095)):
            p = ch4_params("wu-4.7", 512, None, eta_in=eta, xi=xi, source=src)
            ls = saturation_point(p, rtol=1e-3)
            add("paper-4.7", f"4.7d {src} eta {eta} xi {xi:.3f} 0.6sat", dict(p, lambda1=0.6 * ls))
    # paper ch.5: Figs 5.3/5.4, configs (i)/(ii); loads relative to the concentrator bound
    P5 = {"a": (32, 0.08, 0.06), "b": (32, 0.06, 0.04), "c": (64, 0.007, 0.007), "d": (64, 0.09, 0.03)}
    for fig, cfg in (("5.3", "i"), ("5.4", "ii")):
        for pan, (om, f1, f2) in P5.items():
            for Lf in (256, 512):
                p = ch5_params(cfg, om, Lf, f1, f2, None)
                ls = cd_bound5(p)
                for fr in ((0.2, 0.6, 0.9) if pan == "a" else (0.5,)):
                    add("paper-5.3/5.4", f"wu-{fig}{pan} ({cfg}) Lf{Lf} {fr}sat", dict(p, lambda1=fr * ls))
    # ch.5 variants on config (i) 5.3a L_f 256 and config (ii) 5.4d L_f 512
    var5 = [("channels", "derived"), ("cd", "printed"), ("ecn_num", "single"), ("stage_map", "physical"),
            ("inflow", "printed"), ("weights", "printed"), ("dispatcher", "same"), ("dispatcher", "dest"),
            ("ecn_leg2", "own"), ("source", "poisson")]
    for cfg, om, Lf, f1, f2 in (("i", 32, 256, 0.08, 0.06), ("ii", 64, 512, 0.09, 0.03)):
        p = ch5_params(cfg, om, Lf, f1, f2, None)
        ls = cd_bound5(p)
        for k, v in var5:
            add("variants-5", f"({cfg}) om{om} Lf{Lf} {k}={v}", dict(p, lambda1=0.6 * ls, **{k: v}))
    # Fig 5.5
    for sc in (1, 2, 3, 4):
        for src in ("mmpp", "poisson"):
            p = fig55_params(sc, None, source=src)
            ls = cd_bound5(p)
            for fr in (0.3, 0.8):
                add("paper-5.5", f"5.5 scenario {sc} {src} {fr}sat", dict(p, lambda1=fr * ls))
    # non-paper ch.4
    netA = {"bandwidth": 1000, "network_latency": 0.05, "switch_latency": 0.02}
    netB = {"bandwidth": 450, "network_latency": 0.2, "switch_latency": 0.03}
    netC = {"bandwidth": 700, "network_latency": 0.08, "switch_latency": 0.07}
    np4 = [
        ("m8 n2 C8", dict(m=8, n=2, C=8, omega=48, Lf=300, phi1=0.2, phi2=0.05, lambda2=0.0005, xi=0.35, eta_in=0.5)),
        ("m6 n2 C6", dict(m=6, n=2, C=6, omega=20, Lf=700, phi1=0.01, phi2=0.03, lambda2=0.0, xi=0.6, eta_in=0.9)),
        ("m4 n2 C8", dict(m=4, n=2, C=8, omega=100, Lf=128, phi1=1.5, phi2=0.5, lambda2=0.001, xi=0.8, eta_in=0.3)),
        ("m4 n4 C4", dict(m=4, n=4, C=4, omega=16, Lf=1000, phi1=0.05, phi2=0.05, lambda2=0.0, xi=0.25, eta_in=1.0)),
        ("m8 n3 C32 eta .45", dict(m=8, n=3, C=32, omega=40, Lf=400, phi1=0.3, phi2=0.2, lambda2=0.0, xi=0.55, eta_in=0.45)),
        ("m4 n3 C16 lambda2>l1", dict(m=4, n=3, C=16, omega=64, Lf=512, phi1=0.02, phi2=0.06, lambda2=0.003, xi=0.5, eta_in=0.6)),
    ]
    for name, base in np4:
        p = dict(base, acn=netA, ecn=netB, icn=netC, lambda1=None)
        ls = saturation_point(p, rtol=1e-3)
        for fr in (0.3, 0.85):
            add("nonpaper-4", f"{name} {fr}sat", dict(p, lambda1=fr * ls))
        for k, v in var4:
            q = dict(p, **{k: v})
            lq = saturation_point(q, rtol=1e-3)
            add("nonpaper-4", f"{name} {k}={v} 0.7sat", dict(q, lambda1=0.7 * lq))
    # non-paper ch.5
    cl1 = [
        {"m": 4, "n": 1, "user_level": 0.0, "acn": netA},
        {"m": 4, "n": 3, "user_level": 0.3, "acn": netB},
        {"m": 6, "n": 2, "user_level": 0.12, "acn": netC},
        {"m": 8, "n": 1, "user_level": 0.05, "acn": netA},
    ]
    cl2 = [{"m": 6, "n": 1, "user_level": 0.2, "acn": netB}] * 3 + [{"m": 4, "n": 2, "user_level": 0.0, "acn": netC}] * 3
    np5 = [
        ("4 clusters m_c 4 (n_c 1)", dict(clusters=cl1, m_c=4, omega=24, Lf=300, phi1=0.1, phi2=0.04, lambda2=0.0)),
        ("6 clusters m_c 6 (n_c 1), lambda2>0", dict(clusters=cl2, m_c=6, omega=40, Lf=200, phi1=0.02, phi2=0.05, lambda2=0.0004)),
        ("8 clusters m_c 4 (n_c 2)", dict(clusters=cl1 + cl1[::-1], m_c=4, omega=32, Lf=256, phi1=0.09, phi2=0.09, lambda2=0.0)),
    ]
    for name, base in np5:
        p = dict(base, ecn=netC, icn=netA, lambda1=None)
        ls = saturation_point(p, rtol=1e-3)
        for fr in (0.3, 0.85):
            add("nonpaper-5", f"{name} {fr}sat", dict(p, lambda1=fr * ls))
        for k, v in var5:
            q = dict(p, **{k: v})
            add("nonpaper-5", f"{name} {k}={v} 0.6sat", dict(q, lambda1=0.6 * ls))
    # saturation brackets: lambda* of this reference, +-0.1 %
    sat = []
    for name, p in (("wu-4.5a Lf512", ch4_params("wu-4.5a", 512, None)),
                    ("wu-4.6c Lf1024 cd printed", ch4_params("wu-4.6c", 1024, None, cd="printed")),
                    ("wu-4.7 xi .969 poisson", ch4_params("wu-4.7", 512, None, source="poisson")),
                    ("m6 n2 C6 channels derived", dict(np4[1][1], acn=netA, ecn=netB, icn=netC, channels="derived")),
                    ("wu-5.3a (i) Lf256", ch5_params("i", 32, 256, 0.08, 0.06, None)),
                    ("wu-5.4c (ii) Lf512 dispatcher same", ch5_params("ii", 64, 512, 0.007, 0.007, None, dispatcher="same")),
                    ("5.5 scenario 4", fig55_params(4, None)),
                    ("np5 4 clusters cd printed", dict(np5[0][1], ecn=netC, icn=netA, cd="printed"))):
        ls = saturation_point(dict(p, lambda1=None), rtol=1e-8)
        for fr in (0.999, 1.001):
            sat.append({"name": f"{name} {fr}x lambda*", "params": dict(p, lambda1=fr * ls), "lambda_star": ls, "frac": fr})
    json.dump({"cases": cases, "saturation": sat}, open(CASES, "w"), indent=0)
    print(f"{len(cases)} cases, {len(sat)} saturation points -> {CASES}")


def ref():
    d = json.load(open(CASES))
    out = {}
    t0 = time.process_time()
    for c in d["cases"] + d["saturation"]:
        r = model.solve(c["params"])
        out[c["name"]] = {"status": r["status"], "metrics": r["metrics"], "reason": r["reason"],
                          "info": {k: v for k, v in r["info"].items() if k in ("rho_max", "rho_where", "alt", "mu_clamped", "ipp_clamps")}}
    json.dump(out, open(REF, "w"), indent=0)
    print(f"reference evaluated on {len(out)} cases in {time.process_time() - t0:.1f} s CPU -> {REF}")


def run(group=None):
    d = json.load(open(CASES))
    R = json.load(open(REF))
    worst = {}
    rows = []
    nstat = [0, 0]
    for c in d["cases"]:
        if group and c["group"] != group:
            continue
        me = R[c["name"]]
        rs = rust(c["params"])
        st_ok = (me["status"] == rs.get("status"))
        nstat[0] += 1
        nstat[1] += st_ok
        line = f"{c['group']:<14s} {c['name']:<48s} status {me['status']}/{rs.get('status')}"
        if me["status"] == "ok" and rs.get("status") == "ok":
            rm = rs.get("metrics", {})
            parts = []
            for k, v in me["metrics"].items():
                if k not in rm:
                    parts.append(f"{k}: missing")
                    continue
                e = abs(rm[k] - v) / max(abs(v), 1e-300)
                kk = k if not k.startswith("latency_") or k in ("latency_in", "latency_out") else "latency_<i>"
                g = worst.setdefault(c["group"], {})
                if e > g.get(kk, (-1, ""))[0]:
                    g[kk] = (e, c["name"])
                if k in ("latency", "latency_in", "latency_out", "W_c", "W_d"):
                    parts.append(f"{k} {v:.8g}/{rm[k]:.8g} ({e:.1e})")
            line += "  " + "; ".join(parts)
        elif rs.get("status") == "error":
            line += "  " + rs.get("raw", "")
        rows.append(line)
        print(line, flush=True)
    print()
    print(f"status agreement: {nstat[1]}/{nstat[0]}")
    print()
    print("worst relative difference per group and metric (case)")
    for g, m in worst.items():
        print(f"  {g}")
        for k, (e, n) in m.items():
            print(f"    {k:<12s} {e:.2e}  ({n})")


def sat():
    d = json.load(open(CASES))
    R = json.load(open(REF))
    agree = 0
    for c in d["saturation"]:
        rs = rust(c["params"])
        me = R[c["name"]]["status"]
        ok = me == rs.get("status")
        agree += ok
        extra = ""
        if me == "ok" and rs.get("status") == "ok":
            mm = R[c["name"]]["metrics"]
            e = max(abs(rs["metrics"][k] - v) / abs(v) for k, v in mm.items())
            extra = f"latency {mm['latency']:.8g}/{rs['metrics']['latency']:.8g}, worst rel over all metrics {e:.1e}"
        print(f"{c['name']:<55s} lambda1 {c['params']['lambda1']:.8g}: reference {me:<9s} repro {rs.get('status')}"
              f"{'' if ok else '   <-- DIFFERENT'}  {extra or rs.get('reason', '') or R[c['name']]['reason']}")
    print(f"saturation status agreement at +-0.1 %: {agree}/{len(d['saturation'])}")
    # tighter brackets around the same lambda* (bisected to rel 1e-8): +-1e-5 and +-1e-6
    agree = tot = 0
    for c in d["saturation"]:
        if c["frac"] != 0.999:
            continue
        for fr in (1 - 1e-5, 1 + 1e-5, 1 - 1e-6, 1 + 1e-6):
            p = dict(c["params"], lambda1=fr * c["lambda_star"])
            me = model.solve(p)["status"]
            rs = rust(p).get("status")
            tot += 1
            agree += me == rs
            print(f"{c['name'].rsplit(' 0.999x', 1)[0]:<45s} {fr:.6f} x lambda*: reference {me:<9s} repro {rs}"
                  f"{'' if me == rs else '   <-- DIFFERENT'}")
    print(f"saturation status agreement at +-1e-5 and +-1e-6: {agree}/{tot}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "run"
    if cmd == "build":
        build()
    elif cmd == "ref":
        ref()
    elif cmd == "sat":
        sat()
    else:
        run(sys.argv[2] if len(sys.argv) > 2 else None)
