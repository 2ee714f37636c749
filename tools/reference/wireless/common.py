import json, os, subprocess, math
import numpy as np

# The repro binary to compare against: $REPRO_BIN, else the workspace's
# release build (`cargo build --release -p pipeline` first).
BIN = os.environ.get(
    "REPRO_BIN",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "target", "release", "repro"),
)

def solve(solver, params):
    out = subprocess.run([BIN, "solve", solver, "--params", json.dumps(params)],
                         capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except Exception:
        return {"raw": out.stdout + out.stderr}

def mu_of(P, t):
    return math.log(1.0 / (1.0 - P)) / t

def mean_rate(p):
    return (p["lambda1"] * p["phi2"] + p["lambda2"] * p["phi1"]) / (p["phi1"] + p["phi2"])

def grid4(n):
    C = n * n
    P = np.zeros((C, C))
    nb = []
    for r in range(n):
        for c in range(n):
            l = []
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < n and 0 <= cc < n:
                    l.append(rr * n + cc)
            nb.append(l)
    return nb

def layout(p):
    """per MR: (aps, stations per AP) in row-major order"""
    out = []
    for t in p["mr_types"]:
        out += [(t["aps"], t["stations"])] * t["count"]
    assert len(out) == p["grid"] ** 2
    return out

def visit_ratios(p):
    n = p["grid"]; C = n * n; s = p["sigma"]
    nb = grid4(n)
    P = np.zeros((C, C))
    for i in range(C):
        for j in nb[i]:
            P[i, j] = (1 - s) / len(nb[i])
    lay = layout(p)
    st = np.array([a * k for a, k in lay], float)
    A = st / st.sum()
    eps = np.linalg.solve((np.eye(C) - P).T, A)  # eps = A (I-P)^-1
    return eps, lay, st

def rel(a, b):
    if a is None or b is None:
        return float("nan")
    return abs(a - b) / max(abs(b), 1e-300)

def ch6_result(averaging, s, tm, tl, Ds, mus, mau, mr, mad, lay, eps, Ntot,
               wau, dau, wr, dr, wad, dad):
    """(6.20) from the per-entity delays (traffic-weighted or, `printed`,
    plain means) and T_max = the smallest of (6.22)-(6.29)."""
    def avg(w, d):
        if averaging == "traffic":
            return float(np.dot(w, d) / np.sum(w))
        return float(np.mean(d))
    Dau, Dr, Dad = avg(wau, dau), avg(wr, dr), avg(wad, dad)
    dbar = 1 / s
    delay = dbar * tm + 4 * tl + Dau + dbar * Dr + Dad + Ds
    Ts = mus
    Tau = min(mau / k for a, k in lay)
    Tr = min(mr / (e * Ntot) for e in eps)
    Tad = min(mad / (s * e * Ntot / a) for e, (a, k) in zip(eps, lay))
    return dict(delay=delay, D_station=Ds, D_ap_up=Dau, D_mr=Dr, D_ap_down=Dad,
                T_max=min(Ts, Tau, Tr, Tad))
