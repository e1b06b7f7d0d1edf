"""A `gguflow serve` replica behind HAProxy drained with SIGTERM (docs/DEPLOY.md, "Draining"):
streams running on it finish, new requests during its grace period reach the client as 200s
(its 503s are retried on the other replica: retry-on 503, redispatch), it exits 0, and
HAProxy's stats socket shows it DOWN and the other UP. Exit 77 (SKIPPED) without haproxy or
the shared data.

  haproxy_drain_test.py GGUFLOW DATA_DIR
"""
import concurrent.futures
import signal
import sys
import time

from replicas import HAProxy, Replica, find_tools, post_completion, workdir

GRACE_S = 20          # far longer than the streams need: they must finish, not be cancelled
STREAM_TOKENS = 400   # long enough to be running when SIGTERM comes
N_STREAMS = 4


def main():
    gguflow, haproxy_bin, model = find_tools(sys.argv[1], sys.argv[2], "stories260K.gguf")
    tmp = workdir()
    replicas = [Replica(gguflow, ["-m", model, "--parallel", "4", "--threads", "1",
                                  "--grace", str(GRACE_S)], tmp, f"r{i}") for i in (1, 2)]
    lb = None
    try:
        lb = HAProxy(haproxy_bin, replicas, tmp)
        victim = replicas[0]
        with concurrent.futures.ThreadPoolExecutor(N_STREAMS) as pool:
            streams = [pool.submit(post_completion, lb.port, STREAM_TOKENS, 120, True)
                       for _ in range(N_STREAMS)]
            # leastconn spreads the streams; wait until the victim holds some of them.
            deadline = time.monotonic() + 30
            while int(lb.servers()["r1"]["scur"]) == 0:
                assert time.monotonic() < deadline, "no stream reached r1"
                time.sleep(0.01)
            victim.proc.send_signal(signal.SIGTERM)
            sigterm_at = time.monotonic()
            during = []
            # The grace ends when the streams do; then it stops listening and exits. Bounded
            # anyway: past the grace and 30 s for the listener, it is a hang.
            while victim.proc.poll() is None:
                assert time.monotonic() - sigterm_at < GRACE_S + 30, "r1 did not exit"
                during.append(post_completion(lb.port, 16, 60))
                time.sleep(0.05)
            exit_status = victim.proc.wait()
            exit_s = time.monotonic() - sigterm_at
            results = [s.result() for s in streams]
        for ok, n, what in results:
            assert ok and n == STREAM_TOKENS, f"a stream did not complete: {what}"
        bad = [what for ok, _, what in during if not ok]
        assert not bad, f"requests during the drain failed: {bad}"
        assert exit_status == 0, f"r1 exited with {exit_status}: {victim.log()}"
        deadline = time.monotonic() + 15
        while (state := {n: s["status"] for n, s in lb.servers().items()})["r1"] != "DOWN":
            assert time.monotonic() < deadline, f"r1 not marked DOWN: {state}"
            time.sleep(0.2)
        assert state["r2"] == "UP", state
        r1 = lb.servers()["r1"]
        print(f"{N_STREAMS} streams of {STREAM_TOKENS} tokens completed across the drain; "
              f"{len(during)} requests during the drain all answered 200; r1 exited 0 "
              f"{exit_s:.1f} s after SIGTERM; "
              f"r1 retried {r1['wretr']}, redispatched {r1['wredis']}; states {state}")
        print("PASSED")
        return 0
    finally:
        if lb:
            lb.stop()
        for r in replicas:
            r.kill()


if __name__ == "__main__":
    sys.exit(main())
