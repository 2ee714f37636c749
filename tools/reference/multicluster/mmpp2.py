"""MMPP(2) toolbox of Wu ch.2 and sec. 3.3.4, written from the thesis and catalogue sec. 3.0.

Independent of the project's Rust code.  Everything a multi-cluster model needs:
  * counting characteristics of an MMPP(2) (2.2)-(2.13), Z3 with errata W-1/W-2;
  * splitting (3.18) and the "load multiplier" superposition (3.17)-(3.22) with the
    Heffes-Lucantoni fit (3.24)-(3.34), e from W-10, t from W-5;
  * the MMPP/G/1 mean waiting time (3.37)-(3.38) with Lucantoni's G (M-1), service laws
    shift + Exp and mixtures of those;
  * the 4-state blocking chain of (4.19) as rebuilt in W-25.
"""
import math
import numpy as np
from scipy.linalg import expm, solve
from scipy.optimize import brentq, fsolve


class MMPP:
    """Two-state MMPP: Q = [[-phi1, phi1], [phi2, -phi2]], Lambda = diag(l1, l2)."""

    __slots__ = ("phi1", "phi2", "l1", "l2", "note")

    def __init__(self, phi1, phi2, l1, l2, note=""):
        self.phi1, self.phi2, self.l1, self.l2 = float(phi1), float(phi2), float(l1), float(l2)
        self.note = note

    def key(self):
        return (self.phi1, self.phi2, self.l1, self.l2)

    def Q(self):
        return np.array([[-self.phi1, self.phi1], [self.phi2, -self.phi2]])

    def L(self):
        return np.diag([self.l1, self.l2])

    def pi(self):
        t = self.phi1 + self.phi2
        return np.array([self.phi2 / t, self.phi1 / t])

    def rate(self):
        return (self.l1 * self.phi2 + self.l2 * self.phi1) / (self.phi1 + self.phi2)

    def split(self, p):
        """(3.18): Bernoulli thinning, exact."""
        return MMPP(self.phi1, self.phi2, p * self.l1, p * self.l2)

    def is_poisson(self):
        return self.l1 == self.l2

    def __repr__(self):
        return f"MMPP(phi=({self.phi1:.6g},{self.phi2:.6g}), l=({self.l1:.6g},{self.l2:.6g}){' ' + self.note if self.note else ''})"


# ---------------------------------------------------------------- counting characteristics

def chars(m, t):
    """(lambda, IDC(t), IDC(inf), gamma3(t)) of an MMPP(2), closed forms (2.2)-(2.13),
    Z3 (2.5) with W-1 (t in the exponent of the A12 term) and W-2 (A41 with phi1-phi2)."""
    p1, p2, l1, l2 = m.phi1, m.phi2, m.l1, m.l2
    tau = p1 + p2
    lam = (l1 * p2 + l2 * p1) / tau
    d = l1 - l2
    E = lam * t
    ex = math.exp(-tau * t)
    var = lam * t + 2 * d * d * p1 * p2 / tau ** 3 * t - 2 * p1 * p2 * d * d / tau ** 4 * (1 - ex)
    A11 = (l1 * p2 + l2 * p1) ** 3 / tau ** 2
    A21 = 2 * p1 * p2 * d * d * (l1 * p2 + l2 * p1) / tau ** 3
    A31 = p1 * p2 * d * d * (l1 * p1 + l2 * p2 - 2 * (l1 * p2 + l2 * p1)) / tau ** 4
    A41 = -2 * p1 * p2 * d ** 3 * (p1 - p2) / tau ** 5
    A12 = p1 * p2 * d * d * (l1 * p1 + l2 * p2) / tau ** 4
    Z3 = 6 / tau * (A11 / 6 * t ** 3 + A21 / 2 * t ** 2 + A31 * t + A12 * t * ex + A41 * (1 - ex))
    g3 = Z3 - 3 * (E - 1) * var - E * (E - 1) * (E - 2)       # (2.4)
    idc_inf = 1 + 2 * d * d * p1 * p2 / (tau ** 3 * lam) if lam > 0 else 1.0
    return lam, var / E, idc_inf, g3


