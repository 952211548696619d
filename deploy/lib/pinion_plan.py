"""Reading and checking a Pinion upload plan (docs/PUBLISHING.md "Upload plans").

Shared by deploy/rsync/upload and deploy/s3/upload. Everything here refuses before any
upload: a malformed plan, a plan for another tree, a file missing or changed since the
plan was made. Standard library only, so the scripts run wherever python3 does.
"""

import hashlib
import os
import re
import subprocess
import sys
import time
import urllib.request
import ssl

PLAN_TYPE = "pinion.upload-plan"
PHASE_NAMES = ("content", "index-and-log", "manifest", "roots")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
COMPONENT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
# The serving fields pinion serve and deploy/nginx/pinion.conf send; a plan naming others
# was not made by pinion.
CONTENT_TYPES = ("application/json", "text/plain; charset=utf-8", "application/octet-stream")
CACHE_CONTROLS = ("no-cache", "public, max-age=31536000, immutable")


class PlanError(Exception):
    """A refusal: the message says what is wrong; the caller exits non-zero."""


def fail(program, message, code=1):
    sys.stderr.write(f"{program}: error: {message}\n")
    sys.exit(code)


def _require(condition, message):
    if not condition:
        raise PlanError(message)


def check_path(path, scope):
    _require(isinstance(path, str), f"a path is not a string: {path!r}")
    parts = path.split("/")
    _require(len(parts) >= 3 and parts[0] == "v1" and parts[1] == scope,
             f"{path!r}: not below v1/{scope}/")
    for part in parts:
        _require(COMPONENT.match(part) is not None,
                 f"{path!r}: a component is empty, hidden or has other characters than letters, digits, '.', '_', '-'")
    _require(parts[2] != "pending", f"{path!r}: pending/ is never uploaded")


def load(path):
    """The plan at `path`, checked field by field. Raises PlanError."""
    import json
    try:
        with open(path, "rb") as handle:
            raw = handle.read(64 << 20)
    except OSError as error:
        raise PlanError(f"{path}: cannot read the plan: {error.strerror}")
    try:
        plan = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise PlanError(f"{path}: not a JSON upload plan: {error}")
    _require(isinstance(plan, dict), f"{path}: not a JSON object")
    _require(plan.get("type") == PLAN_TYPE, f"{path}: type is {plan.get('type')!r}, not {PLAN_TYPE!r}")
    _require(plan.get("formatVersion") == 1, f"{path}: formatVersion {plan.get('formatVersion')!r} is not 1")
    tree = plan.get("tree")
    _require(isinstance(tree, dict), f"{path}: no tree object")
    scope = tree.get("scope")
    _require(isinstance(scope, str) and COMPONENT.match(scope or "") is not None, f"{path}: bad tree.scope")
    _require(isinstance(tree.get("root1SHA256"), str) and HEX64.match(tree["root1SHA256"]),
             f"{path}: tree.root1SHA256 is not 64 lowercase hex digits")
    _require(isinstance(tree.get("source"), str), f"{path}: tree.source is not a string")
    version = plan.get("manifestVersion")
    _require(version is None or (isinstance(version, int) and version >= 1), f"{path}: bad manifestVersion")
    phases = plan.get("phases")
    _require(isinstance(phases, list), f"{path}: phases is not a list")
    seen_names = []
    seen_paths = set()
    for phase in phases:
        _require(isinstance(phase, dict), f"{path}: a phase is not an object")
        name = phase.get("name")
        _require(name in PHASE_NAMES, f"{path}: unknown phase {name!r}")
        _require(name not in seen_names and all(PHASE_NAMES.index(n) < PHASE_NAMES.index(name) for n in seen_names),
                 f"{path}: phase {name!r} out of order (the order is {', '.join(PHASE_NAMES)})")
        seen_names.append(name)
        files = phase.get("files")
        _require(isinstance(files, list) and files, f"{path}: phase {name}: no files")
        for entry in files:
            _require(isinstance(entry, dict), f"{path}: phase {name}: a file is not an object")
            check_path(entry.get("path"), scope)
            _require(entry["path"] not in seen_paths, f"{path}: {entry['path']} is listed twice")
            seen_paths.add(entry["path"])
            _require(isinstance(entry.get("sha256"), str) and HEX64.match(entry["sha256"]),
                     f"{path}: {entry['path']}: sha256 is not 64 lowercase hex digits")
            _require(isinstance(entry.get("size"), int) and entry["size"] >= 0, f"{path}: {entry['path']}: bad size")
            _require(entry.get("contentType") in CONTENT_TYPES,
                     f"{path}: {entry['path']}: contentType {entry.get('contentType')!r} is not one pinion serves")
            _require(entry.get("cacheControl") in CACHE_CONTROLS,
                     f"{path}: {entry['path']}: cacheControl {entry.get('cacheControl')!r} is not one pinion serves")
            _require(entry.get("immutable") == ("immutable" in entry["cacheControl"]),
                     f"{path}: {entry['path']}: immutable does not match cacheControl")
        invalidate = phase.get("invalidate")
        _require(isinstance(invalidate, list), f"{path}: phase {name}: invalidate is not a list")
        for item in invalidate:
            check_path(item, scope)
    return plan


