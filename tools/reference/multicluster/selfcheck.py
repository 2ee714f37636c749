"""Self-checks of the reference (no Rust needed):

  1. MMPP(2) counting characteristics: closed forms (2.2)-(2.5) with W-1/W-2 vs the exact
     block-exponential computation (M-19).
  2. Heffes-Lucantoni fit: round trip on an MMPP's own characteristics; k iid copies give the
     same phi's, mean x k, (l1-l2) x sqrt(k).
  3. MMPP/G/1 (3.37)-(3.38) with G: exponential service vs the exact MMPP/M/1 (matrix-geometric
     R, 3.46-3.47 with W-41); Poisson arrivals (forced through the G path) vs Pollaczek-Khinchine.
  4. Whole model with `source: poisson` vs a separate closed-form (M/G/1) evaluation of the same
     stage recursion (a second, independent code path for the queueing part).
  5. Zero-load latency vs the catalogue formula (1-xi)(w t_cs^A + tau_in) + xi(w t_cs^E + tau_out);
     4.5(a) L_f 512 ~ 55.5.
  6. Saturation points vs the concentrator bounds of the catalogue tables (sec. 3.2, 3.3).

    python3 selfcheck.py          (output recorded in selfcheck_out.txt)
"""
import json
import math
import sys

import numpy as np

import mmpp2
from mmpp2 import MMPP, Service, chars, chars_expm, hl_fit, multiplier, mmpp_g1_wait, blocking_prob
import model
from cases import ch4_params, ch5_params, PANELS_4, NET, saturation_point

ok_all = True


def report(name, worst, tol):
    global ok_all
    flag = "ok" if worst <= tol else "FAIL"
    if flag == "FAIL":
        ok_all = False
    print(f"  {name:<70s} worst {worst:.3e} (tol {tol:g}) {flag}")


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def canon(m):
    """the same process with the states labelled so that phi1 >= phi2 (the fit's convention,
    3.31), ties broken by l1 >= l2"""
    if (m.phi1, m.l1) < (m.phi2, m.l2):
        return MMPP(m.phi2, m.phi1, m.l2, m.l1)
    return m


print("1. counting characteristics, closed form vs block exponential")
rng = np.random.default_rng(7)
w = 0.0
for _ in range(200):
    m = MMPP(*(10 ** rng.uniform(-3, 0, 2)), *(10 ** rng.uniform(-4, 0, 2)))
    for t in (0.3, 5.0, 0.5 * (1 / m.phi1 + 1 / m.phi2)):
        a, b = chars(m, t), chars_expm(m, t)
        w = max(w, max(rel(x, y) for x, y in zip(a[:3], b[:3])), abs(a[3] - b[3]) / max(abs(b[3]), a[0] * t * 1e-6))
report("lambda, IDC(t), IDC(inf), gamma3(t) (gamma3: cancellation in both)", w, 1e-6)

print("2. Heffes-Lucantoni fit")
w = 0.0
for _ in range(200):
    m = MMPP(*(10 ** rng.uniform(-3, 0, 2)), *(10 ** rng.uniform(-4, -1, 2)))
    t = 0.5 * (1 / m.phi1 + 1 / m.phi2)
    if chars(m, t)[2] - 1 < 1e-4:      # nearly Poisson: the fit is ill-conditioned, not used here
        continue
    f = canon(hl_fit(*chars(m, t), t))
    w = max(w, max(rel(x, y) for x, y in zip(f.key(), canon(m).key())))
report("round trip (fit of an MMPP(2)'s own 4 characteristics; IDC-1 > 1e-4)", w, 1e-6)
w = 0.0
w2 = 0.0
for k in (2, 3, 7, 16, 64, 2.4, 5.7, 0.3):
    for src in (MMPP(0.07, 0.035, 0.004, 0.0), MMPP(0.06, 0.04, 0.01, 0.002), MMPP(0.5, 0.1, 3.0, 0.0),
                MMPP(0.07, 0.07, 0.004, 0.0), MMPP(0.008, 0.008, 0.003, 0.001)):
        f = multiplier(src, k)
        t = 0.5 * (1 / src.phi1 + 1 / src.phi2)
        Z = math.floor(k)
        cs = chars(src, t)
        cF = chars(src.split(k - Z), t) if k > Z else (0.0, 1.0, 1.0, 0.0)
        lam = Z * cs[0] + cF[0]
        tgt = (lam, (Z * cs[0] * cs[1] + cF[0] * cF[1]) / lam, (Z * cs[0] * cs[2] + cF[0] * cF[2]) / lam, Z * cs[3] + cF[3])
        w = max(w, max(rel(x, y) for x, y in zip(chars(f, t), tgt)))
        if src.phi1 == src.phi2 and k == int(k):
            f = canon(f)
            w2 = max(w2, rel(f.phi1, src.phi1), rel(f.phi2, src.phi2), rel(f.rate(), k * src.rate()),
                     rel(f.l1 - f.l2, math.sqrt(k) * (src.l1 - src.l2)))
