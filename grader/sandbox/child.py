"""The sandbox child: the only place student code ever runs.

Started by the grader as ``python -I -S -B -u -c BOOT child.py NUMPY_DIR FD...`` (BOOT imports
this file and calls :func:`main`; see ``spawn.py``): a clean interpreter, never a fork of the
grader, with a scrubbed environment, stdin on /dev/null, stdout/stderr on capture pipes, and pipes
of its own (the FDs: job, results, lifeline, status, then the scenarios' output channels). Three
roles, one process tree::

    warden    trusted: a child subreaper, so every orphan below stays in its subtree. Imports
              numpy, then serves jobs one at a time: reads a job (limits, the submission's path;
              never a program, check or expected value), forks a zygote for it, reaps until that
              zygote is gone, reports its exit, and waits for the next job. On the grader's death
              (its lifeline pipe closes) kills the subtree, removes the job folder and exits.
              Never runs student code, so every zygote starts from the same clean state.
    zygote    fork of the warden: sets resource limits, applies Landlock, drops to the sandbox
              user (as root), blocks forbidden imports, and only then imports the student's
              module. Then, per "run" command (which carries that one program and the output
              channel to use), one after the other, forks one
    scenario  process that runs the program (compiled by the grader) and writes exactly one
              framed result, its stdout and stderr on the run's output channel.

Everything after the student's import is untrusted, so nothing here decides anything: the
grader checks every byte it gets back against values that never enter this process.
Standard library (and numpy) only; the sibling modules are imported by path.
"""

import importlib.util
import json
import linecache
import os
import resource
import selectors
import signal
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cleanup  # noqa: E402  (sibling modules, imported by path)
import encoding  # noqa: E402
import framing  # noqa: E402
import landlock  # noqa: E402
import proctree  # noqa: E402

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_DUMPABLE = 4


def attempt(action):
    """Run ``action()``; return its value, or the exception it raised (sent as a record)."""
    try:
        return action()
    except Exception as error:
        return error


# --------------------------------------------------------------------------- plumbing

def _send(fd, message):
    _write_all(fd, framing.frame(message))


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def _receive(fd):
    """One framed message from the grader (trusted), or None at end of file."""
    header = _read_exactly(fd, framing.HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, framing.HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def _read_exactly(fd, size):
    """``size`` bytes from ``fd``, or None at end of file before them."""
    data = os.read(fd, size) if size else b""
    if len(data) == size:  # the usual case: all of it in one read, nothing to join
        return data
    chunks, remaining = [data], size - len(data)
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _close_inherited(keep):
    """Close every descriptor above stderr but ``keep``. posix_spawn passes on whatever is
    inheritable in the grader, such as a descriptor its own parent left open (a CI runner's log):
    no student code may hold one."""
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:  # the listing's own descriptor, closed already
                pass


def _prctl(option, value):
    import ctypes
    return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


# --------------------------------------------------------------------------- warden

def warden(config):
    """Serve jobs one after the other, each in a fresh zygote forked from this clean process."""
    fds = config["fds"]
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    import numpy  # noqa: F401  preloaded once, shared by every fork below

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    watch = selectors.DefaultSelector()
    watch.register(fds["lifeline"], selectors.EVENT_READ)
    watch.register(wake_r, selectors.EVENT_READ)
    job_dir = None
    reachable = False
    while True:
        job = _next_job(fds, watch, wake_r, job_dir)
        job_dir = job["job_dir"]
        if job.get("uid") is not None and not reachable:
            _keep_imports_reachable()  # once, here: every zygote inherits it
            reachable = True
        if job.get("landlock"):
            _read_rules(job["landlock"]["read"])  # opened once, here: every zygote inherits them
        zygote_pid = os.fork()
        if zygote_pid == 0:
            os.close(fds["lifeline"])
            os.close(fds["status"])
            watch.close()
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            zygote(config, job)  # never returns
        _send(fds["status"], {"zygote": zygote_pid})
        status = _watch_zygote(zygote_pid, fds, watch, wake_r, job_dir)
        how = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"code": os.WEXITSTATUS(status)}
        _send(fds["status"], {"exited": zygote_pid, **how})


