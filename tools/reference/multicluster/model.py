"""Independent Python reference of the Wu ch.4 / ch.5 multi-cluster analytical model
(`multicluster.model`), written from the thesis, catalogue secs. 0, 3.0, 3.2, 3.3, errata W-5,
W-12, W-21..W-40, M-6/M-7/M-13/M-20 and the choice points of issue 22 only.

    python3 model.py '<params json>'      prints {"status": ..., "metrics": {...}}

The parameter names are those of the issue's solver interface.  See README.md for every gap
this file had to fill (marked G-n in the comments).
"""
import json
import math
import sys

from mmpp2 import MMPP, Service, multiplier, superpose, mix, mmpp_g1_wait, blocking_prob, BLOCK_FLAGS, FIT_LOG


class Saturated(Exception):
    pass


def timing(net, Lf):
    """(4.15) t_cn = 0.5 theta_n + L_f / B; (4.17) t_cs = theta_s + L_f / B."""
    B = float(net["bandwidth"])
    return 0.5 * float(net["network_latency"]) + Lf / B, float(net["switch_latency"]) + Lf / B


def tree_P(m, n, N):
    """(4.6) / (5.4 with W-33): P_j, j = 1..n, for a destination uniform over the other N-1 leaves."""
    h = m // 2
    return [((m - 1) if j == n else (h - 1)) * h ** (j - 1) / (N - 1) for j in range(1, n + 1)]


def tree_P_eta(m, n, eta):
    """(4.7) by direct summation (W-22)."""
    h = m // 2
    w = [((m - 1) if j == n else (h - 1)) * h ** (j - 1) * eta ** j for j in range(1, n + 1)]
    s = sum(w)
    return [x / s for x in w]


def mean_dist(P):
    return sum(2 * (j + 1) * p for j, p in enumerate(P))


class Ctx:
    """Per-solve state: memo of stage suffixes and the largest utilisation seen."""

    def __init__(self):
        self.memo = {}
        self.rho_max = 0.0
        self.rho_where = ""
        self.queues = 0

    def check(self, rho, where):
        if rho > self.rho_max:
            self.rho_max, self.rho_where = rho, where
        if rho >= 1.0:
            raise Saturated(f"{where}: utilisation {rho:.6g} >= 1")

    def path(self, stages, where):
        """stages: list of (MMPP, shift c_k) for k = 0..K-1.  Backward substitution of
        (4.16)/(4.18)/(4.22)-(4.24): T_k = c_k + B_k, B_k = sum_{l>k} Wb_l, Wb_k = Pb_k Wc_k with
        Wc_k the MMPP/G/1 wait of the stage's own queue (arrival = channel process, service =
        shift c_k + Exp(mean B_k)).  Returns B_0 (the exponential part of T_0 = T_j)."""
        K = len(stages)
        B = 0.0
        for k in range(K - 1, -1, -1):
            proc, c = stages[k]
            key = (tuple((s[0].key(), s[1]) for s in stages[k:]))
            if key in self.memo:
                Bk, Wbk, rho = self.memo[key]
            else:
                Bk = B
                T = c + Bk
                S = Service([(1.0, c, Bk)])
                rho = proc.rate() * T
                self.check(rho, f"{where} stage {k}/{K - 1}")
                Wc, _ = mmpp_g1_wait(proc, S)
                Pb, _ = blocking_prob(proc, T)
                Wbk = Pb * Wc
                self.memo[key] = (Bk, Wbk, rho)
                self.queues += 1
            B = Bk + Wbk
            if k == 0:
                return Bk
        raise AssertionError


def src_process(p):
    l1, l2 = float(p["lambda1"]), float(p.get("lambda2", 0.0))
    f1, f2 = float(p["phi1"]), float(p["phi2"])
    if p.get("source", "mmpp") == "poisson":
        lb = (l1 * f2 + l2 * f1) / (f1 + f2)
        return MMPP(f1, f2, lb, lb, "poisson")
    return MMPP(f1, f2, l1, l2)


def source_wait(ctx, proc, classes, where):
    """Source queue: MMPP/G/1 with service the mixture over path classes (W-12 style).
    classes: list of (prob, c_0, B_0)."""
    S = Service(classes)
    rho = proc.rate() * S.mean()
    ctx.check(rho, where)
    key = ("src", proc.key(), tuple(classes))
    if key not in ctx.memo:
        ctx.memo[key] = mmpp_g1_wait(proc, S)[0]
    return ctx.memo[key], S.mean()


