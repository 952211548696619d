# Test-only: runs a command on a new pseudo-terminal (its controlling terminal, so
# /dev/tty is it) and answers prompts in order. Arguments: a JSON list of [prompt, answer]
# pairs, then the command. Prints everything the terminal showed; exits with the command's
# status, or 90 if a prompt did not appear within 60 seconds.
import json, os, pty, select, sys, time

pairs = json.loads(sys.argv[1])
command = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(command[0], command)
seen = b""
def read_until(needle, deadline):
    global seen
    while needle not in seen:
        remaining = deadline - time.time()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            seen += chunk
    return True
for prompt, answer in pairs:
    if not read_until(prompt.encode(), time.time() + 60):
        sys.stdout.write(seen.decode(errors="replace"))
        os.kill(pid, 9)
        sys.exit(90)
    # Pinion turns echo off and flushes pending input before it writes the prompt, so an
    # answer written after the prompt is read, never dropped.
    os.write(fd, answer.encode() + b"\n")
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