def _next_job(fds, watch, wake_r, job_dir):
    """Wait for the next job message, reaping orphans meanwhile. Stale run commands (sent to a
    zygote that died before reading them) are skipped."""
    watch.register(fds["job"], selectors.EVENT_READ)
    try:
        while True:
            for key, _ in watch.select():
                if key.fd == fds["job"]:
                    message = _receive(fds["job"])
                    if message is None:
                        _retire(job_dir)
                    if message.get("kind") == "job":
                        return message
                else:
                    _wake(key.fd, fds, wake_r, job_dir)
                    _reap()
    finally:
        watch.unregister(fds["job"])


def _watch_zygote(zygote_pid, fds, watch, wake_r, job_dir):
    """Reap orphans until the zygote itself has exited; returns its wait status."""
    while True:
        for key, _ in watch.select():
            _wake(key.fd, fds, wake_r, job_dir)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            if pid == zygote_pid:
                return status


def _wake(fd, fds, wake_r, job_dir):
    if fd == wake_r:
        os.read(wake_r, 4096)
    elif not os.read(fds["lifeline"], 4096):
        _retire(job_dir)


def _retire(job_dir):
    """The grader is gone (or done): kill the subtree, remove the job folder, exit."""
    proctree.kill_children(os.getpid())
    _reap()
    if job_dir:
        cleanup.remove_tree(job_dir)
    os._exit(0)


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --------------------------------------------------------------------------- zygote

def zygote(config, job):
    fds = config["fds"]
    results = fds["results"]
    os.chdir(job["job_dir"])
    os.environ.update(HOME=job["job_dir"], TMPDIR=job["job_dir"])
    isolation = _isolate(job)
    _block_imports(job["forbidden"], results)
    _send(results, {"kind": "sandbox", "isolation": isolation})

    module = _import_submission(job, results)
    while True:
        # Each command carries its one program. It is read only once the previous scenario is over
        # (the grader queues the next command early: it waits in the pipe, not in this process),
        # prepared here (warm, so the fork pays no copy-on-write for it) and dropped once forked: no
        # program sits in sandbox memory before it runs, hidden ones included.
        # This loop is kept lean: every fork write-protects all of this process's memory, so each
        # page it writes afterwards costs a page fault (formatting the exit report by hand, and
        # leaving empty inputs and the traceback lines alone, took a third of them away).
        command = _receive(fds["job"])
        if command is None:
            os._exit(0)
        index, item = command["run"], _prepare(command["scenario"])
        _flush_std()
        pid = os.fork()
        if pid == 0:
            try:
                _run_scenario(item, module, fds, command["channel"], job["submission"])  # never returns...
            finally:  # ...even when student code broke its error report: never back into this loop
                os._exit(1)
        del command, item
        _, status = os.waitpid(pid, 0)
        _report_exit(results, index, status)


def _prepare(item):
    """Load a program (compiled by the grader) and decode its inputs; each fork gets its own
    copy-on-write view, so nothing one scenario changes reaches another. (Its source is kept for
    a traceback's lines, registered only if one is needed: see _student_traceback.)"""
    namespace = {"np": sys.modules["numpy"], "attempt": attempt, "__name__": "scenario"}
    exec(framing.unpack_code(item["code"]), namespace)  # compiled by the grader, once per batch
    item["program"] = namespace[item["function"]]
    item["inputs"] = encoding.decode_inputs(item["inputs"]) if item["inputs"] else {}
    return item


