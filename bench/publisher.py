#!/usr/bin/env python3
"""Benchmark 3 for bench/run: `pinion serve` against nginx (deploy/nginx/pinion.conf, verbatim)
serving the same tree with the same certificate and key, both with 2 workers, both pinned to
CPU 0 with taskset; wrk (1 thread) and the slowloris script pinned to CPU 1. Prints one JSON
line per measurement to standard output."""

import argparse
import http.client
import json
import os
import pwd
import grp
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--pinion", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--noresume", required=True, help="LD_PRELOAD shim that stops wrk resuming TLS sessions")
parser.add_argument("--repetitions", type=int, default=3)
parser.add_argument("--duration", type=int, default=10)
parser.add_argument("--connections", type=int, default=32)
parser.add_argument("--dribblers", type=int, default=500)
args = parser.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
work = os.path.abspath(args.work)
SERVER_CPU, LOAD_CPU = "0", "1"
PATH = "/v1/com.example.app/manifest.json"


def log(message):
    print(message, file=sys.stderr, flush=True)


def emit(record):
    print(json.dumps(record, sort_keys=True), flush=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# The tree, published with the CLI.
tree = os.path.join(work, "tree")
shutil.rmtree(tree, ignore_errors=True)
os.makedirs(tree)
for envelope in ["root.json", "manifest-10.json"]:
    subprocess.run([args.pinion, "publish", "--repo", tree, os.path.join(work, envelope)], check=True,
                   stdout=subprocess.DEVNULL)
subprocess.run(["chmod", "-R", "a+rX", work], check=True)
cert, key = os.path.join(work, "server-chain.pem"), os.path.join(work, "server.key")

# pinion serve: 2 workers on CPU 0; access log off (nginx's is off too).
pinion = subprocess.Popen(
    ["taskset", "-c", SERVER_CPU, args.pinion, "serve", "--repo", tree, "--cert", cert, "--key", key,
     "--listen", "127.0.0.1:0", "--workers", "2", "--access-log", "off"],
    stdout=subprocess.PIPE, text=True)
line = pinion.stdout.readline()
match = re.search(r"listening on https://127\.0\.0\.1:(\d+)", line)
if not match:
    sys.exit(f"pinion serve did not start: {line!r}")
pinion_port = int(match.group(1))

# nginx: the shipped server block verbatim inside a minimal http block; 2 workers on CPU 0.
nginx_dir = os.path.join(work, "nginx")
shutil.rmtree(nginx_dir, ignore_errors=True)
os.makedirs(os.path.join(nginx_dir, "temp"))
nginx_port = free_port()
with open(os.path.join(here, "..", "deploy", "nginx", "pinion.conf")) as source:
    block = source.read()
for placeholder, value in [("@PINION_LISTEN@", f"127.0.0.1:{nginx_port}"), ("@PINION_SERVER_NAME@", "localhost"),
                           ("@PINION_CERT@", cert), ("@PINION_KEY@", key), ("@PINION_TREE@", tree)]:
    block = block.replace(placeholder, value)
with open(os.path.join(nginx_dir, "pinion.conf"), "w") as out:
    out.write(block)
user = ""
if os.geteuid() == 0:
    entry = pwd.getpwnam("nobody")
    user = f"user nobody {grp.getgrgid(entry.pw_gid).gr_name};"
with open(os.path.join(nginx_dir, "nginx.conf"), "w") as out:
    out.write(f"""daemon off;
master_process on;
worker_processes 2;
pid {nginx_dir}/nginx.pid;
lock_file {nginx_dir}/nginx.lock;
error_log {nginx_dir}/error.log;
{user}
events {{
    worker_connections 4096;
}}
http {{
    client_body_temp_path {nginx_dir}/temp/body;
    proxy_temp_path {nginx_dir}/temp/proxy;
    fastcgi_temp_path {nginx_dir}/temp/fastcgi;
    uwsgi_temp_path {nginx_dir}/temp/uwsgi;
    scgi_temp_path {nginx_dir}/temp/scgi;
    access_log off;
    include {nginx_dir}/pinion.conf;
}}
""")
nginx = subprocess.Popen(["taskset", "-c", SERVER_CPU, "nginx", "-c", os.path.join(nginx_dir, "nginx.conf")],
                         start_new_session=True)


def server_pids(name):
    """The processes doing the server's work: pinion serve itself, or nginx's workers."""
    if name == "pinion":
        return [pinion.pid]
    workers = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == nginx.pid:
                    workers.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return workers


def cpu_seconds(pids):
    """User + system CPU time of `pids` so far (from /proc/PID/stat, clock ticks)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def stop_servers():
    for process in [pinion]:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    if nginx.poll() is None:
        nginx.send_signal(signal.SIGQUIT)
        try:
            nginx.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(nginx.pid, signal.SIGKILL)


context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE


def fetch(port, headers=None):
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=5)
    connection.request("GET", PATH, headers=headers or {})
    response = connection.getresponse()
    body = response.read()
    result = (response.status, response.getheader("ETag"), len(body), connection.sock.version())
    connection.close()
    return result


servers = {}
try:
    for name, port in [("pinion", pinion_port), ("nginx", nginx_port)]:
        for _ in range(100):
            try:
                status, etag, length, version = fetch(port)
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit(f"{name} does not answer on port {port}")
        status304, _, _, _ = fetch(port, {"If-None-Match": etag})
        if status != 200 or status304 != 304:
            sys.exit(f"{name}: GET {status}, conditional GET {status304}")
        servers[name] = {"port": port, "etag": etag, "bodyBytes": length}
        emit({"benchmark": "publisher-check", "server": name, "status": status, "conditionalStatus": status304,
              "etag": etag, "bodyBytes": length, "pythonTLS": version})

    wrk_version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.splitlines()[0]

    def wrk(name, scenario):
        server = servers[name]
        command = ["taskset", "-c", LOAD_CPU, "wrk", "-t1", f"-c{args.connections}", f"-d{args.duration}s",
                   "--latency"]
        environment = dict(os.environ)
        if scenario == "304":
            command += ["-H", f"If-None-Match: {server['etag']}"]
        if scenario in ("close", "close-resume"):
            command += ["-H", "Connection: close"]
        if scenario == "close":
            environment["LD_PRELOAD"] = args.noresume
        command.append(f"https://127.0.0.1:{server['port']}{PATH}")
        pids = server_pids(name)
        cpu_before = cpu_seconds(pids)
        output = subprocess.run(command, capture_output=True, text=True, env=environment, check=True).stdout
        cpu_used = cpu_seconds(pids) - cpu_before
        rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
        p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
        p50 = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        p50_ms = float(p50.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[p50.group(2)]
        errors = re.search(r"Socket errors: (.*)", output)
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
        requests = int(re.search(r"(\d+) requests in", output).group(1))
        return {"requestsPerSecond": rate, "p99ms": p99_ms, "serverCPUSeconds": cpu_used,
                "serverCPUMicrosecondsPerRequest": cpu_used * 1e6 / max(requests, 1), "p50ms": p50_ms, "requests": requests,
                "socketErrors": errors.group(1) if errors else "none",
                "non2xx3xx": int(non2xx.group(1)) if non2xx else 0, "command": " ".join(command)}

    scenarios = ["keepalive-200", "304", "close", "close-resume"]
    for repetition in range(args.repetitions):
        order = ["pinion", "nginx"] if repetition % 2 == 0 else ["nginx", "pinion"]
        for scenario in scenarios:
            for name in order:
                log(f"publisher: repetition {repetition + 1}, {scenario}, {name}")
                result = wrk(name, scenario)
                emit({"benchmark": "publisher", "scenario": scenario, "server": name, "repetition": repetition,
                      "wrk": wrk_version, **result})
        # Slowloris: the keep-alive GET rate with 500 dribbling connections open, next to the
        # rate without them measured just before.
        for name in order:
            unloaded = wrk(name, "keepalive-200")
            dribbler = subprocess.Popen(
                ["taskset", "-c", LOAD_CPU, sys.executable, os.path.join(here, "slowloris.py"), "127.0.0.1",
                 str(servers[name]["port"]), str(args.dribblers), "1.0"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ready = dribbler.stderr.readline()
            log(f"publisher: repetition {repetition + 1}, slowloris, {name}: {ready.strip()}")
            loaded = wrk(name, "keepalive-200")
            dribbler.send_signal(signal.SIGTERM)
            stats = json.loads(dribbler.communicate(timeout=60)[0].strip() or "{}")
            emit({"benchmark": "slowloris", "server": name, "repetition": repetition,
                  "unloadedRequestsPerSecond": unloaded["requestsPerSecond"],
                  "loadedRequestsPerSecond": loaded["requestsPerSecond"], "loadedP99ms": loaded["p99ms"],
                  "unloadedP99ms": unloaded["p99ms"], "loadedSocketErrors": loaded["socketErrors"],
                  "dribblers": args.dribblers, "dribblerReady": json.loads(ready or "{}"), "dribblerStats": stats,
                  "command": loaded["command"]})
finally:
    stop_servers()
