#!/usr/bin/env python3
"""MMPP(2)/M/1 FIFO queue simulated with SimPy: a solver for repro.

Protocol (repro's "Bring your own solver"): one JSON object on stdin,
{"solver", "params", "seed", "fidelity", "replication"}, one JSON object on
stdout, {"metrics": {name: {"value", "half_width", "n"}}}.

The source is a two-phase Markov-modulated Poisson process: phase 1 lasts an
exponential time of rate phi1 and emits arrivals at rate lambda1, phase 2
lasts rate phi2 and emits at rate lambda2. One exponential server of rate mu,
an unlimited FIFO queue (SimPy's Resource). Batch means over arriving
customers: `warmup` arrivals discarded, then `batches` batches of `batch_len`
arrivals, each giving

    L        time-average number in system
    W        mean sojourn time of the customers leaving in the batch
    P_empty  fraction of time the system is empty

reported as the mean of the batch estimates with its 95% Student-t half-width.
"""

import json
import math
import random
import sys

import simpy

T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    if df <= len(T975):
        return T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


class Queue:
    def __init__(self, env, p, rng):
        self.env, self.p, self.rng = env, p, rng
        self.server = simpy.Resource(env, capacity=1)
        self.phase = 0
        self.n = 0                      # customers in system
        self.last = 0.0                 # time of the last change of n
        self.area = self.empty = 0.0    # integrals over the current batch
        self.sojourn = 0.0
        self.departed = 0
        self.arrivals = 0
        self.measuring = p["warmup"] == 0
        self.start = 0.0
        self.estimates = []
        self.total = p["warmup"] + p["batches"] * p["batch_len"]
        self.done = env.event()
        self.source = env.process(self.arrive())
        env.process(self.modulate())

    def rate(self):
        return self.p["lambda1"] if self.phase == 0 else self.p["lambda2"]

    def account(self):
        now = self.env.now
        if self.measuring:
            self.area += self.n * (now - self.last)
            if self.n == 0:
                self.empty += now - self.last
        self.last = now

    def modulate(self):
        while True:
            phi = self.p["phi1"] if self.phase == 0 else self.p["phi2"]
            yield self.env.timeout(self.rng.expovariate(phi))
            self.phase = 1 - self.phase
            # Memoryless: the pending inter-arrival time is drawn anew.
            if self.source.is_alive:
                self.source.interrupt()

    def arrive(self):
        while self.arrivals < self.total:
            rate = self.rate()
            try:
                if rate > 0:
                    yield self.env.timeout(self.rng.expovariate(rate))
                else:
                    yield self.env.event()     # silent until the phase changes
            except simpy.Interrupt:
                continue
            self.account()
            self.n += 1
            self.arrivals += 1
            self.env.process(self.serve(self.env.now))
            if not self.measuring and self.arrivals == self.p["warmup"]:
                self.measuring, self.start = True, self.env.now
            elif self.measuring and (self.arrivals - self.p["warmup"]) % self.p["batch_len"] == 0:
                span = self.env.now - self.start
                self.estimates.append((self.area / span,
                                       self.sojourn / self.departed if self.departed else 0.0,
                                       self.empty / span))
                self.area = self.empty = self.sojourn = 0.0
                self.departed = 0
                self.start = self.env.now
        self.done.succeed()

    def serve(self, arrived):
        with self.server.request() as req:
            yield req
            yield self.env.timeout(self.rng.expovariate(self.p["mu"]))
        self.account()
        self.n -= 1
        if self.measuring:
            self.sojourn += self.env.now - arrived
            self.departed += 1


def main():
    req = json.load(sys.stdin)
    p = dict(req["params"])
    for k in ("warmup", "batches", "batch_len"):
        p[k] = int(p[k])
    env = simpy.Environment()
    q = Queue(env, p, random.Random(req["seed"]))
    env.run(until=q.done)
    metrics = {}
    for i, name in enumerate(["L", "W", "P_empty"]):
        xs = [e[i] for e in q.estimates]
        mean = sum(xs) / len(xs)
        var = sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
        metrics[name] = {"value": mean, "half_width": t975(len(xs) - 1) * math.sqrt(var / len(xs)),
                         "n": len(xs)}
    json.dump({"metrics": metrics}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
