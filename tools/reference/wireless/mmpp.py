"""Independent MMPP(2) toolbox: MMPP/M/1 (matrix-geometric), departure MAP counting
characteristics (exact, truncated, sparse expm_multiply), Heffes-Lucantoni 4-char fit."""
import math
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import expm_multiply
from scipy.optimize import brentq

class M2:
    def __init__(s, phi1, phi2, l1, l2):
        s.phi1, s.phi2, s.l1, s.l2 = float(phi1), float(phi2), float(l1), float(l2)
    def Q(s): return np.array([[-s.phi1, s.phi1], [s.phi2, -s.phi2]])
    def L(s): return np.diag([s.l1, s.l2])
    def pi(s):
        t = s.phi1 + s.phi2
        return np.array([s.phi2 / t, s.phi1 / t])
    def rate(s): return (s.l1 * s.phi2 + s.l2 * s.phi1) / (s.phi1 + s.phi2)
    def scale(s, p): return M2(s.phi1, s.phi2, p * s.l1, p * s.l2)
    def tfit(s): return 0.5 * (1 / s.phi1 + 1 / s.phi2)
    def __repr__(s): return f"M2(phi1={s.phi1:.6g}, phi2={s.phi2:.6g}, l1={s.l1:.6g}, l2={s.l2:.6g})"

def map_counts(D0, D1, pi, t):
    """factorial moments 1..3 of N(t) for a (sparse) MAP started stationary, via block Van Loan."""
    n = D0.shape[0]
    D = (D0 + D1)
    Z = sp.csr_matrix((n, n))
    M = sp.bmat([[D, D1, Z, Z], [Z, D, D1, Z], [Z, Z, D, D1], [Z, Z, Z, D]], format="csr")
    v0 = np.zeros(4 * n); v0[:n] = pi
    v = expm_multiply((M.T * t).tocsr(), v0)
    f1 = v[n:2 * n].sum(); f2 = 2 * v[2 * n:3 * n].sum(); f3 = 6 * v[3 * n:].sum()
    return f1, f2, f3

def chars_from_fact(f1, f2, f3):
    E = f1; var = f2 + E - E * E
    # third central: E[N^3] = f3 + 3 f2 + f1
    m3 = f3 + 3 * f2 + f1
    g3 = m3 - 3 * E * (var + E * E) + 2 * E ** 3
    return E, var, g3

def mmpp_chars(m, t):
    """closed-form (2.2),(2.3),(2.4) with corrected Z3 (via exact MAP computation for safety)."""
    D0 = sp.csr_matrix(m.Q() - m.L()); D1 = sp.csr_matrix(m.L())
    E, var, g3 = chars_from_fact(*map_counts(D0, D1, m.pi(), t))
    lam = m.rate()
    tau = m.phi1 + m.phi2
    idc_inf = 1 + 2 * (m.l1 - m.l2) ** 2 * m.phi1 * m.phi2 / (tau ** 3 * lam) if lam > 0 else 1.0
    return dict(lam=lam, idc_t=var / E, idc_inf=idc_inf, g3=g3, t=t)

def mmpp_var_closed(m, t):
    lam = m.rate(); tau = m.phi1 + m.phi2; d2 = (m.l1 - m.l2) ** 2
    return lam * t + 2 * d2 * m.phi1 * m.phi2 / tau ** 3 * t - 2 * m.phi1 * m.phi2 * d2 / tau ** 4 * (1 - math.exp(-tau * t))

def hl_fit(lam, idc_inf, idc_t, g3, t):
    """Heffes-Lucantoni: MMPP(2) matching lam, IDC(inf), IDC(t), gamma3(t). Returns (M2, note)."""
    if idc_inf <= 1 + 1e-13:
        return M2(1.0, 1.0, lam, lam), "poisson"
    # tau from (1-exp(-tau t))/(tau t) = (idc_inf - idc_t)/(idc_inf - 1)
    target = (idc_inf - idc_t) / (idc_inf - 1)
    f = lambda x: (-math.expm1(-x)) / x - target   # x = tau t
    if not (0 < target < 1):
        raise ValueError(f"tau equation has no solution, target={target}")
    x = brentq(f, 1e-12, 1e6, xtol=1e-15, rtol=1e-15)
    tau = x / t
    E = lam * t; var = idc_t * E
    Z3 = g3 + 3 * E * (E - 1) * var / E + E * (E - 1) * (E - 2)
    w = idc_inf - 1
    ett = math.exp(-tau * t)
    # (3.27): Z3 = lam^3 t^3 + 3 lam^2 w t^2 + 3 lam w/tau (psi/tau - lam) t
    #              + 3 lam/tau^2 w (psi + lam tau) t e^{-tau t} - 6 lam/tau^3 w psi (1-e^{-tau t})
    c0 = lam ** 3 * t ** 3 + 3 * lam ** 2 * w * t ** 2 - 3 * lam * w / tau * lam * t + 3 * lam / tau ** 2 * w * lam * tau * t * ett
    c1 = 3 * lam * w / tau ** 2 * t + 3 * lam / tau ** 2 * w * t * ett - 6 * lam / tau ** 3 * w * (1 - ett)
    psi = (Z3 - c0) / c1
    note = ""
    if abs(psi) < 1e-14 * max(1.0, lam * tau):
        phi1 = phi2 = tau / 2
        d = math.sqrt(2 * tau * lam * w)
        l2 = lam - d * phi2 / tau; l1 = l2 + d
        note = "psi=0"
    else:
        e = lam * tau ** 3 * w / (2 * psi ** 2)
        phi1 = tau / 2 * (1 + 1 / math.sqrt(4 * e + 1)); phi2 = tau - phi1
        d = psi / (phi1 - phi2)
        l2 = lam - d * phi2 / tau; l1 = l2 + d
    if l2 < 0 or l1 < 0:
        note += " negative-rate"
    return M2(phi1, phi2, l1, l2), note