def cd_wait(ctx, proc, service, where):
    S = Service([(1.0, service, 0.0)])
    rho = proc.rate() * service
    ctx.check(rho, where)
    W, _ = mmpp_g1_wait(proc, S)
    return W


def icn_stage(k, a, r, stage_map):
    """W-27 / W-36: ICN for a <= k < a + 2r ('w27'); one stage earlier for 'physical'."""
    if stage_map == "w27":
        return a <= k < a + 2 * r
    if stage_map == "physical":
        return a - 1 <= k < a + 2 * r - 1
    raise ValueError(f"stage_map: unknown value {stage_map!r}")


CH5_LOADS = "scaled"   # G-7: "scaled" (default since DISAGREEMENTS.md D-2) or "unscaled"
TAIL = "literal"   # G-3: "literal" (default since DISAGREEMENTS.md D-1) or "stages"


def tail_time(K, a, r, smap, tcsE, tcsI, tcnE):
    """Tail time of an inter-cluster class "based on Eq. (4.26)".
    literal: sum_{k=1}^{K-1} t_cs^k + t_cn^E, t_cs^k from the stage map (4.28)/(5.18) for every k
             in 1..K-1 (the index range of 4.26);
    stages:  sum_{k=0}^{K-2} t_cs^k + t_cn^E (the per-flit times of the stages whose service is
             w t_cs^k in 4.27) - my first reading, see DISAGREEMENTS.md D-1."""
    ks = range(1, K) if TAIL == "literal" else range(0, K - 1)
    return sum(tcsI if icn_stage(k, a, r, smap) else tcsE for k in ks) + tcnE