def _report_exit(results, index, status):
    """Tell the grader how scenario ``index``'s process ended (its wait ``status``). Formatted by
    hand, not through json: see the loop in zygote()."""
    if os.WIFSIGNALED(status):
        body = b'{"kind":"exit","index":%d,"signal":%d}' % (index, os.WTERMSIG(status))
    else:
        body = b'{"kind":"exit","index":%d,"code":%d}' % (index, os.WEXITSTATUS(status))
    _write_all(results, framing.HEADER.pack(len(body)) + body)


def _isolate(job):
    """Limits, then Landlock, then the sandbox user: all before any student code runs.

    Landlock comes before the drop because its rules are built from paths opened with root's
    rights (the read-only ones by the warden, once): after the drop, folders the sandbox user
    cannot walk (an interpreter under /root) would be skipped, and the sandbox could not read the
    standard library it needs. The open-files limit comes last, once the warden's descriptors of
    those paths are closed here.
    """
    achieved = []
    mb = 1024 * 1024
    limits = [(resource.RLIMIT_AS, job["memory_mb"] * mb), (resource.RLIMIT_CORE, 0),
              (resource.RLIMIT_FSIZE, job["file_size_mb"] * mb)]
    if job.get("nproc"):
        limits.append((resource.RLIMIT_NPROC, job["nproc"]))
    for which, value in limits:
        resource.setrlimit(which, (value, value))
    dropping = job.get("uid") is not None  # the warden has kept the imports reachable for it
    landlocked = None
    if job.get("landlock"):
        read_write = landlock.open_rules(job["landlock"]["read_write"], landlock.READ_WRITE)
        try:
            landlocked = f"landlock-v{landlock.restrict_to(_read_rules(job['landlock']['read']) + read_write)}"
        except landlock.LandlockError:
            pass
        finally:
            landlock.close_rules(read_write)
    for rules in _READ_RULES.values():  # the warden's descriptors: no student code holds them
        landlock.close_rules(rules)
    _READ_RULES.clear()
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))  # with those descriptors closed
    achieved.append("rlimits")
    if dropping:
        os.setgroups([])
        os.setresgid(job["gid"], job["gid"], job["gid"])
        os.setresuid(job["uid"], job["uid"], job["uid"])
        achieved.append("uid-drop")
    if landlocked:
        achieved.append(landlocked)
    return achieved


_READ_RULES = {}


def _read_rules(paths):
    """The read-only Landlock rules' descriptors, opened by the warden once per list of paths."""
    key = tuple(paths)
    if key not in _READ_RULES:
        _READ_RULES[key] = landlock.open_rules(paths, landlock.READ)
    return _READ_RULES[key]


def _keep_imports_reachable():
    """Let the sandbox user import what root could, where the interpreter sits in a folder it cannot
    walk (pyenv under /root, mode 0700): each such import folder is reached through a descriptor
    opened now, as ``/proc/self/fd/N`` (a magic link: no walk through /root, and Landlock still
    judges every file by its real place). Folder listings are cached now, before Landlock."""
    import importlib.machinery
    reach = {}
    for path in sys.path:
        if os.path.isdir(path) and not _others_can_walk(path):
            reach[path] = f"/proc/self/fd/{os.open(path, os.O_PATH | os.O_DIRECTORY)}"
    if not reach:
        return

    def moved(entry):
        for root, via in reach.items():
            if entry == root or entry.startswith(root + os.sep):
                return via + entry[len(root):]
        return entry
    sys.path[:] = [moved(entry) for entry in sys.path]
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [moved(entry) for entry in search]
    importlib.machinery.PathFinder.find_spec("_grader_fill_the_folder_caches_")


def _others_can_walk(path):
    """True when a user with no claim on ``path`` (not owner, not group) can reach and list it."""
    import stat
    path = os.path.abspath(path)
    while True:
        mode = os.stat(path).st_mode
        if not mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