def chars_expm(m, t):
    """The same characteristics from the block Van Loan exponential (catalogue M-19);
    used only by the self-checks."""
    D1 = m.L()
    D = m.Q()
    Z = np.zeros((2, 2))
    M = np.block([[D, D1, Z, Z], [Z, D, D1, Z], [Z, Z, D, D1], [Z, Z, Z, D]])
    E8 = expm(M * t)
    pi = m.pi()
    f = [pi @ E8[0:2, 2 * k:2 * k + 2] @ np.ones(2) * math.factorial(k) for k in (1, 2, 3)]
    E = f[0]
    var = f[1] + E - E * E
    m3 = f[2] + 3 * f[1] + f[0]
    g3 = m3 - 3 * E * (var + E * E) + 2 * E ** 3
    lam = m.rate()
    tau = m.phi1 + m.phi2
    idc_inf = 1 + 2 * (m.l1 - m.l2) ** 2 * m.phi1 * m.phi2 / (tau ** 3 * lam)
    return lam, var / E, idc_inf, g3


# ---------------------------------------------------------------- Heffes-Lucantoni fit

FIT_LOG = []   # notes of clamps (IPP fallback) for the report


def hl_fit(lam, idc_t, idc_inf, g3, t, Qhint=None):
    """MMPP(2) matching lam, IDC(t), IDC(inf), gamma3(t) (catalogue sec. 3.0 steps 1-5)."""
    w = idc_inf - 1.0
    if w <= 1e-13:
        # (catalogue: IDC = 1: the superposition is Poisson)
        p1, p2 = (Qhint if Qhint is not None else (1.0, 1.0))
        return MMPP(p1, p2, lam, lam, "poisson")
    target = (idc_inf - idc_t) / w          # (3.26) rhs = (1-e^{-x})/x, x = tau t
    if not (0.0 < target < 1.0):
        raise ValueError(f"tau equation (3.28) has no positive root (target {target})")
    x = brentq(lambda x: -math.expm1(-x) / x - target, 1e-14, 1e8, xtol=1e-16, rtol=1e-15, maxiter=500)
    tau = x / t
    E = lam * t
    var = idc_t * E
    Z3 = g3 + 3 * (E - 1) * var + E * (E - 1) * (E - 2)       # (2.4) inverted
    ex = math.exp(-tau * t)
    # (3.27) is linear in psi = (l1-l2)(phi1-phi2): Z3 = c0 + c1 psi
    c0 = (lam ** 3 * t ** 3 + 3 * lam ** 2 * w * t ** 2 - 3 * lam ** 2 * w / tau * t
          + 3 * lam ** 2 * w / tau * t * ex)
    c1 = 3 * lam * w / tau ** 2 * t + 3 * lam * w / tau ** 2 * t * ex - 6 * lam * w / tau ** 3 * (1 - ex)
    psi = (Z3 - c0) / c1
    note = ""
    scale = math.sqrt(2 * tau * lam * w) * tau       # |psi| <= this (|d| * tau)
    if abs(psi) <= 1e-12 * scale:
        p1 = p2 = tau / 2
        d = math.sqrt(2 * tau * lam * w)
        note = "psi=0"
    else:
        e = lam * tau ** 3 * w / (2 * psi * psi)            # W-10
        r = math.sqrt(4 * e + 1)
        p1 = tau / 2 * (1 + 1 / r)
        p2 = tau - p1
        d = psi * r / tau          # = psi/(phi1 - phi2), without the cancellation in phi1 - phi2
    l2 = lam - d * p2 / tau
    l1 = l2 + d
    if l2 < 0 or l1 < 0:
        # catalogue: clamp lambda2 = 0 and fit an IPP to the first three characteristics
        l1 = lam + w * tau / 2
        p1 = w * tau * tau / (2 * l1)
        p2 = tau - p1
        l2 = 0.0
        note = "ipp-clamp"
        FIT_LOG.append((lam, idc_t, idc_inf, g3, t))
    return MMPP(p1, p2, l1, l2, note)