report("load multiplier (copies + split): the fit has the 4 target characteristics", w, 1e-9)
report("symmetric phi, k iid copies: same phi, mean x k, (l1-l2) x sqrt(k)", w2, 1e-9)


def mmpp_m1_exact(m, mu):
    A, B, Cm = m.L(), m.Q() - m.L() - mu * np.eye(2), mu * np.eye(2)
    R = np.zeros((2, 2))
    for _ in range(10 ** 6):
        Rn = -(A + R @ R @ Cm) @ np.linalg.inv(B)
        if np.max(np.abs(Rn - R)) < 1e-17:
            break
        R = Rn
    R = Rn
    Mb = m.Q() - m.L() + mu * R
    N = np.linalg.inv(np.eye(2) - R)
    Aug = np.vstack([Mb.T, (N @ np.ones(2))[None, :]])
    x0 = np.linalg.lstsq(Aug, np.array([0, 0, 1.0]), rcond=None)[0]
    L = x0 @ R @ N @ N @ np.ones(2)
    return L / m.rate() - 1 / mu          # mean wait in queue (Little)


print("3. MMPP/G/1 (3.37)-(3.38)")
w = 0.0
for m, mu in ((MMPP(0.07, 0.035, 0.04, 0.0), 0.05), (MMPP(0.06, 0.04, 0.02, 0.001), 0.03),
              (MMPP(0.5, 0.1, 3.0, 0.0), 1.0), (MMPP(0.008, 0.008, 0.03, 0.0), 0.0175),
              (MMPP(1.0, 2.0, 0.5, 2.0), 1.6)):
    W, rho = mmpp_g1_wait(m, Service([(1.0, 0.0, 1 / mu)]))
    w = max(w, rel(W, mmpp_m1_exact(m, mu)))
report("exponential service vs exact MMPP/M/1 (rho 0.4..0.98)", w, 1e-8)
w = 0.0
for lam, S in ((0.01, Service([(1, 40.0, 3.0)])), (0.02, Service([(0.3, 10.0, 0.0), (0.7, 30.0, 5.0)])),
               (0.5, Service([(1, 1.9, 0.0)]))):
    m = MMPP(0.3, 0.2, lam, lam * (1 + 1e-15))   # Poisson, but not caught by the P-K shortcut
    W, rho = mmpp_g1_wait(m, S)
    pk = lam * S.m2() / (2 * (1 - lam * S.mean()))
    w = max(w, rel(W, pk))
report("Poisson arrivals through the G path vs Pollaczek-Khinchine", w, 1e-9)
w = 0.0
for m, T in ((MMPP(0.3, 0.2, 0.01, 0.01), 30.0), (MMPP(0.3, 0.2, 0.002, 0.002), 57.8)):
    Pb, _ = blocking_prob(m, T)
    w = max(w, rel(Pb, m.rate() * T))
report("W-25 chain with Poisson input: Pb = lambda T", w, 1e-12)


