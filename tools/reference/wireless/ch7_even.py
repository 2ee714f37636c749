"""Even grids in ch.7 (issue 21): the ring counts of (7.2)/(7.3) against enumeration for every
n in 3..21, and the reference model (ch7.ref_ch7, unchanged: its ring sizes come from enumerating
Chebyshev distances around the MR ((n-1)//2, (n-1)//2), 0-based) against `repro solve
wlan_access.model` on even grids, Poisson and MMPP sources.

The gateway of an even grid: (7.3) says the gateway is one of the four central MRs and uses
min(x, y) of its coordinates. Read with 0-based coordinates and the upper-left central MR,
(n/2 - 1, n/2 - 1), min(x, y) = n/2 - 1 is the number of complete rings and the last ring
i = n/2 has 2n - 1 MRs (W-54). The other three central MRs give the same ring sizes (symmetry).
"""
import sys, json
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import solve, rel
from ch7 import ref_ch7, rings, base


def n_i_thesis(n, i):
    """(7.2) for odd n; (7.3) for even n with (x, y) = (n/2 - 1, n/2 - 1), 0-based."""
    if n % 2 == 1:
        return 8 * i
    x = y = n // 2 - 1
    return 8 * i if i <= min(x, y) else 2 * n - 1


def check_rings():
    bad = 0
    for n in range(3, 22):
        enum = rings(n)
        # every central MR of an even grid gives the same ring sizes
        if n % 2 == 0:
            for g in [(n // 2 - 1, n // 2), (n // 2, n // 2 - 1), (n // 2, n // 2)]:
                cnt = {}
                for x in range(n):
                    for y in range(n):
                        d = max(abs(x - g[0]), abs(y - g[1]))
                        if d: cnt[d] = cnt.get(d, 0) + 1
                if [cnt[i] for i in sorted(cnt)] != enum:
                    print("gateway", g, "differs on", n); bad += 1
        thesis = [n_i_thesis(n, i) for i in range(1, len(enum) + 1)]
        cfg = solve("wlan_access.config", dict(base, grid=n, p_mr=[0.05] * 10))
        m = cfg.get("metrics", {})
        got = [int(m[f"N_ring{i}"]) for i in range(1, len(enum) + 1)] if m else None
        ok = enum == thesis == got and sum(enum) == n * n - 1
        bad += not ok
        print(f"n={n:2d} h_max={len(enum):2d} enum={enum} (7.2)/(7.3)={thesis} repro={got} {'ok' if ok else 'MISMATCH'}")
    return bad


cases = []
def add(name, **kw):
    d = dict(base); d.update(kw); cases.append((name, d))
add("4x4 paper-like N=3 l1=2", grid=4, p_mr=[0.082, 0.073])
add("6x6 paper-like N=3 l1=4.4", grid=6, p_mr=[0.082, 0.073, 0.064], lambda1=4.4)
add("6x6 N=5 l1=6 w=10000", grid=6, stations=5, phi1=0.8, phi2=0.2, lambda1=6.0, t_wlan=9.09e-4, t_mesh=1.85e-4, p_mr=[0.082, 0.073, 0.064])
add("8x8 nonpaper", grid=8, stations=2, K_s=10, K_a=12, K_r=8, p_mr=[0.02, 0.03, 0.05, 0.06], phi1=0.2, phi2=0.1, lambda1=3.0, lambda2=1.0)
add("10x10 N=3 l1=3", grid=10, p_mr=[0.082, 0.073, 0.064, 0.055, 0.05], lambda1=3.0)
add("4x4 small K", grid=4, stations=4, K_s=3, K_a=5, K_r=4, p_mr=[0.01, 0.02], phi1=0.5, phi2=0.3, lambda1=1.5, lambda2=0.4, p_station=0.01, p_ap=0.02)

if __name__ == "__main__":
    bad = check_rings()
    worst = 0.0
    for source in ["poisson", "mmpp"]:
        for name, p in cases:
            q = dict(p); q["source"] = source
            r = ref_ch7(q)
            out = solve("wlan_access.model", q)
            m = out.get("metrics", {})
            for k, v in r.items():
                sv = m.get(k)
                e = rel(sv, v) if isinstance(sv, (int, float)) else float("nan")
                if k.startswith(("delay", "throughput", "D_", "load")):
                    worst = max(worst, e)
                print(f"{source:7s} | {name:26s} | {k:16s} | {v:.10g} | {sv} | {e:.2e}", flush=True)
    print(f"ring-count mismatches: {bad}; largest relative difference of a delay, throughput or load: {worst:.2e}")