def read_source(source, relative):
    """Bytes of `relative` below `source`, refusing links anywhere below `source`."""
    current = os.path.realpath(source)
    parts = relative.split("/")
    for index, part in enumerate(parts):
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            raise PlanError(f"{relative}: missing in {source}")
        except OSError as error:
            raise PlanError(f"{relative}: {error.strerror}")
        import stat
        if stat.S_ISLNK(info.st_mode):
            raise PlanError(f"{relative}: {current} is a symbolic link; refusing to follow it")
        if index < len(parts) - 1 and not stat.S_ISDIR(info.st_mode):
            raise PlanError(f"{relative}: {current} is not a directory")
        if index == len(parts) - 1 and not stat.S_ISREG(info.st_mode):
            raise PlanError(f"{relative}: not a regular file")
    with open(current, "rb") as handle:
        return handle.read()


def check_sources(plan, source):
    """Every planned file is present in `source` with the planned SHA-256, and root/1.json
    is the plan's tree. Returns {path: bytes}."""
    scope = plan["tree"]["scope"]
    root1 = read_source(source, f"v1/{scope}/root/1.json")
    if hashlib.sha256(root1).hexdigest() != plan["tree"]["root1SHA256"]:
        raise PlanError(f"{source}: the plan is for another tree (root/1.json of scope {scope} differs)")
    contents = {}
    for phase in plan["phases"]:
        for entry in phase["files"]:
            data = read_source(source, entry["path"])
            if hashlib.sha256(data).hexdigest() != entry["sha256"]:
                raise PlanError(
                    f"{entry['path']}: changed since the plan was made (SHA-256 differs); make a new plan")
            contents[entry["path"]] = data
    return contents


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def fetch(url, cafile):
    """GET `url`: (status, body). Caches are asked to revalidate (no-cache)."""
    context = ssl.create_default_context(cafile=cafile) if url.startswith("https:") else None
    request = urllib.request.Request(url, headers={"Cache-Control": "no-cache"})
    try:
        with urllib.request.urlopen(request, timeout=15, context=context) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, b""
    except (urllib.error.URLError, OSError) as error:
        return None, str(error).encode()


def wait_visible(phase, public_url, cafile, wait_seconds, program):
    """Polls the public URL until every file of the phase is served with its planned
    SHA-256, or `wait_seconds` pass (then PlanError)."""
    base = public_url.rstrip("/") + "/"
    deadline = time.monotonic() + wait_seconds
    pending = list(phase["files"])
    while True:
        still = []
        for entry in pending:
            status, body = fetch(base + entry["path"], cafile)
            if status != 200 or sha256_hex(body) != entry["sha256"]:
                still.append((entry, status))
        if not still:
            return
        if time.monotonic() >= deadline:
            entry, status = still[0]
            raise PlanError(
                f"phase {phase['name']}: {base}{entry['path']} is not served with the planned bytes after "
                f"{wait_seconds} s (status {status}); later phases were not started")
        pending = [entry for entry, _ in still]
        time.sleep(1)


def status_gate(plan, public_url, root, cafile, pinion, final, program):
    """`pinion status` against the public URL: broken (exit 1) or unreachable stops the
    upload; after the last phase --expect-version must hold."""
    command = [pinion, "status", "--root", root, public_url]
    if cafile:
        command += ["--cafile", cafile]
    if final and plan.get("manifestVersion"):
        command += ["--expect-version", str(plan["manifestVersion"])]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode not in (0, 4):
        raise PlanError(
            f"pinion status at {public_url} exited {result.returncode}: "
            f"{(result.stdout + result.stderr).strip()}; later phases were not started")


def invalidate(command, paths, program):
    """Runs the team's invalidation hook with the phase's paths (each with a leading /)."""
    if not command or not paths:
        return
    result = subprocess.run(command + ["/" + path for path in paths])
    if result.returncode != 0:
        raise PlanError(f"the invalidation command exited {result.returncode}; later phases were not started")


def in_refusal_window(plan, phase_name):
    """Whether a client may be refused after `phase_name` completes (before the window's
    last phase does): then `pinion status` may report the skew, and is not a gate."""
    window = plan.get("refusalWindow")
    if not window:
        return False
    order = [phase["name"] for phase in plan["phases"]]
    try:
        first = order.index(window["firstPhase"])
        last = order.index(window["lastPhase"])
    except (ValueError, KeyError, TypeError):
        raise PlanError("refusalWindow names a phase the plan does not have")
    return first <= order.index(phase_name) < last


def add_gate_options(parser):
    parser.add_argument("--public-url", help="the URL clients use (the tree's server root); "
                        "each phase waits until its files are served there")
    parser.add_argument("--root", help="a trusted root envelope for pinion status at --public-url")
    parser.add_argument("--cafile", help="PEM trust anchors for an https --public-url")
    parser.add_argument("--pinion", default="pinion", help="the pinion executable (default: pinion on PATH)")
    parser.add_argument("--wait", type=int, default=300, help="seconds to wait for a phase to be visible")
    parser.add_argument("--invalidate-command", help="run after each phase with its paths as arguments "
                        "(e.g. a script calling the CDN's purge API)")
    parser.add_argument("--tree", help="the published tree (default: the plan's tree.source)")


def after_phase(plan, phase, arguments, program):
    """The gate between phases: visible at the public URL, invalidated at the CDN, and
    `pinion status` not broken (outside the refusal window)."""
    import shlex
    if arguments.public_url:
        wait_visible(phase, arguments.public_url, arguments.cafile, arguments.wait, program)
    invalidate(shlex.split(arguments.invalidate_command or ""), phase["invalidate"], program)
    final = phase is plan["phases"][-1]
    if arguments.public_url and arguments.root and (final or not in_refusal_window(plan, phase["name"])):
        status_gate(plan, arguments.public_url, arguments.root, arguments.cafile, arguments.pinion, final, program)
