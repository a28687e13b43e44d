"""Starting a gateway child without importing the release again: a per-case fork server.

A case restarts its gateway process at every crash point (~7.5 times a case), and each
fresh child spent most of its CPU importing the release (the interpreter start, `driver.load`,
the store modules at `open`, `run_agent` at the first compaction; profile_child.py). Here
the first child of a case starts a server that does those imports once, with the case's
durable directory as HERMES_HOME (the harness names it in COMPACTSIM_STORE_DIR), and never
handles a request; every child of the case (the first included) is then a thin client
that asks the server for a fork of that image, which takes over the client's stdin,
stdout, stderr, working directory and environment and serves the protocol as a fresh
child would.

Why a fork equals a fresh start: a fresh child's state when its first request arrives is
what its imports made; the server's image is the same imports under the same environment
(PYTHONHASHSEED pinned, the same HERMES_HOME each module reads at import), and it has run
no request: no SQLite connection is open, no store object exists, the virtual clock and
id counters are 0 (each child loads them from the side file at `open`, as a fresh one
does), and no thread runs (checked: a server with a thread refuses to serve). What a
fresh child imports later (the store modules at `open`, `run_agent` at the first
compaction) reads at import only HERMES_HOME, the same directory in both; the server
imports them earlier. So a worker holds nothing but what is on disk.

A kill is a kill: the worker joins the client's process group (setpgid; the harness
starts each child in a group of its own and kills the group at a crash point), so the
harness's SIGKILL ends the worker at the same instant as a fresh child; its exit status
is the client's. COMPACTSIM_GATEWAY_FRESH=1 (or no COMPACTSIM_STORE_DIR, or a server that
cannot start) keeps the fresh-exec start, for checks: the same seed gives the same
report.json either way (GATEWAY.md).

The server (its own process group, in the harness's session) leaves when the durable
directory is gone (the harness removes it when the case ends, or when it is interrupted)
or the harness process is gone, checked every SERVER_POLL_S; its socket is in the
abstract namespace, so it leaves no file.
"""

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading

# How often an idle server checks that its case and its harness are still there.
SERVER_POLL_S = 0.5
# The longest request line a client sends (its environment and ids).
REQUEST_BYTES_MAX = 1 << 20
# The environment variables the harness and the checks use.
STORE_DIR_ENV = "COMPACTSIM_STORE_DIR"
FRESH_ENV = "COMPACTSIM_GATEWAY_FRESH"
SERVE_ENV = "COMPACTSIM_GATEWAY_FORK_SERVE"


def address(store_dir):
    digest = hashlib.sha256(os.path.realpath(store_dir).encode()).hexdigest()[:24]
    return "\0compactsim-gateway-fork-%d-%s" % (os.getuid(), digest)


def wanted():
    """The case's durable directory when this child should be a fork server's client."""
    d = os.environ.get(STORE_DIR_ENV)
    if not d or os.environ.get(FRESH_ENV) == "1" or os.environ.get(SERVE_ENV):
        return None
    return d if os.path.isdir(d) else None


# ── the client (the process the harness started) ──────────────────────────────

def client(store_dir):
    """Has a fork of the case's server serve this child's protocol, and exits with its
    status; returns only when no server could be had (then this child starts fresh)."""
    sock = _connect(store_dir) or _start_server(store_dir)
    if sock is None:
        return
    req = {"pid": os.getpid(), "env": dict(os.environ)}
    sock.sendall(json.dumps(req).encode() + b"\n")
    # The server's answer ("ok"), then the worker's exit status when it exits; nothing
    # (the connection closed) when the worker could not start.
    got = _lines(sock)
    if next(got, None) != "ok":
        sys.stderr.write("gateway fork server: no worker; starting fresh\n")
        return
    status = next(got, None)
    os._exit(int(status) if status is not None else 1)


def _lines(sock):
    buf = b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line.decode()
        chunk = sock.recv(4096)
        if not chunk:
            return
        buf += chunk


def _connect(store_dir):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(address(store_dir))
        return s
    except OSError:
        s.close()
        return None


def _start_server(store_dir):
    """Starts the case's server (this script again, as a server) and waits for its
    `ready` line (it is written once the socket listens)."""
    env = dict(os.environ, **{SERVE_ENV: str(os.getppid())})
    proc = subprocess.Popen([sys.executable, os.path.abspath(sys.argv[0])], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            process_group=0)
    line = proc.stdout.readline()
    proc.stdout.close()
    if line.strip() != b"ready":
        proc.wait()
        return None
    return _connect(store_dir)


# ── the server ────────────────────────────────────────────────────────────────

def serving():
    """Whether this process was started as a case's server."""
    return bool(os.environ.get(SERVE_ENV))


def prepare(store_dir, preload):
    """The server's imports beyond a fresh child's first ones: `preload()` with
    HERMES_HOME the case's (as `open` sets it)."""
    home = os.path.join(store_dir, "hermes-home")
    os.makedirs(home, exist_ok=True)
    saved = os.environ.get("HERMES_HOME")
    os.environ["HERMES_HOME"] = home
    preload()
    if saved is not None:
        os.environ["HERMES_HOME"] = saved


def serve_forks(store_dir, worker_main, reapply_env):
    """The server's loop: one worker at a time, each a fork of this image that runs
    `worker_main()` (the protocol) on its client's stdio. Never returns."""
    harness = int(os.environ[SERVE_ENV])
    if threading.active_count() != 1:
        sys.stderr.write("gateway fork server: a thread runs after the imports; not serving\n")
        os._exit(3)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(address(store_dir))
    except OSError:
        os._exit(0)  # a server for this directory runs already
    listener.listen(1)
    listener.settimeout(SERVER_POLL_S)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    worker = None
    while os.path.isdir(store_dir) and _alive(harness):
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            worker = _reap(worker, block=False)
            continue
        conn.settimeout(None)
        # One gateway process per case: the previous worker was killed with its client
        # (or exited); it is gone before the next one starts.
        worker = _reap(worker, block=True)
        try:
            req = json.loads(next(_lines_bounded(conn)))
        except (StopIteration, ValueError):
            conn.close()
            continue
        pid = os.fork()
        if pid == 0:
            listener.close()
            _become_worker(conn, req, worker_main, reapply_env)
        worker = pid
        conn.close()
    _reap(worker, block=False)
    os._exit(0)


def _lines_bounded(conn):
    n = 0
    for line in _lines(conn):
        yield line
        n += len(line)
        if n > REQUEST_BYTES_MAX:
            return


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _reap(pid, block):
    if pid is None:
        return None
    try:
        done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return None
    return None if done else pid


def _become_worker(conn, req, worker_main, reapply_env):
    """In the fork: take over the client's group, stdio, directory and environment, tell
    it `ok`, serve, and send it the exit status."""
    client_pid = int(req["pid"])
    try:
        os.setpgid(0, os.getpgid(client_pid))
        for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY | os.O_APPEND)):
            new = os.open("/proc/%d/fd/%d" % (client_pid, fd), mode)
            os.dup2(new, fd)
            os.close(new)
        os.chdir("/proc/%d/cwd" % client_pid)
        os.chdir(os.getcwd())
    except OSError:
        os._exit(1)  # the client is gone (killed before its worker started)
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    os.environ.clear()
    os.environ.update(req["env"])
    reapply_env()
    conn.sendall(b"ok\n")
    code = 0
    try:
        worker_main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001  (reported as a fresh child's crash is)
        import traceback
        traceback.print_exc()
        code = 1
    import atexit
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        conn.sendall(b"%d\n" % code)
    except OSError:
        pass
    os._exit(code)