def multiplier(src, f):
    """Issue 22 choice point: a load multiplier f of the source MMPP = floor(f) independent
    copies of src plus one copy split by frac(f), superposed and fitted once (HL) at
    t = (1/phi1 + 1/phi2)/2 (W-5).  f < 1 is the exact split (3.18).  Poisson sources stay Poisson."""
    if f <= 0:
        raise ValueError("load multiplier must be > 0")
    if src.is_poisson():
        return MMPP(src.phi1, src.phi2, f * src.l1, f * src.l2, "poisson")
    Z = math.floor(f)
    F = f - Z
    if Z == 0:
        return src.split(F)
    if Z == 1 and F == 0.0:
        return MMPP(src.phi1, src.phi2, src.l1, src.l2)
    t = 0.5 * (1 / src.phi1 + 1 / src.phi2)
    lam_s, it_s, ii_s, g_s = chars(src, t)
    lam, a_t, a_i, g3 = Z * lam_s, Z * it_s * lam_s, Z * ii_s * lam_s, Z * g_s
    if F > 0:
        lF, itF, iiF, gF = chars(src.split(F), t)
        lam += lF
        a_t += itF * lF
        a_i += iiF * lF
        g3 += gF
    return hl_fit(lam, a_t / lam, a_i / lam, g3, t, (src.phi1, src.phi2))


def superpose(comps):
    """Superposition of independent MMPP(2) components [(MMPP, count), ...] fitted once (HL,
    3.19-3.22) at the W-5 time t = (1/2K) sum_k (1/phi_k1 + 1/phi_k2).  Poisson components only:
    Poisson.  Used for the C/D inputs ("N copies of the source split by xi", issue 22)."""
    comps = [(m, k) for m, k in comps if k > 0 and m.rate() > 0]
    if all(m.is_poisson() for m, _ in comps):
        lam = sum(k * m.l1 for m, k in comps)
        m0 = comps[0][0]
        return MMPP(m0.phi1, m0.phi2, lam, lam, "poisson")
    if len(comps) == 1 and comps[0][1] == 1:
        return comps[0][0]
    K = sum(k for _, k in comps)
    t = sum(k * 0.5 * (1 / m.phi1 + 1 / m.phi2) for m, k in comps) / K
    lam = a_t = a_i = g3 = 0.0
    for m, k in comps:
        l, it, ii, g = chars(m, t)
        lam += k * l
        a_t += k * it * l
        a_i += k * ii * l
        g3 += k * g
    return hl_fit(lam, a_t / lam, a_i / lam, g3, t, (comps[0][0].phi1, comps[0][0].phi2))


def mix(contribs):
    """Channel process fed by several clusters' sources: [(source MMPP of cluster u, multiplier
    f_u), ...] -> floor(f_u) copies of that source plus one copy split by frac(f_u), for every u,
    superposed and fitted once.  With one contributor this is `multiplier`."""
    contribs = [(m, f) for m, f in contribs if f > 0]
    if len(contribs) == 1:
        return multiplier(*contribs[0])
    comps = []
    for m, f in contribs:
        Z = math.floor(f)
        if Z:
            comps.append((m, Z))
        if f > Z:
            comps.append((m.split(f - Z), 1))
    if len(comps) == 1 and comps[0][1] == 1:
        return comps[0][0]
    return superpose(comps)


# ---------------------------------------------------------------- service laws

def expm2(A):
    """Closed-form exponential of a real 2x2 matrix with real eigenvalues (the Metzler matrices
    D0 + D1 G times x >= 0 here); falls back to scipy for a complex pair."""
    a, b, c, d = A[0, 0], A[0, 1], A[1, 0], A[1, 1]
    s = 0.5 * (a + d)
    disc = 0.25 * (a - d) ** 2 + b * c
    if disc < 0:
        return expm(A)
    q = math.sqrt(disc)
    ep = math.exp(s + q)
    em = math.exp(s - q)
    ch = 0.5 * (ep + em)
    x = 2 * q
    if x == 0.0:
        sh = em
    elif x < 1.0:
        sh = em * math.expm1(x) / x       # (ep - em)/(2q) without cancellation
    else:
        sh = (ep - em) / x
    return np.array([[ch + sh * (a - s), sh * b], [sh * c, ch + sh * (d - s)]])