def superpose_fit(comps, t=None):
    """comps: list of (M2, multiplicity). W-5 time t = mean of (1/phi1+1/phi2)/2 over components."""
    K = sum(k for _, k in comps)
    if t is None:
        t = sum(k * m.tfit() for m, k in comps) / K
    lam = 0.0; idct = 0.0; idci = 0.0; g3 = 0.0
    for m, k in comps:
        c = mmpp_chars(m, t)
        lam += k * c["lam"]; idct += k * c["idc_t"] * c["lam"]; idci += k * c["idc_inf"] * c["lam"]; g3 += k * c["g3"]
    return hl_fit(lam, idci / lam, idct / lam, g3, t)

def mm1_R(m, mu):
    A = m.L(); B = m.Q() - m.L() - mu * np.eye(2); C = mu * np.eye(2)
    R = np.zeros((2, 2))
    for it in range(2000000):
        Rn = A @ np.linalg.inv(-B - R @ C)
        if np.max(np.abs(Rn - R)) < 1e-16:
            R = Rn; break
        R = Rn
    return R

def mmpp_m1(m, mu):
    """exact MMPP/M/1: returns dict(L, D (sojourn), rho, x0)."""
    lam = m.rate()
    if lam >= mu:
        return dict(L=float("inf"), D=float("inf"), rho=lam / mu)
    R = mm1_R(m, mu)
    # boundary: x0 (Q - Lambda + mu R) = 0, x0 (I-R)^-1 e = 1
    Mb = m.Q() - m.L() + mu * R
    I = np.eye(2); N = np.linalg.inv(I - R)
    Aug = np.vstack([Mb.T, (N @ np.ones(2))[None, :]])
    x0 = np.linalg.lstsq(Aug, np.array([0, 0, 1.0]), rcond=None)[0]
    L = x0 @ R @ N @ N @ np.ones(2)
    return dict(L=L, D=L / lam, rho=lam / mu, x0=x0, R=R)

def departure_map(m, mu, tail=None, maxlev=200000):
    import os
    if tail is None: tail = float(os.environ.get("WREF_TAIL", "1e-13"))
    q = mmpp_m1(m, mu)
    R = q["R"]; x0 = q["x0"]
    # choose level so that tail mass < tail
    v = x0.copy(); lev = 0; mass = v.sum()
    while 1 - mass > tail and lev < maxlev:
        v = v @ R; lev += 1; mass += v.sum()
    Lmax = lev + 5
    n = 2 * (Lmax + 1)
    Q = m.Q(); lam = [m.l1, m.l2]
    rows0, cols0, vals0 = [], [], []; rows1, cols1, vals1 = [], [], []
    pi = np.zeros(n); v = x0.copy()
    for lv in range(Lmax + 1):
        pi[2 * lv:2 * lv + 2] = v; v = v @ R
        for j in range(2):
            s = 2 * lv + j; diag = 0.0
            o = 1 - j
            rows0.append(s); cols0.append(2 * lv + o); vals0.append(Q[j, o]); diag += Q[j, o]
            if lv < Lmax and lam[j] > 0:
                rows0.append(s); cols0.append(s + 2); vals0.append(lam[j]); diag += lam[j]
            if lv > 0:
                rows1.append(s); cols1.append(s - 2); vals1.append(mu); diag += mu
            rows0.append(s); cols0.append(s); vals0.append(-diag)
    D0 = sp.csr_matrix((vals0, (rows0, cols0)), shape=(n, n))
    D1 = sp.csr_matrix((vals1, (rows1, cols1)), shape=(n, n))
    pi = pi / pi.sum()
    return D0, D1, pi

def output_fit(m, mu, t=None):
    """M-3: departure process of MMPP/M/1 fitted to MMPP(2) at t = tfit of the input."""
    if t is None:
        t = m.tfit()
    D0, D1, pi = departure_map(m, mu)
    E, var, g3 = chars_from_fact(*map_counts(D0, D1, pi, t))
    lam = m.rate()
    tau = m.phi1 + m.phi2
    idc_inf = 1 + 2 * (m.l1 - m.l2) ** 2 * m.phi1 * m.phi2 / (tau ** 3 * lam)  # = input IDC(inf)
    fit, note = hl_fit(E / t, idc_inf, var / E, g3, t)
    return fit, dict(lam_map=E / t, idc_t=var / E, g3=g3, idc_inf=idc_inf, t=t, note=note)
