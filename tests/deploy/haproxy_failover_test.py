"""Two `gguflow serve` replicas behind HAProxy (tools/haproxy/gguflow.cfg): a bounded load test
of 64 requests over 8 connections, one replica SIGKILLed midway.

Holds: every request gets an answer within its timeout (none hangs); only requests that were
in flight when the replica died may fail, each with a clear error (HAProxy's 502 or a cut
stream); requests started after the kill all succeed (a connect to the dead replica fails and
HAProxy redispatches it); HAProxy's stats socket shows the killed replica DOWN and the other
UP. Exit 77 (SKIPPED) without haproxy or the shared data.

  haproxy_failover_test.py GGUFLOW DATA_DIR
"""
import concurrent.futures
import signal
import sys
import threading
import time

from replicas import HAProxy, Replica, find_tools, post_completion, workdir

N_REQUESTS, N_CONNECTIONS = 64, 8
MAX_TOKENS = 96
REQUEST_TIMEOUT_S = 60  # a request alone takes well under a second on stories260K
KILL_AFTER = 24         # completed requests before the kill: requests are in flight then


def main():
    gguflow, haproxy_bin, model = find_tools(sys.argv[1], sys.argv[2], "stories260K.gguf")
    tmp = workdir()
    replicas = [Replica(gguflow, ["-m", model, "--parallel", "4", "--threads", "1"], tmp, f"r{i}")
                for i in (1, 2)]
    lb = None
    try:
        lb = HAProxy(haproxy_bin, replicas, tmp)
        failures = run_load(lb, replicas[0])
        for line in failures:
            print(line)
        # Checks run every second and 2 failures mark DOWN: allow 15 s on a busy machine.
        deadline = time.monotonic() + 15
        while (state := {n: s["status"] for n, s in lb.servers().items()})["r1"] != "DOWN":
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        print(f"haproxy server states: {state}")
        rows = lb.servers()
        for name, row in rows.items():
            print(f"  {name}: {row['stot']} requests sent, {row['wretr']} retried, "
                  f"{row['wredis']} redispatched, {row['eresp']} response errors")
        assert int(rows["r1"]["stot"]) > 0, "the killed replica never got a request"
        assert state == {"r1": "DOWN", "r2": "UP"}, f"expected r1 DOWN, r2 UP, found {state}"
        print("PASSED")
        return 0
    finally:
        if lb:
            lb.stop()
        for r in replicas:
            r.kill()


def run_load(lb, victim):
    """Runs the load test, kills `victim` after KILL_AFTER answers; returns failure lines.
    Raises AssertionError when a request hangs or fails without cause."""
    done = 0
    lock = threading.Lock()
    killed_at = [None]  # time.monotonic() of the kill

    def one(i):
        nonlocal done
        started = time.monotonic()
        ok, n_tokens, what = post_completion(lb.port, MAX_TOKENS, REQUEST_TIMEOUT_S,
                                             stream=(i % 4 == 3))
        ended = time.monotonic()
        with lock:
            done += 1
            if done == KILL_AFTER:
                killed_at[0] = time.monotonic()
                victim.kill(signal.SIGKILL)
        return i, started, ended, ok, n_tokens, what

    with concurrent.futures.ThreadPoolExecutor(N_CONNECTIONS) as pool:
        results = list(pool.map(one, range(N_REQUESTS)))

    assert killed_at[0] is not None, "the replica was never killed"
    failures, n_ok = [], 0
    for i, started, ended, ok, n_tokens, what in results:
        assert ended - started < REQUEST_TIMEOUT_S, f"request {i} hung: {what}"
        if ok:
            assert n_tokens == MAX_TOKENS, f"request {i}: {n_tokens} tokens, not {MAX_TOKENS}"
            n_ok += 1
            continue
        failures.append(f"request {i} failed (in flight at the kill): {what}")
        # Only a request that was running when the replica died may fail, and with a cause
        # a client can act on.
        assert started < killed_at[0] <= ended, f"request {i} failed outside the kill: {what}"
        assert "HTTP 502" in what or "stream" in what or "IncompleteRead" in what, \
            f"request {i}: unclear failure: {what}"
    print(f"{N_REQUESTS} requests over {N_CONNECTIONS} connections: {n_ok} answered 200, "
          f"{len(failures)} failed in flight on the killed replica")
    assert len(failures) <= N_CONNECTIONS
    return failures


if __name__ == "__main__":
    sys.exit(main())