class Service:
    """Mixture of (weight, shift c, mean of the exponential part b): H = shift(c) * Exp(1/b);
    b = 0 means deterministic."""

    def __init__(self, parts):
        self.parts = [(float(w), float(c), float(b)) for (w, c, b) in parts if w > 0]

    def mean(self):
        return sum(w * (c + b) for w, c, b in self.parts)

    def m2(self):
        return sum(w * (c * c + 2 * c * b + 2 * b * b) for w, c, b in self.parts)

    def H(self, M):
        """int e^{Mx} dH(x) = sum w e^{Mc} alpha (alpha I - M)^{-1}"""
        out = np.zeros((2, 2))
        I = np.eye(2)
        for w, c, b in self.parts:
            E = expm2(M * c)
            if b > 0:
                a = 1.0 / b
                E = E @ (a * np.linalg.inv(a * I - M))
            out += w * E
        return out


def solve_G(m, S):
    """Minimal nonnegative G = int e^{(D0 + D1 G)x} dH(x) (M-1), D0 = Q - Lambda, D1 = Lambda.
    Functional iteration from G0 = 0; if slow (rho near 1), Newton (fsolve) on the two free
    entries of the stochastic G, started from the last iterate."""
    D0 = m.Q() - m.L()
    D1 = m.L()
    G = np.zeros((2, 2))
    for _ in range(400):
        Gn = S.H(D0 + D1 @ G)
        if np.max(np.abs(Gn - G)) < 1e-15:
            return Gn
        G = Gn

    def res(x):
        a, b = x
        Gx = np.array([[1 - a, a], [b, 1 - b]])
        R = S.H(D0 + D1 @ Gx) - Gx
        return [R[0, 1], R[1, 0]]

    x, _, _, _ = fsolve(res, [G[0, 1], G[1, 0]], xtol=1e-14, full_output=True)
    a, b = x
    Gx = np.array([[1 - a, a], [b, 1 - b]])
    Gn = S.H(D0 + D1 @ Gx)
    if np.max(np.abs(Gn - Gx)) > 1e-11:
        raise RuntimeError("G did not converge")
    return Gn


def mmpp_g1_wait(m, S):
    """(3.37)-(3.38): mean (actual) waiting time of an MMPP/G/1 queue; returns (W, rho)."""
    lam = m.rate()
    t = S.mean()
    t2 = S.m2()
    rho = lam * t
    if rho >= 1.0:
        return math.inf, rho
    if m.is_poisson():
        # reduces exactly to Pollaczek-Khinchine; evaluate it directly (no G needed)
        return lam * t2 / (2 * (1 - rho)), rho
    G = solve_G(m, S)
    # g: stationary vector of G
    a, b = G[0, 1], G[1, 0]
    g = np.array([b, a]) / (a + b) if a + b > 0 else np.array([0.5, 0.5])
    Q = m.Q()
    pi = m.pi()
    e = np.ones(2)
    lhat = m.L() @ e
    X = np.linalg.inv(Q + np.outer(e, pi))
    Wv = (2 * rho + lam * t2 - 2 * t * (((1 - rho) * g + t * (pi @ m.L())) @ X @ lhat)) / (2 * (1 - rho))
    W = (Wv - 0.5 * lam * t2) / rho
    return W, rho


BLOCK_FLAGS = []


def blocking_prob(m, T, eps=1e-12):
    """W-25: 4-state chain [[Q - diag(l), diag(l)], [diag(mu), Q - diag(mu)]], mu_b = 1/T - l_b;
    mu_b <= 0 clamped to eps (flagged).  Returns P(busy)."""
    l = np.array([m.l1, m.l2])
    mu = 1.0 / T - l
    flag = False
    if np.any(mu <= 0):
        flag = True
        mu = np.where(mu <= 0, eps, mu)
        BLOCK_FLAGS.append((m.key(), T))
    Q = m.Q()
    A = np.block([[Q - np.diag(l), np.diag(l)], [np.diag(mu), Q - np.diag(mu)]])
    M = A.T.copy()
    M[-1, :] = 1.0
    rhs = np.zeros(4)
    rhs[-1] = 1.0
    p = solve(M, rhs)
    return p[2] + p[3], flag
