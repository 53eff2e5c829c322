#!/usr/bin/env python3
"""The reference users reach for: trilateration with scipy.optimize.least_squares.

Reads the problems `whereabouts-bench engine --problems FILE` wrote: for a sample of the engine's own fixes, every
current range (nearest first) with its agent's position, antenna height above the tag, range and 1-sigma, and the
tag's true position. Solves each from the nearest K ranges (K = 4, as the engine's fix does) the way such scripts
usually do: residuals (3-D distance - range) / sigma, start at the centroid weighted by 1/range^2, default solver.

Prints one line of JSON: solves per CPU second (one thread: BLAS threads are pinned to 1 by the caller), and the
median error against the truth, to show the reference is doing the same job.
"""
import argparse
import json
import time

import numpy as np
from scipy.optimize import least_squares


def load(path, k):
    problems = []
    with open(path) as handle:
        for line in handle:
            record = json.loads(line)
            ranges = np.array(record["ranges"][:k] if k else record["ranges"], dtype=float)
            problems.append((ranges, np.array(record["truth"], dtype=float)))
    return problems


def solve(ranges):
    anchors = ranges[:, 0:2]
    dz2 = ranges[:, 2] ** 2
    measured = ranges[:, 3]
    sigma = ranges[:, 4]

    def residuals(p):
        return (np.sqrt(((anchors - p) ** 2).sum(axis=1) + dz2) - measured) / sigma

    weights = 1.0 / np.maximum(measured, 0.1) ** 2
    start = (anchors * weights[:, None]).sum(axis=0) / weights.sum()
    return least_squares(residuals, start).x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("problems")
    parser.add_argument("--k", type=int, default=4, help="nearest ranges per solve (0: all)")
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum CPU time to measure")
    args = parser.parse_args()
    problems = load(args.problems, args.k)
    errors = [float(np.hypot(*(solve(r) - truth))) for r, truth in problems]
    solves = 0
    start = time.process_time()
    while True:
        for ranges, _ in problems:
            solve(ranges)
        solves += len(problems)
        elapsed = time.process_time() - start
        if elapsed >= args.seconds:
            break
    print(json.dumps({
        "figure": "scipy_trilateration",
        "k": args.k,
        "problems": len(problems),
        "ranges_per_solve": float(np.mean([len(r) for r, _ in problems])),
        "solves": solves,
        "cpu_seconds": elapsed,
        "solves_per_cpu_second": solves / elapsed,
        "median_error_m": float(np.median(errors)),
    }))


if __name__ == "__main__":
    main()
