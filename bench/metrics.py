#!/usr/bin/env python3
"""Benchmark 5 for bench/run: the cost of `pinion serve --metrics-listen` on the request path.
Two `pinion serve` processes serve the same tree, one with metrics on and one without, both
with 2 workers pinned to CPU 0; two wrk processes (1 thread each, keep-alive GETs of
manifest.json with the SDKs' poll token), one per server, are pinned to CPU 1. Each repetition
loads both servers at the same time and records each server's CPU time per request over the
same window (user + system, and user alone, from /proc).

Measuring the pair at once matters: the server is not the bottleneck here (wrk's TLS client
is), so its CPU per request depends on how many requests each wake-up serves, which moves with
wrk's pace and with whatever else runs on the machine. Measured one after the other, that
drift lands on one side of the ratio; measured together, it lands on both. The target is
on/off <= 1.03 on user + system time. Prints one JSON line per measurement to standard
output."""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--pinion", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--repetitions", type=int, default=5)
parser.add_argument("--duration", type=int, default=10)
parser.add_argument("--connections", type=int, default=32)
args = parser.parse_args()

work = os.path.abspath(args.work)
SERVER_CPU, LOAD_CPU = "0", "1"
# Polls as the SDKs send them, so the poll counter (pinion_manifest_polls_total) parses the
# query and counts every request.
PATH = "/v1/com.example.app/manifest.json?have=1&base=0123456789abcdef"


def log(message):
    print(message, file=sys.stderr, flush=True)


def emit(record):
    print(json.dumps(record, sort_keys=True), flush=True)


tree = os.path.join(work, "tree-metrics")
shutil.rmtree(tree, ignore_errors=True)
os.makedirs(tree)
for envelope in ["root.json", "manifest-10.json"]:
    subprocess.run([args.pinion, "publish", "--repo", tree, os.path.join(work, envelope)], check=True,
                   stdout=subprocess.DEVNULL)
cert, key = os.path.join(work, "server-chain.pem"), os.path.join(work, "server.key")


def start(metrics):
    command = ["taskset", "-c", SERVER_CPU, args.pinion, "serve", "--repo", tree, "--cert", cert, "--key", key,
               "--listen", "127.0.0.1:0", "--workers", "2", "--access-log", "off"]
    if metrics:
        command += ["--metrics-listen", "127.0.0.1:0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    match = re.search(r"listening on https://127\.0\.0\.1:(\d+)", process.stdout.readline())
    if not match:
        sys.exit("pinion serve did not start")
    metrics_url = None
    if metrics:
        metrics_url = process.stdout.readline().strip().removeprefix("metrics on ")
    return {"process": process, "port": int(match.group(1)), "metrics": metrics_url}


def cpu_seconds(pid):
    """(user, system) CPU seconds of a process, all threads."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


servers = {"off": start(False), "on": start(True)}
try:
    wrk_version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.splitlines()[0]

    def wrk_command(mode):
        return ["taskset", "-c", LOAD_CPU, "wrk", "-t1", f"-c{args.connections}", f"-d{args.duration}s",
                f"https://127.0.0.1:{servers[mode]['port']}{PATH}"]

    def measure_pair():
        """Both servers under load at once; one record per server."""
        before = {mode: cpu_seconds(server["process"].pid) for mode, server in servers.items()}
        runs = {mode: subprocess.Popen(wrk_command(mode), stdout=subprocess.PIPE, text=True) for mode in servers}
        outputs = {mode: run.communicate()[0] for mode, run in runs.items()}
        after = {mode: cpu_seconds(server["process"].pid) for mode, server in servers.items()}
        records = {}
        for mode, run in runs.items():
            if run.returncode != 0:
                sys.exit(f"wrk failed against the metrics-{mode} server")
            user = after[mode][0] - before[mode][0]
            system = after[mode][1] - before[mode][1]
            requests = int(re.search(r"(\d+) requests in", outputs[mode]).group(1))
            non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", outputs[mode])
            records[mode] = {"requests": requests, "serverCPUSeconds": user + system, "serverUserSeconds": user,
                             "serverCPUMicrosecondsPerRequest": (user + system) * 1e6 / max(requests, 1),
                             "serverUserMicrosecondsPerRequest": user * 1e6 / max(requests, 1),
                             "non2xx3xx": int(non2xx.group(1)) if non2xx else 0,
                             "command": " ".join(wrk_command(mode))}
        return records

    for repetition in range(args.repetitions):
        log(f"metrics: repetition {repetition + 1}, metrics on and off at once")
        for mode, record in measure_pair().items():
            emit({"benchmark": "metrics-overhead", "metrics": mode, "repetition": repetition, "wrk": wrk_version,
                  **record})
    # The counters saw what wrk sent (and a scrape works under load).
    with urllib.request.urlopen(servers["on"]["metrics"] + "/metrics", timeout=10) as response:
        text = response.read().decode()
    counted = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                  if line.startswith('pinion_http_requests_total{path_class="manifest",code="200"}'))
    emit({"benchmark": "metrics-check", "manifestResponsesCounted": counted})
finally:
    for server in servers.values():
        if server["process"].poll() is None:
            server["process"].send_signal(signal.SIGTERM)
            server["process"].wait(timeout=60)
