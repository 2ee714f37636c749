#!/usr/bin/env python3
"""M/M/1/K queue simulator in standard-library Python: a solver for repro.

Protocol (repro's "Bring your own solver"): one JSON object on stdin,

    {"solver": "mm1k_py", "params": {"lambda": 0.9, "mu": 1.0, "K": 10, ...},
     "seed": 123, "fidelity": "full", "replication": 0}

and one JSON object on stdout,

    {"metrics": {"L": {"value": ..., "half_width": ..., "n": ...}, ...}}

The queue: Poisson arrivals at rate lambda, one exponential server at rate
mu, room for K customers including the one in service; an arrival that
finds K customers is lost. Measured by batch means over arriving customers:
`warmup` arrivals are discarded, then `batches` batches of `batch_len`
arrivals each give one estimate per batch of

    L          time-average number in system
    W          mean sojourn time of the accepted customers (FIFO)
    P_block    fraction of arrivals lost
    throughput accepted customers per unit time

and the answer is the mean of the batch estimates with its 95% Student-t
half-width. The simulation draws its own arrivals and services; it never
evaluates the closed form it is compared with.
"""

import json
import math
import random
import sys
from collections import deque

# Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    if df <= len(T975):
        return T975[df - 1]
    # Cornish-Fisher expansion around the normal quantile beyond the table.
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def simulate(lam, mu, K, warmup, batches, batch_len, rng):
    """Batch estimates of (L, W, P_block, throughput).

    Each exponential is drawn as random.expovariate draws it,
    -log(1 - U) / rate, with the method lookups hoisted out of the loop
    (the same numbers; a third less CPU in CPython 3.11). The simulation
    walks from arrival to arrival: before each arrival, the departures that
    come earlier (strictly; an arrival at the same instant goes first).
    The warm-up and each batch are a counted loop over their arrivals, so
    the loops carry no "measuring yet?" or "batch over?" tests, and a
    batch's accepted and departed customers follow from its losses and the
    number present at its start and end instead of being counted.
    """
    rand = rng.random
    log = math.log
    inf = math.inf
    in_system = deque()          # arrival times of the customers present, FIFO
    append = in_system.append
    popleft = in_system.popleft
    n = 0                        # customers present
    t = 0.0
    next_arrival = -log(1.0 - rand()) / lam
    next_departure = inf
    # Warm-up: `warmup` arrivals, nothing measured.
    for _ in range(warmup):
        while next_departure < next_arrival:
            t = next_departure
            popleft()
            n -= 1
            next_departure = t + -log(1.0 - rand()) / mu if n else inf
        t = next_arrival
        if n < K:
            append(t)
            n += 1
            if n == 1:
                next_departure = t + -log(1.0 - rand()) / mu
        next_arrival = t + -log(1.0 - rand()) / lam
    estimates = []
    start = t                    # time the current batch started
    for _ in range(batches):
        area = 0.0               # integral of the number in system
        sojourn = 0.0            # summed sojourns of the customers who left
        lost = 0
        n_start = n
        for _ in range(batch_len):
            while next_departure < next_arrival:
                area += n * (next_departure - t)
                t = next_departure
                sojourn += t - popleft()
                n -= 1
                next_departure = t + -log(1.0 - rand()) / mu if n else inf
            area += n * (next_arrival - t)
            t = next_arrival
            if n < K:
                append(t)
                n += 1
                if n == 1:
                    next_departure = t + -log(1.0 - rand()) / mu
            else:
                lost += 1
            next_arrival = t + -log(1.0 - rand()) / lam
        accepted = batch_len - lost
        departed = n_start + accepted - n
        span = t - start
        estimates.append((
            area / span,
            sojourn / departed if departed else 0.0,
            lost / batch_len,
            accepted / span,
        ))
        start = t
    return estimates


def main():
    request = json.load(sys.stdin)
    p = request["params"]
    lam, mu, K = float(p["lambda"]), float(p["mu"]), int(p["K"])
    warmup, batches, batch_len = int(p["warmup"]), int(p["batches"]), int(p["batch_len"])
    rng = random.Random(request["seed"])
    estimates = simulate(lam, mu, K, warmup, batches, batch_len, rng)
    metrics = {}
    for i, name in enumerate(["L", "W", "P_block", "throughput"]):
        xs = [e[i] for e in estimates]
        mean = sum(xs) / len(xs)
        var = sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
        metrics[name] = {
            "value": mean,
            "half_width": t975(len(xs) - 1) * math.sqrt(var / len(xs)),
            "n": len(xs),
        }
    json.dump({"metrics": metrics}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