def n_c_ch4(C, m):
    # (4.1)  n_c = ceil((log2 C - 1)/(log2 m - 1)); computed on integers to avoid rounding
    n = 1
    while 2 * (m // 2) ** n < C:
        n += 1
    return n


# ====================================================================== chapter 4

def solve_ch4(p):
    ctx = Ctx()
    m, n, C = int(p["m"]), int(p["n"]), int(p["C"])
    N = 2 * (m // 2) ** n
    nc = n_c_ch4(C, m)
    omega, Lf = float(p["omega"]), float(p["Lf"])
    xi, eta = float(p["xi"]), float(p["eta_in"])
    chan = {"printed": 4, "derived": 2}[p.get("channels", "printed")]
    ecn_twice = {"printed": True, "single": False}[p.get("ecn_num", "printed")]
    cd = p.get("cd", "derived")
    smap = p.get("stage_map", "w27")
    tcnA, tcsA = timing(p["acn"], Lf)
    tcnE, tcsE = timing(p["ecn"], Lf)
    tcnI, tcsI = timing(p["icn"], Lf)     # t_cn^I unused: the ICN has no node links on the path
    src = src_process(p)

    Pin = tree_P_eta(m, n, eta)
    Pp = tree_P(m, n, N)
    Pq = tree_P(m, nc, C)                  # W-28 (G-1: C must be a tree size, see README)
    d_in, d_E, d_I = mean_dist(Pin), mean_dist(Pp), mean_dist(Pq)
    fA = (1 - xi) * d_in / (chan * n)                          # (4.10)
    fE = (2 if ecn_twice else 1) * xi * d_E / (chan * n)       # (4.11)
    fI = N * xi * d_I / (chan * nc)                            # (4.12)
    cA, cE, cI = multiplier(src, fA), multiplier(src, fE), multiplier(src, fI)

    # intra-cluster, (4.13)-(4.26)
    classes, T_in, tau_in = [], 0.0, 0.0
    for j in range(1, n + 1):
        K = 2 * j - 1
        st = [(cA, omega * tcsA)] * (K - 1) + [(cA, omega * tcnA)]
        B0 = ctx.path(st, f"ACN class j={j}")
        c0 = st[0][1]
        classes.append((Pin[j - 1], c0, B0))
        T_in += Pin[j - 1] * (c0 + B0)
        tau_in += Pin[j - 1] * ((K - 1) * tcsA + tcnA)           # (4.26)
    W_in, _ = source_wait(ctx, src.split(1 - xi), classes, "source queue (ACN)")   # (4.25)

    # inter-cluster, (4.27)-(4.30)
    classes, T_out, tau_out = [], 0.0, 0.0
    for pp in range(1, n + 1):
        for q in range(1, nc + 1):
            K = 2 * (pp + q) - 1
            st = []
            for k in range(K - 1):
                if icn_stage(k, pp, q, smap):
                    st.append((cI, omega * tcsI))
                else:
                    st.append((cE, omega * tcsE))
            st.append((cE, omega * tcnE))
            tail = tail_time(K, pp, q, smap, tcsE, tcsI, tcnE)   # G-3 (tail time)
            w = Pp[pp - 1] * Pq[q - 1]
            B0 = ctx.path(st, f"ECN/ICN class p={pp},q={q}")
            c0 = st[0][1]
            classes.append((w, c0, B0))
            T_out += w * (c0 + B0)
            tau_out += w * tail
    W_out, _ = source_wait(ctx, src.split(xi), classes, "source queue (ECN)")

    # C/D (W-29, issue 22): derived = N iid copies of the source split by xi (not the
    # floor/frac multiplier rule of the channels); printed = MMPP_cI
    cd_proc = superpose([(src.split(xi), N)]) if cd == "derived" else cI
    if cd not in ("derived", "printed"):
        raise ValueError("cd")
    W_c = cd_wait(ctx, cd_proc, omega * tcsI, "concentrator")
    W_d = W_c
    Lat_in = T_in + W_in + tau_in
    Lat_out = T_out + W_out + W_c + W_d + tau_out
    lat = (1 - xi) * Lat_in + xi * Lat_out
    info = dict(N=N, n_c=nc, fA=fA, fE=fE, fI=fI, d_in=d_in, d_E=d_E, d_I=d_I, T_in=T_in, W_in=W_in,
                tau_in=tau_in, T_out=T_out, W_out=W_out, tau_out=tau_out, cA=repr(cA), cE=repr(cE),
                cI=repr(cI), cd=repr(cd_proc), rho_max=ctx.rho_max, rho_where=ctx.rho_where,
                queues=ctx.queues)
    return dict(latency=lat, latency_in=Lat_in, latency_out=Lat_out, W_c=W_c, W_d=W_d), info


# ====================================================================== chapter 5

def solve_ch5(p):
    ctx = Ctx()
    cl = p["clusters"]
    C = len(cl)
    mc = int(p["m_c"])
    nc = None
    for k in range(1, 64):
        if 2 * (mc // 2) ** k == C:
            nc = k
            break
    if nc is None:
        raise ValueError("C must equal 2 (m_c/2)^n_c (5.2)")
    omega, Lf = float(p["omega"]), float(p["Lf"])
    chan = {"printed": 4, "derived": 2}[p.get("channels", "printed")]
    ecn_twice = {"printed": True, "single": False}[p.get("ecn_num", "printed")]
    cd = p.get("cd", "derived")
    smap = p.get("stage_map", "w27")
    inflow_v = p.get("inflow", "derived")
    weights_v = p.get("weights", "derived")
    disp = p.get("dispatcher", "inflow")
    leg2 = p.get("ecn_leg2", "path")
    for name, val, ok in (("cd", cd, ("derived", "printed")), ("inflow", inflow_v, ("derived", "printed")),
                          ("weights", weights_v, ("derived", "printed")),
                          ("dispatcher", disp, ("inflow", "same", "dest")), ("ecn_leg2", leg2, ("path", "own"))):
        if val not in ok:
            raise ValueError(f"{name}: {val!r}")
    tcnE, tcsE = timing(p["ecn"], Lf)
    _, tcsI = timing(p["icn"], Lf)
    src = src_process(p)

    m = [int(c["m"]) for c in cl]
    n = [int(c["n"]) for c in cl]
    phi = [float(c.get("user_level", 0.0)) for c in cl]
    s = [1.0 / (1.0 - x) for x in phi]                               # M-20
    N = [2 * (m[i] // 2) ** n[i] for i in range(C)]                  # (5.1)
    Nt = sum(N)
    P = [tree_P(m[i], n[i], N[i]) for i in range(C)]                 # (5.4), W-33
    d = [mean_dist(P[i]) for i in range(C)]                          # (5.5)
    Pc = tree_P(mc, nc, C)
    dc = mean_dist(Pc)
    xi = [(Nt - N[i]) / (Nt - 1) for i in range(C)]                  # (5.6)
    tA = [timing(c["acn"], Lf) for c in cl]
    out = [N[i] * xi[i] * s[i] for i in range(C)]
    inflow_der = [sum(N[u] * s[u] for u in range(C) if u != i) * N[i] / (Nt - 1) for i in range(C)]  # W-34

    # Channel processes (5.7)-(5.9).  G-7: every cluster's own source is the scaled MMPP
    # (Q_s, Lambda_s/(1-phi_u)) (M-20); a load fed by several clusters is the superposition, over
    # the contributing clusters u, of floor(f_u) copies of u's source plus a split copy, fitted once.
    # CH5_LOADS = "unscaled" is my first reading (one multiplier, with the printed (1-phi)^-1
    # factors, of the unscaled MMPP_s); see DISAGREEMENTS.md D-2.
    srcs = [src.split(s[u]) for u in range(C)]

    def load(contribs):            # contribs: [(u, multiplier of u's scaled source)]
        if CH5_LOADS == "unscaled":
            return multiplier(src, sum(f * s[u] for u, f in contribs))
        return mix([(srcs[u], f) for u, f in contribs])

    def fE_contribs(i, v):                                           # (5.8)
        k = d[i] / (chan * n[i] * N[i]) * (1.0 if ecn_twice else 0.5)   # G-6
        c = [(i, N[i] * xi[i] * k)]
        if inflow_v == "printed":
            c.append((v, N[v] * xi[v] * k))
        else:                                                        # W-34
            c += [(u, N[u] * N[i] / (Nt - 1) * k) for u in range(C) if u != i]
        return c

    cI = load([(u, N[u] * xi[u] * dc / (chan * nc * C)) for u in range(C)])   # (5.9)
    fI = sum(out) * dc / (chan * nc * C)
    procE = {}

    def cE(i, v):
        key = (i, v) if inflow_v == "printed" else (i,)
        if key not in procE:
            procE[key] = load(fE_contribs(i, v))
        return procE[key]

    def wts(i):
        if weights_v == "printed":
            return {v: 1.0 / (C - 1) for v in range(C) if v != i}
        return {v: N[v] / (Nt - N[i]) for v in range(C) if v != i}  # W-37

    # ---- intra
    Lin, Tin_l, Win_l = [], [], []
    for i in range(C):
        tcnA, tcsA = tA[i]
        cA = load([(i, d[i] * (1 - xi[i]) / (chan * n[i]))])        # (5.7)
        classes, T, R = [], 0.0, 0.0
        for j in range(1, n[i] + 1):
            K = 2 * j - 1
            st = [(cA, omega * tcsA)] * (K - 1) + [(cA, omega * tcnA)]
            B0 = ctx.path(st, f"ACN_{i} class j={j}")
            classes.append((P[i][j - 1], st[0][1], B0))
            T += P[i][j - 1] * (st[0][1] + B0)
            R += P[i][j - 1] * ((K - 1) * tcsA + tcnA)             # (5.16)
        W, _ = source_wait(ctx, src.split((1 - xi[i]) * s[i]), classes, f"source queue ACN_{i}")  # (5.14), G-5
        Lin.append(T + W + R)
        Tin_l.append(T)
        Win_l.append(W)

    # ---- inter, (5.17)-(5.20), W-35, W-36
    memo_pair = {}

    def pair(i, v):
        e1 = cE(i, v)
        e2 = e1 if leg2 == "path" else cE(v, i)
        key = (m[i], n[i], m[v], n[v], e1.key(), e2.key())
        if key in memo_pair:
            return memo_pair[key]
        classes, T, R = [], 0.0, 0.0
        for a in range(1, n[i] + 1):
            for r in range(1, nc + 1):
                for u in range(1, n[v] + 1):
                    K = a + 2 * r + u - 1
                    st = []
                    seen_icn = False
                    for k in range(K - 1):
                        if icn_stage(k, a, r, smap):
                            st.append((cI, omega * tcsI))
                            seen_icn = True
                        else:
                            st.append(((e2 if seen_icn else e1), omega * tcsE))
                    st.append((e2, omega * tcnE))
                    tail = tail_time(K, a, r, smap, tcsE, tcsI, tcnE)
                    w = P[i][a - 1] * Pc[r - 1] * P[v][u - 1]
                    B0 = ctx.path(st, f"inter {i}->{v} class a={a},r={r},u={u}")
                    classes.append((w, st[0][1], B0))
                    T += w * (st[0][1] + B0)
                    R += w * tail
        memo_pair[key] = (classes, T, R)
        return memo_pair[key]

    srcout = [src.split(xi[i] * s[i]) for i in range(C)]            # G-5: scaled source split by xi
    Lout = []
    for i in range(C):
        tot = 0.0
        for v, w in wts(i).items():
            classes, T, R = pair(i, v)
            W, _ = source_wait(ctx, srcout[i], classes, f"source queue ECN_{i} to {v}")
            tot += w * (T + W + R)
        Lout.append(tot)

    # ---- C/D (W-38 as W-29; dispatcher variants of issue 22)
    cdc = {}

    def wq(comps, where):
        key = tuple((m_.key(), k) for m_, k in comps)
        if key not in cdc:
            cdc[key] = cd_wait(ctx, superpose(comps), omega * tcsI, where)
        return cdc[key]

    if cd == "printed":
        Wp = cd_wait(ctx, cI, omega * tcsI, "C/D (printed: MMPP_cI)")
        Wc = [Wp] * C
        Wd = [Wp] * C
    else:
        # concentrator: N_i copies of the cluster's (scaled) source split by xi_i;
        # dispatcher: the traffic actually entering cluster i = N_u copies of cluster u's source
        # split by N_i/(N_tot-1), u != i (G-9)
        Wc = [wq([(src.split(xi[i] * s[i]), N[i])], f"concentrator {i}") for i in range(C)]
        Wd_in = [wq([(src.split(s[u] * N[i] / (Nt - 1)), N[u]) for u in range(C) if u != i], f"dispatcher {i}")
                 for i in range(C)]
        if disp == "same":
            Wd = list(Wc)
        elif disp == "inflow":
            Wd = Wd_in
        else:  # dest: the dispatcher of the destination cluster, averaged with the weights
            Wd = [sum(w * Wd_in[v] for v, w in wts(i).items()) for i in range(C)]

    Lat = [(1 - xi[i]) * Lin[i] + xi[i] * (Lout[i] + Wc[i] + Wd[i]) for i in range(C)]   # (5.21)
    lat = sum(N[i] * Lat[i] for i in range(C)) / Nt                                       # (5.22)
    # G-8 (DISAGREEMENTS.md D-3): aggregates weighted by the intra / inter message shares of
    # (5.22), N_i(1-xi_i) and N_i xi_i, so that latency = a latency_in + (1-a) latency_out
    win = [N[i] * (1 - xi[i]) for i in range(C)]
    wout = [N[i] * xi[i] for i in range(C)]
    met = dict(latency=lat,
               latency_in=sum(win[i] * Lin[i] for i in range(C)) / sum(win),
               latency_out=sum(wout[i] * (Lout[i] + Wc[i] + Wd[i]) for i in range(C)) / sum(wout),
               W_c=sum(wout[i] * Wc[i] for i in range(C)) / sum(wout),
               W_d=sum(wout[i] * Wd[i] for i in range(C)) / sum(wout))
    for i in range(C):
        met[f"latency_{i}"] = Lat[i]
    # alternative aggregate definitions (G-8), for diagnosing definitional differences
    wmsg_in = [N[i] * s[i] * (1 - xi[i]) for i in range(C)]
    wmsg_out = [N[i] * s[i] * xi[i] for i in range(C)]
    alt = dict(
        latency_in_msg=sum(wmsg_in[i] * Lin[i] for i in range(C)) / sum(wmsg_in),
        latency_out_msg=sum(wmsg_out[i] * (Lout[i] + Wc[i] + Wd[i]) for i in range(C)) / sum(wmsg_out),
        latency_out_noCD=sum(N[i] * Lout[i] for i in range(C)) / Nt,
        W_c_msg=sum(wmsg_out[i] * Wc[i] for i in range(C)) / sum(wmsg_out),
        W_d_msg=sum(wmsg_out[i] * Wd[i] for i in range(C)) / sum(wmsg_out),
        latency_msg=sum(N[i] * s[i] * Lat[i] for i in range(C)) / sum(N[i] * s[i] for i in range(C)),
    )
    info = dict(N=N, n_c=nc, xi=xi, d=d, d_c=dc, fI=fI, Lin=Lin, Lout=Lout, Wc=Wc, Wd=Wd,
                rho_max=ctx.rho_max, rho_where=ctx.rho_where, queues=ctx.queues, alt=alt)
    return met, info


def solve(p):
    """Returns {"status": "ok"|"saturated", "metrics": {...}, "reason": str, "info": {...}}."""
    BLOCK_FLAGS.clear()
    FIT_LOG.clear()
    try:
        if "clusters" in p:
            met, info = solve_ch5(p)
        else:
            met, info = solve_ch4(p)
    except Saturated as e:
        return dict(status="saturated", metrics={}, reason=str(e), info={})
    info["mu_clamped"] = len(BLOCK_FLAGS)
    info["ipp_clamps"] = len(FIT_LOG)
    return dict(status="ok", metrics=met, reason="", info=info)


if __name__ == "__main__":
    r = solve(json.loads(sys.argv[1]))
    print(json.dumps(r, indent=1, default=str))
