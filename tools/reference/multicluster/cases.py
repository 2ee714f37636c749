"""Parameter builders for the paper configurations (catalogue secs. 3.2, 3.3; Tables 4.2, 5.2, 5.3)
and the saturation-point search shared by selfcheck.py and compare.py."""
import copy

import model

NET = {
    # Table 4.2
    "4.Net1": {"bandwidth": 800, "network_latency": 0.02, "switch_latency": 0.01},
    "4.Net2": {"bandwidth": 600, "network_latency": 0.1, "switch_latency": 0.05},
    # Table 5.2
    "5.Net1": {"bandwidth": 1000, "network_latency": 0.01, "switch_latency": 0.005},
    "5.Net2": {"bandwidth": 800, "network_latency": 0.01, "switch_latency": 0.01},
    "5.Net3": {"bandwidth": 600, "network_latency": 0.04, "switch_latency": 0.06},
    "5.Net4": {"bandwidth": 400, "network_latency": 0.1, "switch_latency": 0.05},
    "5.Net5": {"bandwidth": 200, "network_latency": 0.2, "switch_latency": 0.1},
}

# id: (eta_in, xi, omega, phi1, phi2)  (catalogue sec. 3.2; 4.6d with W-30)
PANELS_4 = {
    "wu-4.5a": (0.6, 0.5, 64, 0.07, 0.07), "wu-4.5b": (0.6, 0.5, 128, 0.008, 0.008),
    "wu-4.5c": (0.8, 0.9, 64, 0.06, 0.04), "wu-4.5d": (0.8, 0.9, 128, 0.09, 0.03),
    "wu-4.6a": (0.8, 0.7, 64, 0.03, 0.015), "wu-4.6b": (0.8, 0.7, 128, 0.08, 0.06),
    "wu-4.6c": (0.4, 0.5, 64, 0.04, 0.01), "wu-4.6d": (0.4, 0.5, 128, 0.07, 0.035),
}


def ch4_params(pid, Lf, lambda1, **over):
    if pid == "wu-4.7":
        p = dict(m=8, n=3, C=32, omega=32, Lf=Lf, phi1=0.6, phi2=0.3, xi=3968 / 4095, eta_in=1.0)
    else:
        eta, xi, om, f1, f2 = PANELS_4[pid]
        p = dict(m=4, n=3, C=16, omega=om, Lf=Lf, phi1=f1, phi2=f2, xi=xi, eta_in=eta)
    p.update(acn=NET["4.Net1"], ecn=NET["4.Net2"], icn=NET["4.Net2"], lambda1=lambda1, lambda2=0.0)
    p.update(over)
    return p


def cluster(m, n, ul, net):
    return {"m": m, "n": n, "user_level": ul, "acn": copy.deepcopy(NET[net])}


def ch5_config(cfg):
    if cfg == "i":
        cl = [cluster(8, 1, 0.1, "5.Net3")] * 3 + [cluster(8, 2, 0.15, "5.Net4")] * 3 + [cluster(8, 3, 0.2, "5.Net5")] * 2
        return cl, 8
    cl = [cluster(4, 2, 0.05, "5.Net3")] * 8 + [cluster(4, 4, 0.1, "5.Net4")] * 3 + [cluster(4, 6, 0.15, "5.Net5")] * 5
    return cl, 4


def ch5_params(cfg, omega, Lf, phi1, phi2, lambda1, **over):
    cl, mc = ch5_config(cfg)
    p = dict(clusters=copy.deepcopy(cl), m_c=mc, ecn=NET["5.Net2"], icn=NET["5.Net1"], omega=omega, Lf=Lf,
             phi1=phi1, phi2=phi2, lambda1=lambda1, lambda2=0.0)
    p.update(over)
    return p


FIG55_BW = {1: 1000, 2: 1142.3592, 3: 1330.8967, 4: 1590.2562}   # issue 22 (from 5.23, equal b)
FIG55_SHAPE = {1: (4, 8), 2: (8, 7), 3: (16, 6), 4: (32, 5)}     # scenario: (C, n_i), m = m_c = 4


def fig55_params(sc, lambda1, source="mmpp", **over):
    C, n = FIG55_SHAPE[sc]
    b = FIG55_BW[sc]
    net = {"bandwidth": b, "network_latency": 0.01, "switch_latency": 0.005}
    cl = [{"m": 4, "n": n, "user_level": 0.0, "acn": dict(net)} for _ in range(C)]
    p = dict(clusters=cl, m_c=4, ecn=dict(net), icn=dict(net), omega=32, Lf=256, phi1=0.09, phi2=0.09,
             lambda1=lambda1, lambda2=0.0, source=source)
    p.update(over)
    return p


def saturation_point(p, rtol=1e-7, solver=None):
    """Smallest lambda1 at which `solver` (default: this reference) reports saturated, by
    bisection (lambda2 fixed)."""
    solver = solver or model.solve
    q = dict(p)
    lo, hi = 0.0, 1e-4
    while True:
        q["lambda1"] = hi
        if solver(q)["status"] == "saturated":
            break
        lo, hi = hi, hi * 2
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        q["lambda1"] = mid
        if solver(q)["status"] == "saturated":
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)
