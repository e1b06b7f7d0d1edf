"""`gguflow serve` replicas behind HAProxy on loopback ports, for the deploy test and benchmark.

Only the standard library: the test must run wherever ctest runs. Every wait has a deadline,
so a replica or HAProxy that never comes up fails the caller instead of hanging it.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77  # ctest's SKIP_RETURN_CODE for these scripts
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAPROXY_CFG = os.path.join(SOURCE_DIR, "tools", "haproxy", "gguflow.cfg")


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def free_port():
    # The port is free when asked; HAProxy binds it a moment later (a race only with another
    # process taking the same port in between, which loopback tests accept).
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    """`gguflow serve --port 0 ARGS`; its port read from the "listening on" line on stderr."""

    def __init__(self, gguflow, args, workdir, name, timeout_s=60):
        self.name = name
        self.log_path = os.path.join(workdir, f"{name}.log")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([gguflow, "serve", "--port", "0", "--quiet", *args],
                                     stdout=subprocess.DEVNULL, stderr=self._log)
        self.port = 0
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            m = re.search(rb"listening on http://[^:]+:(\d+)", open(self.log_path, "rb").read())
            if m:
                self.port = int(m.group(1))
                return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"{name} did not come up: {self.log()}")

    def address(self):
        return f"127.0.0.1:{self.port}"

    def log(self):
        return open(self.log_path, "rb").read().decode(errors="replace")

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


class HAProxy:
    """HAProxy with tools/haproxy/gguflow.cfg over the given replicas (2 server lines there:
    with one replica, the second line points at the same one)."""

    def __init__(self, haproxy, replicas, workdir, timeout_s=30):
        self.port = free_port()
        self.socket_path = os.path.join(workdir, "haproxy.sock")
        env = dict(os.environ,
                   GGUFLOW_LB_BIND=f"127.0.0.1:{self.port}",
                   GGUFLOW_HAPROXY_SOCKET=self.socket_path,
                   GGUFLOW_REPLICA_1=replicas[0].address(),
                   GGUFLOW_REPLICA_2=replicas[-1].address())
        self.log_path = os.path.join(workdir, "haproxy.log")
        self._log = open(self.log_path, "wb")
        # -db: foreground, no daemon; -W is not needed for one process.
        self.proc = subprocess.Popen([haproxy, "-db", "-f", HAPROXY_CFG], env=env,
                                     stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"haproxy exited: {open(self.log_path).read()}")
            try:
                if all(s["status"] == "UP" for s in self.servers().values()):
                    return
            except OSError:
                pass  # the stats socket is not there yet
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("haproxy did not see every replica UP within "
                           f"{timeout_s} s: {open(self.log_path).read()}")

    def command(self, line):
        """One command on the stats socket (management guide, "show stat" etc.)."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.socket_path)
            s.sendall(line.encode() + b"\n")
            out = b""
            while chunk := s.recv(65536):
                out += chunk
        return out.decode()

    def servers(self):
        """{server name: its row of `show stat`} for the gguflow backend's servers."""
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","))) for line in lines[1:] if line]
        return {r["svname"]: r for r in rows
                if r["pxname"] == "gguflow" and r["svname"] not in ("FRONTEND", "BACKEND")}

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def post_completion(port, max_tokens, timeout_s, stream=False, prompt="Once upon a time"):
    """POSTs /v1/completions at temperature 0; returns (ok, completion tokens, what happened).
    A failure is returned, not raised: an HTTP error status with its body, or a broken stream."""
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
                       "ignore_eos": True, "stream": stream,
                       "stream_options": {"include_usage": True} if stream else None})
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body.encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            data = r.read().decode()
    except urllib.error.HTTPError as e:
        return False, 0, f"HTTP {e.code}: {e.read().decode(errors='replace').strip()[:200]}"
    except (OSError, http.client.HTTPException) as e:  # timeouts, resets, a cut stream
        return False, 0, f"{type(e).__name__}: {e}"
    if not stream:
        doc = json.loads(data)
        return True, doc["usage"]["completion_tokens"], "200"
    if not data.rstrip().endswith("data: [DONE]"):
        return False, 0, "stream ended without data: [DONE]"
    usage = [json.loads(l[6:]) for l in data.splitlines() if l.startswith("data: {")][-1]
    if not usage.get("usage"):
        return False, 0, "stream without a usage chunk (cancelled?)"
    return True, usage["usage"]["completion_tokens"], "200 stream"


def find_tools(argv_gguflow, data_dir, model_name):
    """(gguflow, haproxy, model path), or exit 77 with the reason when one is absent."""
    haproxy = shutil.which("haproxy") or (os.path.exists("/usr/sbin/haproxy") and "/usr/sbin/haproxy")
    if not haproxy:
        skip("haproxy not found (tools/install-deps.sh installs Debian's haproxy)")
    # GGUFLOW_TEST_DATA in the environment overrides the configured folder, as for every test.
    model = os.path.join(os.environ.get("GGUFLOW_TEST_DATA") or data_dir, "models", model_name)
    if not os.path.exists(model):
        skip(f"{model} not found (GGUFLOW_TEST_DATA, ../shared/data)")
    return argv_gguflow, haproxy, model


def workdir():
    return tempfile.mkdtemp(prefix="gguflow-deploy-")
