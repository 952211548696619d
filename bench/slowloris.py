#!/usr/bin/env python3
"""Slowloris load for bench/run: CONNECTIONS TLS connections to HOST:PORT, each sending one
byte of an endless request head every INTERVAL seconds; a connection the server closes is
opened again, so CONNECTIONS stay open. Runs until SIGTERM, then prints one JSON line of
counts to standard output."""

import json
import select
import signal
import socket
import ssl
import sys
import time

host, port, count, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
stats = {"opened": 0, "closedByServer": 0, "connectFailures": 0, "bytesDribbled": 0, "maxOpen": 0}
running = True


def stop(*_):
    global running
    running = False


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)


def open_one():
    try:
        raw = socket.create_connection((host, port), timeout=5)
        conn = context.wrap_socket(raw, server_hostname="localhost")
        conn.sendall(b"GET /v1/com.example.app/manifest.json HTTP/1.1\r\nHost: localhost\r\nX-Dribble: ")
        conn.setblocking(False)
        stats["opened"] += 1
        return conn
    except (OSError, ssl.SSLError):
        stats["connectFailures"] += 1
        return None


connections = []
while running and len(connections) < count:
    conn = open_one()
    if conn is not None:
        connections.append(conn)
print(json.dumps({"ready": len(connections)}), file=sys.stderr, flush=True)
while running:
    started = time.monotonic()
    readable, _, _ = select.select(connections, [], [], 0) if connections else ([], [], [])
    dead = set()
    for conn in readable:
        try:
            data = conn.recv(4096)
            if not data:
                dead.add(conn)
        except ssl.SSLWantReadError:
            pass
        except (OSError, ssl.SSLError):
            dead.add(conn)
    for conn in connections:
        if conn in dead:
            continue
        try:
            conn.send(b"a")
            stats["bytesDribbled"] += 1
        except (ssl.SSLWantWriteError, BlockingIOError):
            pass
        except (OSError, ssl.SSLError):
            dead.add(conn)
    for conn in dead:
        stats["closedByServer"] += 1
        connections.remove(conn)
        conn.close()
    while running and len(connections) < count:
        conn = open_one()
        if conn is None:
            break
        connections.append(conn)
    stats["maxOpen"] = max(stats["maxOpen"], len(connections))
    left = interval - (time.monotonic() - started)
    if left > 0 and running:
        time.sleep(left)
stats["openAtEnd"] = len(connections)
print(json.dumps(stats), flush=True)