def poisson_closed_ch4(p):
    """Independent evaluation of the ch.4 model for Poisson sources with M/G/1 formulas only."""
    m, n, C = p["m"], p["n"], p["C"]
    N = 2 * (m // 2) ** n
    nc = model.n_c_ch4(C, m)
    om, Lf, xi, eta = p["omega"], p["Lf"], p["xi"], p["eta_in"]
    ch = 4 if p.get("channels", "printed") == "printed" else 2
    lb = (p["lambda1"] * p["phi2"] + p.get("lambda2", 0) * p["phi1"]) / (p["phi1"] + p["phi2"])
    tA, tE, tI = (model.timing(p[k], Lf) for k in ("acn", "ecn", "icn"))
    h = m // 2

    def P(nn, NN, e=1.0):
        v = [((m - 1) if j == nn else (h - 1)) * h ** (j - 1) * e ** j for j in range(1, nn + 1)]
        return [x / sum(v) for x in v]
    Pin, Pp, Pq = P(n, N, eta), P(n, N), P(nc, C)
    dd = lambda PP: sum(2 * (j + 1) * x for j, x in enumerate(PP))
    lA = (1 - xi) * dd(Pin) / (ch * n) * lb
    lE = (2 if p.get("ecn_num", "printed") == "printed" else 1) * xi * dd(Pp) / (ch * n) * lb
    lI = N * xi * dd(Pq) / (ch * nc) * lb

    def chain(sts):     # sts: list of (lambda, shift); M/G/1 wait * Pb(=lambda T)
        B = 0.0
        for k in range(len(sts) - 1, 0, -1):
            lam, c = sts[k]
            T, m2 = c + B, c * c + 2 * c * B + 2 * B * B
            B += lam * T * lam * m2 / (2 * (1 - lam * T))
        return sts[0][1], B

    def pk(lam, parts):
        t = sum(w * (c + b) for w, c, b in parts)
        t2 = sum(w * (c * c + 2 * c * b + 2 * b * b) for w, c, b in parts)
        return lam * t2 / (2 * (1 - lam * t)), t
    parts, tau = [], 0.0
    for j in range(1, n + 1):
        K = 2 * j - 1
        c0, B = chain([(lA, om * tA[1])] * (K - 1) + [(lA, om * tA[0])])
        parts.append((Pin[j - 1], c0, B))
        tau += Pin[j - 1] * ((K - 1) * tA[1] + tA[0])
    Win, Tin = pk((1 - xi) * lb, parts)
    parts, tauo = [], 0.0
    for a in range(1, n + 1):
        for q in range(1, nc + 1):
            K = 2 * (a + q) - 1
            sts = []
            for k in range(K - 1):
                icn = (a <= k < a + 2 * q) if p.get("stage_map", "w27") == "w27" else (a - 1 <= k < a + 2 * q - 1)
                sts.append((lI, om * tI[1]) if icn else (lE, om * tE[1]))
            sts.append((lE, om * tE[0]))
            c0, B = chain(sts)
            parts.append((Pp[a - 1] * Pq[q - 1], c0, B))
            icn_k = [(a <= k < a + 2 * q) if p.get("stage_map", "w27") == "w27" else (a - 1 <= k < a + 2 * q - 1)
                     for k in range(1, K)]
            tauo += Pp[a - 1] * Pq[q - 1] * (sum(tI[1] if x else tE[1] for x in icn_k) + tE[0])   # literal (4.26), D-1
    Wout, Tout = pk(xi * lb, parts)
    lcd = (N * xi if p.get("cd", "derived") == "derived" else N * xi * dd(Pq) / (ch * nc)) * lb
    Wc = lcd * (om * tI[1]) ** 2 / (2 * (1 - lcd * om * tI[1]))
    Lin = Tin + Win + tau
    Lout = Tout + Wout + 2 * Wc + tauo
    return dict(latency=(1 - xi) * Lin + xi * Lout, latency_in=Lin, latency_out=Lout, W_c=Wc, W_d=Wc)


print("4. whole ch.4 model, Poisson source, vs an M/G/1 closed-form evaluation")
w = 0.0
cnt = 0
for pid in PANELS_4:
    for Lf in (512, 1024):
        for frac in (0.2, 0.6, 0.9):
            for var in ({}, {"channels": "derived"}, {"cd": "printed", "stage_map": "physical"}, {"ecn_num": "single"}):
                p = ch4_params(pid, Lf, None, source="poisson", **var)
                lam_star = saturation_point(p)
                p["lambda1"] = frac * lam_star
                r = model.solve(p)
                ref = poisson_closed_ch4(p)
                if r["status"] != "ok":
                    continue
                cnt += 1
                w = max(w, max(rel(r["metrics"][k], ref[k]) for k in ref))
w2 = 0.0
for var in ({}, {"stage_map": "physical"}, {"cd": "printed"}, {"channels": "derived", "ecn_num": "single"}):
    p = dict(m=4, n=2, C=4, xi=0.6, eta_in=0.7, acn=NET["5.Net3"], ecn=NET["5.Net2"], icn=NET["5.Net1"], omega=32,
             Lf=256, phi1=0.08, phi2=0.06, lambda2=0.0, source="poisson", lambda1=None, **var)
    ls = saturation_point(p)
    for frac in (0.2, 0.6, 0.9):
        p["lambda1"] = frac * ls
        r = model.solve(p)
        ref = poisson_closed_ch4(p)
        cnt += 1
        w = max(w, max(rel(r["metrics"][k], ref[k]) for k in ref))
report(f"{cnt} points (8 panels x 2 L_f x 3 loads x 4 variants; m4 n2 C4 ECN != ICN x 4 variants x 3 loads)", w, 1e-9)

print("5. zero-load latency")
for pid in PANELS_4:
    for Lf in (512, 1024):
        p = ch4_params(pid, Lf, 1e-12)
        r = model.solve(p)
        i = r["info"]
        om = p["omega"]
        xi = p["xi"]
        tA, tE = model.timing(p["acn"], Lf), model.timing(p["ecn"], Lf)
        z = (1 - xi) * (om * tA[1] + i["tau_in"]) + xi * (om * tE[1] + i["tau_out"])
        print(f"  {pid} L_f {Lf}: model {r['metrics']['latency']:.6f}  catalogue formula {z:.6f}"
              f"  (Lat_in {r['metrics']['latency_in']:.4f} = {om * tA[1]:.4f} + {i['tau_in']:.4f};"
              f" Lat_out {r['metrics']['latency_out']:.4f} = {om * tE[1]:.4f} + {i['tau_out']:.4f})")

print("6. saturation points (lambda_s1) vs the catalogue's concentrator bounds")
CAT4 = {"wu-4.5a": (0.00432, 0.0095, 0.00222, 0.0049), "wu-4.5b": (0.00216, 0.0048, 0.00111, 0.0024),
        "wu-4.5c": (0.00300, 0.0066, 0.00154, 0.0034), "wu-4.5d": (0.00240, 0.0053, 0.00124, 0.0027),
        "wu-4.6a": (0.00463, 0.0102, 0.00238, 0.0052), "wu-4.6b": (0.00180, 0.0040, 0.00093, 0.0020),
        "wu-4.6c": (0.01081, 0.0237, 0.00556, 0.0122), "wu-4.6d": (0.00324, 0.0071, 0.00167, 0.0037)}
for pid, cat in CAT4.items():
    row = []
    for k, Lf in enumerate((512, 1024)):
        p = ch4_params(pid, Lf, None)
        ls = saturation_point(p)
        p["lambda1"] = ls * 0.999
        where = model.solve(p)["info"]["rho_where"]
        pp = ch4_params(pid, Lf, None, cd="printed")
        lsp = saturation_point(pp)
        pp["lambda1"] = lsp * 0.999
        wherep = model.solve(pp)["info"]["rho_where"]
        row.append(f"L_f {Lf}: {ls:.5f} (cat {cat[2 * k]:.5f}, {where}) printed-CD {lsp:.5f} (cat [{cat[2 * k + 1]:.4f}], {wherep})")
    print(f"  {pid}: " + "; ".join(row))
print("  Fig 4.7 (mean rate; C 32, 8-port 3-tree, omega 32, L_f 512, MMPP 0.6/0.3):")
for xi, cat in ((0.969, 0.000279), (0.8, 0.000338), (0.6, 0.000450), (0.4, 0.000676)):
    p = ch4_params("wu-4.7", 512, None, xi=(3968 / 4095 if xi == 0.969 else xi), eta_in=1.0)
    ls = saturation_point(p)
    lb = ls * p["phi2"] / (p["phi1"] + p["phi2"])
    p["lambda1"] = ls * 0.999
    print(f"    xi {xi}: model lambda_bar* {lb:.6f} (catalogue {cat}); binding: {model.solve(p)['info']['rho_where']}")
print("  ch.5 (config, omega, L_f): model lambda_bar* and binding queue; catalogue: concentrator of the largest cluster")
for cfg, om, Lf, cat in (("i", 32, 256, 0.00113), ("i", 32, 512, 0.00057), ("i", 64, 256, 0.00113 / 2),
                         ("ii", 32, 256, 0.00095)):
    p = ch5_params(cfg, om, Lf, 0.08, 0.06, None)
    ls = saturation_point(p)
    lb = ls * p["phi2"] / (p["phi1"] + p["phi2"])
    p["lambda1"] = ls * 0.999
    print(f"    ({cfg}) omega {om} L_f {Lf}: model {lb:.6f} (catalogue {cat:.5f}); binding: {model.solve(p)['info']['rho_where']}")
print("ALL OK" if ok_all else "SOME CHECKS FAILED")
