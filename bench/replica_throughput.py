"""Aggregate generation throughput of `gguflow serve` replicas behind HAProxy
(tools/haproxy/gguflow.cfg) against one replica alone: tokens/s over a fixed load of
completions at temperature 0 (ignore_eos, so every request makes max_tokens tokens).

  /usr/bin/python3 bench/replica_throughput.py build/bin/gguflow ../shared/data \
      [--model stories260K.gguf] [--requests 128] [--connections 8] [--max-tokens 128]

Figures on a shared machine are noisy: docs/DEPLOY.md records some and says what they mean.
"""
import argparse
import concurrent.futures
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "deploy"))
from replicas import HAProxy, Replica, find_tools, post_completion, workdir  # noqa: E402


def load(port, requests, connections, max_tokens):
    """(tokens/s, failed requests) for `requests` completions over `connections` clients."""
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(connections) as pool:
        results = list(pool.map(lambda _: post_completion(port, max_tokens, 300), range(requests)))
    seconds = time.monotonic() - start
    return sum(n for _, n, _ in results) / seconds, sum(not ok for ok, _, _ in results)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguflow")
    ap.add_argument("data")
    ap.add_argument("--model", default="stories260K.gguf")
    ap.add_argument("--requests", type=int, default=128)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=128)
    a = ap.parse_args()
    gguflow, haproxy_bin, model = find_tools(a.gguflow, a.data, a.model)
    tmp = workdir()
    # (label, replicas, threads each, slots each, behind HAProxy). Every setup has as many KV
    # slots as connections, so none queues and the comparison is of processes, not of slots.
    c = a.connections
    setups = [("1 replica, 2 threads, direct", 1, 2, c, False),
              ("1 replica, 2 threads, HAProxy", 1, 2, c, True),
              ("2 replicas, 1 thread each, HAProxy", 2, 1, c // 2, True),
              ("2 replicas, 2 threads each, HAProxy", 2, 2, c // 2, True)]
    print(f"{a.model}: {a.requests} requests x {a.max_tokens} tokens over {a.connections} connections")
    for label, n, threads, slots, proxied in setups:
        reps = [Replica(gguflow, ["-m", model, "--parallel", str(slots), "--threads", str(threads)],
                        tmp, f"{label[:1]}-{threads}-{i}") for i in range(n)]
        lb = HAProxy(haproxy_bin, reps, tmp) if proxied else None
        try:
            port = lb.port if lb else reps[0].port
            load(port, a.connections, a.connections, 8)  # warm-up: weights packed, pages in
            tps, failed = load(port, a.requests, a.connections, a.max_tokens)
            print(f"  {label:38s} {tps:9.0f} tokens/s  ({failed} failed)")
        finally:
            if lb:
                lb.stop()
            for r in reps:
                r.kill()


if __name__ == "__main__":
    main()