class _ForbiddenImport:
    """A meta-path finder that refuses forbidden modules and tells the grader (self-incrimination only)."""

    def __init__(self, forbidden, results):
        self.forbidden, self.results = frozenset(forbidden), results

    def find_spec(self, name, path=None, target=None):
        if name in self.forbidden or name.partition(".")[0] in self.forbidden:
            _send(self.results, {"kind": "forbidden", "module": name})
            raise ImportError(f"importing {name!r} is not allowed in this assignment")
        return None


def _block_imports(forbidden, results):
    sys.meta_path.insert(0, _ForbiddenImport(forbidden, results))


def _import_submission(job, results):
    path, name = job["submission"], job["module"]
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        if "code" in job:  # compiled by the grader from these very bytes: run it as exec_module would
            # (tracebacks still show its lines: linecache asks the module's loader, by full path)
            exec(framing.unpack_code(job["code"]), module.__dict__)
        else:
            spec.loader.exec_module(module)
    except BaseException as error:  # SystemExit at import is an import failure too
        _send(results, {"kind": "import_error", "error": encoding.raised_record(error, _student_traceback(error, path))})
        _flush_std()
        os._exit(0)
    _send(results, {"kind": "ready"})
    return module


def _flush_std():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


# --------------------------------------------------------------------------- scenario

def _run_scenario(item, module, fds, channel, submission):
    """In a fresh fork: run one program, send one message, exit without running any hook.

    Its stdout and stderr are the output ``channel`` the grader chose for this run; the next
    command may already wait in the job pipe, so that pipe is closed before any student code runs."""
    results = fds["results"]
    os.close(fds["job"])
    out, err = fds["channels"][channel]
    os.dup2(out, 1)
    os.dup2(err, 2)
    for pair in fds["channels"]:
        for fd in pair:
            os.close(fd)
    cpu = max(1, int(item["cpu_seconds"]))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    try:
        observed = item["program"](module, **item["inputs"])
        message = {"kind": "result", "index": item["index"], "observations": encoding.encode(observed)}
    except BaseException as error:  # SystemExit, KeyboardInterrupt... are the student's errors too
        message = {"kind": "result", "index": item["index"],
                   "error": encoding.raised_record(error, _student_traceback(error, submission, item))}
    _flush_std()
    try:
        _send(results, message)
    except BaseException as error:  # an observation JSON cannot hold after all
        _send(results, {"kind": "result", "index": item["index"], "error": encoding.raised_record(error)})
    os._exit(0)


def _student_traceback(error, submission, program=None):
    """The traceback cut to the scenario program's and the student's frames, paths shortened;
    ``program`` (a prepared command's scenario) supplies the lines of its own frames."""
    if program is not None:
        filename = program["program"].__code__.co_filename  # the name the grader compiled it under
        linecache.cache[filename] = (len(program["source"]), None, program["source"].splitlines(True), filename)
    name = os.path.basename(submission)  # the grader compiles the submission under its name
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if frame.filename in (submission, name) or frame.filename.startswith("<scenario ")]
    for frame in frames:
        frame.filename = name if frame.filename == submission else frame.filename
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)] if frames else []
    try:
        lines += traceback.format_exception_only(type(error), error)
    except BaseException:
        lines.append(f"{type(error).__name__}\n")
    return "".join(lines)


def main(argv):
    """``argv``: numpy's folder, then the descriptors (job, results, lifeline, status, and each
    output channel's stdout and stderr), as spawn.py passes them."""
    os.chdir("/")  # spawned in the grader's working folder: hold none of its folders
    numpy_dir, *numbers = argv
    job, results, lifeline, status, *channels = map(int, numbers)
    fds = {"job": job, "results": results, "lifeline": lifeline, "status": status,
           "channels": [channels[at:at + 2] for at in range(0, len(channels), 2)]}
    _close_inherited({job, results, lifeline, status, *channels})
    sys.path.append(numpy_dir)  # started with -S: numpy's folder, and nothing else from site
    warden({"fds": fds})


if __name__ == "__main__":
    main(sys.argv[1:])
