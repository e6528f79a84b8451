"""The zygote and its scenario processes: where student code runs (see ``child.py`` for the warden).

The zygote is forked for one submission (by the warden, or an ordinary user's keeper) and is
given only its own fresh pipes: the job pipe it reads its job and run commands from, the
result pipe (for its own reports), its stdout and stderr, and the scenarios' channels. It makes
its job folder a bounded tmpfs of its own (a mount namespace, see ``namespaces.py``), sets
resource limits, applies Landlock, drops to the sandbox user (as root) or its capabilities (in a
user namespace), loads the seccomp filter and blocks forbidden imports (all of it from its plan:
the limits and forbidden modules are the assignment's), and only then reads its job (the
submission: no warden ever held a byte of it), writes the submission into its job folder and
imports the student's module. Then, per run command (which carries that one program and the
channel to use), it forks one scenario process that runs the program (compiled by the grader) and
writes exactly one framed result on its channel's result pipe, its stdout and stderr on the
channel's output pipes; the zygote reports how the process ended. One at a time, unless the
commands allow several at once (``grader check``'s public scenarios, on two cores).

Everything after the student's import is untrusted, so nothing here decides anything: the grader
checks every byte it gets back against values that never enter this process. Standard library
(and numpy) only; the sibling modules are imported by path.
"""

import binascii
import importlib.machinery
import importlib.util
import json
import linecache
import os
import resource
import select
import signal
import sys
import traceback

import encoding
import framing
import landlock
import namespaces
import seccomp

_PR_SET_PDEATHSIG = 1
# The zygote's descriptors, in the order the grader passes them (see spawn.ZygotePipes).
FDS = ("job", "results", "stdout", "stderr")
# How a result's isolation lists the container (after rlimits, uid-drop, landlock-vN, seccomp).
CONTAINER = ("cgroup", "pids-limit", "memory-limit", *namespaces.NAMES.values())
_MB = 1024 * 1024


def attempt(action):
    """Run ``action()``; return its value, or the exception it raised (sent as a record)."""
    try:
        return action()
    except Exception as error:
        return error


def plain(value):
    """The plain data of what a program observed: a tensor's values (the ``data`` array of any
    object that has one), each item of an exact list or tuple, anything else as it is. Never
    raises: a wrong value comes back as itself, for the check to describe (a scenario's own code
    must not fail on a student's wrong answer)."""
    try:
        kind = type(value)
        if kind is list or kind is tuple:
            return kind(plain(item) for item in value)
        numpy = sys.modules["numpy"]
        if kind is not numpy.ndarray:
            data = getattr(value, "data", None)
            if type(data) is numpy.ndarray:
                return data
    except Exception:
        pass
    return value


def send(fd, message):
    write_all(fd, framing.frame(message))


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def receive(fd):
    """One framed message from the grader (trusted), or None at end of file."""
    header = read_exactly(fd, framing.HEADER.size)
    if header is None:
        return None
    body = read_exactly(fd, framing.HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def read_exactly(fd, size):
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


def close_all_but(keep):
    """Close every descriptor but ``keep`` (stdin, stdout and stderr included, unless kept): each
    gap between kept ones in one close_range call, whatever a process may have inherited."""
    previous = -1
    for fd in sorted(keep):
        if fd > previous + 1:
            os.closerange(previous + 1, fd)
        previous = fd
    os.closerange(previous + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[1])


def prctl(option, value):
    return landlock._libc().prctl(option, value, 0, 0, 0)


def run(plan, fds, kept, contained, join):
    """The zygote: never returns. ``fds`` maps FDS (and "channels": [(out, err), ...]) to the
    descriptors the grader sent; ``kept`` are warden descriptors the zygote needs a while (the
    Landlock rules, closed before any student code runs; the import folders, see child.py);
    ``contained`` names what its container achieved (namespaces; the cgroup, when ``join`` is
    false because the keeper joined it already)."""
    # Its own session and process group: kill(0) reaches the sandbox only. Dies with its parent
    # (the warden, or the keeper, which dies with the warden): nothing outlives the grader, and
    # seccomp keeps this from being undone.
    os.setsid()
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if join:  # before anything else: every fork from here on is in the cgroup too
        contained = join_cgroups(plan, contained) + contained
    if plan.get("namespaces") and namespaces.private_folder(plan["job_dir"], plan["job_folder_mb"] * _MB,
                                                            plan["job_folder_files"], plan.get("uid")):
        contained = [*contained, namespaces.NAMES[namespaces.CLONE_NEWNS]]
    contained = sorted(contained, key=CONTAINER.index)
    _reset_oom_score()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    channels = [fd for ends in fds["channels"] for fd in ends]
    close_all_but({0, fds["job"], fds["results"], fds["stdout"], fds["stderr"], *channels, *kept})
    os.dup2(fds["stdout"], 1)
    os.dup2(fds["stderr"], 2)
    os.close(fds["stdout"])
    os.close(fds["stderr"])
    results = fds["results"]
    # Everything but the submission itself is in the plan: the zygote is isolated before its job
    # comes (a zygote started ahead of a save waits isolated, and its job finds it ready).
    os.chdir(plan["job_dir"])
    os.environ.update(HOME=plan["job_dir"], TMPDIR=plan["job_dir"])
    isolation = _isolate(plan, contained)
    _block_imports(plan["forbidden"], results)
    signal.signal(framing.WHERE_SIGNAL, signal.SIG_IGN)  # for its scenario processes, which answer it
    job = receive(fds["job"])
    if job is None:  # the grader gave up on this zygote before sending its job
        os._exit(0)
    send(results, {"kind": "sandbox", "isolation": isolation})
    module = _import_submission(job, results)
    _serve(module, fds, results, job["submission"])


def _serve(module, fds, results, submission):
    """Run each command's program in a fresh fork, and report how each process ended. A command
    says how many scenario processes may run while it does (``at_once``, itself included): the
    next command is read only while every one running allows one more beside it. Never returns."""
    running: dict = {}  # pidfd -> (pid, index, at_once) of the scenario processes running beside others
    while True:
        # Each command carries its one program. It is read only once there is room for it (the
        # grader queues the next command early: it waits in the pipe, not in this process),
        # prepared here (warm, so the fork pays no copy-on-write for it) and dropped once forked: no
        # program sits in sandbox memory before it runs, hidden ones included.
        # This loop is kept lean: every fork write-protects all of this process's memory, so each
        # page it writes afterwards costs a page fault (see benchmarks/README.md).
        if running:
            room = len(running) < min(entry[2] for entry in running.values())
            if not _reap(running, results, fds["job"] if room else None):
                continue
        command = receive(fds["job"])
        if command is None:
            os._exit(0)
        at_once = command.get("at_once", 1)
        while len(running) >= at_once:  # it may run beside fewer than are running now: wait for them
            _reap(running, results, None)
        index, item = command["run"], _prepare(command["scenario"])
        _flush_std()
        pid = os.fork()
        if pid == 0:
            try:
                for pidfd in running:  # a sibling's pidfd would let it signal that sibling
                    os.close(pidfd)
                _run_scenario(item, module, fds, command["channel"], submission)  # never returns...
            finally:  # ...even when student code broke its error report: never back into this loop
                os._exit(1)
        del command, item
        pidfd = _pidfd(pid) if at_once > 1 else None
        if pidfd is None:  # it runs alone (or the kernel has no pidfds): wait for it here
            _, status = os.waitpid(pid, 0)
            _report_exit(results, index, status)
        else:
            running[pidfd] = (pid, index, at_once)


def _pidfd(pid):
    """A descriptor that turns readable when ``pid`` ends (Linux 5.3 on), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _reap(running, results, job):
    """Wait until a process of ``running`` ends (reported and removed, with any others that ended
    with it) or, unless ``job`` is None, the job pipe has a command; True when it has one."""
    ready = select.select(list(running) if job is None else [job, *running], [], [])[0]
    for pidfd in ready:
        if pidfd in running:
            pid, index, _ = running.pop(pidfd)
            _, status = os.waitpid(pid, 0)
            os.close(pidfd)
            _report_exit(results, index, status)
    return job is not None and job in ready


def _prepare(item):
    """Load a program (compiled by the grader) and decode its inputs; each fork gets its own
    copy-on-write view, so nothing one scenario changes reaches another. (Its source is kept for
    a traceback's lines, registered only if one is needed: see _student_traceback.)"""
    namespace = {"np": sys.modules["numpy"], "attempt": attempt, "plain": plain, "__name__": "scenario"}
    exec(framing.unpack_code(item["code"]), namespace)  # compiled by the grader, once per batch
    item["program"] = namespace[item["function"]]
    item["inputs"] = encoding.decode_inputs(item["inputs"]) if item["inputs"] else {}
    return item


def _report_exit(results, index, status):
    """Tell the grader how scenario ``index``'s process ended (its wait ``status``). Formatted by
    hand, not through json: see the loop in run()."""
    if os.WIFSIGNALED(status):
        body = b'{"kind":"exit","index":%d,"signal":%d}' % (index, os.WTERMSIG(status))
    else:
        body = b'{"kind":"exit","index":%d,"code":%d}' % (index, os.WEXITSTATUS(status))
    write_all(results, framing.HEADER.pack(len(body)) + body)


# --------------------------------------------------------------------------- isolation

def _reset_oom_score():
    """The warden keeps the out-of-memory killer away from itself (-1000), and forks inherit that:
    the sandbox's processes are the ones to kill when its memory runs out."""
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("0")
    except OSError:
        pass


def join_cgroups(plan, contained=()):
    """Move this process into the zygote's cgroups (before anything else: every later fork is in
    them), but those the warden holds already (a memory-only one, see child.py), and, in a PID
    namespace of its own, those that add nothing: the namespace kills as a whole already, and
    RLIMIT_NPROC counts the same tasks as pids.max. (Each move into a cgroup costs the kernel a
    grace period of RCU: milliseconds, tens of them on a loaded machine.)"""
    joined: list[str] = list(plan.get("cgroup_held") or ())
    namespaced = namespaces.NAMES[namespaces.CLONE_NEWPID] in contained
    for entry in plan.get("cgroup") or ():
        if entry.get("held") or (namespaced and "memory-limit" not in entry["gives"]):
            continue
        try:
            with open(entry["procs"], "w") as handle:
                handle.write("0")
            joined += [name for name in entry["gives"] if name not in joined]
        except OSError:
            pass
    return joined



def _isolate(plan, contained):
    """Limits, Landlock, the sandbox user (or no capabilities), seccomp: all before any student code.

    Landlock comes before the drop because its rules are built from paths opened with root's
    rights (the read-only ones by the warden, once): after the drop, folders the sandbox user
    cannot walk (an interpreter under /root) would be skipped, and the sandbox could not read the
    standard library it needs. The open-files limit comes once the warden's descriptors of those
    paths are closed here. seccomp comes last: it refuses nothing the steps before it need.
    """
    achieved = ["rlimits"]
    # RLIMIT_MSGQUEUE 0: no POSIX message queue can be made (each one's size is charged to it),
    # so none can outlive the container or hold memory beside its limits.
    limits = [(resource.RLIMIT_AS, plan["memory_mb"] * _MB), (resource.RLIMIT_CORE, 0),
              (resource.RLIMIT_FSIZE, plan["file_size_mb"] * _MB), (resource.RLIMIT_MSGQUEUE, 0)]
    if plan.get("nproc"):
        limits.append((resource.RLIMIT_NPROC, _process_limit(plan, contained)))
    for which, value in limits:
        resource.setrlimit(which, (value, value))
    landlocked = None
    if plan.get("landlock"):
        read_write = landlock.open_rules(plan["landlock"]["read_write"], landlock.READ_WRITE)
        try:
            landlocked = f"landlock-v{landlock.restrict_to(plan['landlock_rules'] + read_write)}"
        except landlock.LandlockError:
            pass
        finally:
            landlock.close_rules(read_write)
    landlock.close_rules(plan.get("landlock_rules", ()))  # the warden's descriptors: no student code holds them
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if plan.get("uid") is not None:
        os.setgroups([])
        os.setresgid(plan["gid"], plan["gid"], plan["gid"])
        os.setresuid(plan["uid"], plan["uid"], plan["uid"])
        achieved.append("uid-drop")
    elif namespaces.NAMES[namespaces.CLONE_NEWUSER] in contained:
        namespaces.drop_capabilities()  # the user namespace's creator held them all
    if landlocked:
        achieved.append(landlocked)
    if plan.get("seccomp"):
        try:
            seccomp.install(ipc=_confines_ipc(contained))
            achieved.append("seccomp")
        except seccomp.SeccompError:
            pass
    return achieved + list(contained)


def _confines_ipc(contained):
    """Whether System V IPC may be let through: an IPC namespace of the container's own (its objects
    are no one else's, and are removed with it: see ipc.py) under a memory limit that counts them
    (a detached segment's pages, a queue's messages). Else seccomp refuses the calls."""
    return namespaces.NAMES[namespaces.CLONE_NEWIPC] in contained and "memory-limit" in contained


def _process_limit(plan, contained):
    """RLIMIT_NPROC counts every task (thread) of the real uid in its user namespace. A sandbox uid
    of its own (root) or a user namespace of its own starts from zero; otherwise the user's
    other tasks (a browser's hundreds of threads) are counted too, so they are added."""
    if plan.get("uid") is not None or namespaces.NAMES[namespaces.CLONE_NEWUSER] in contained:
        return plan["nproc"]
    return plan["nproc"] + _tasks_of(os.getuid())


def _tasks_of(uid):
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status", "rb") as handle:
                    status = handle.read()
            except OSError:
                continue
            real = status.split(b"\nUid:", 1)[-1].split(None, 1)[0]
            if real.isdigit() and int(real) == uid:
                count += int(status.split(b"\nThreads:", 1)[-1].split(None, 1)[0] or b"1")
    return count


class _ForbiddenImport:
    """A meta-path finder that refuses forbidden modules and tells the grader (self-incrimination only)."""

    def __init__(self, forbidden, results):
        self.forbidden, self.results = frozenset(forbidden), results

    def find_spec(self, name, path=None, target=None):
        if name in self.forbidden or name.partition(".")[0] in self.forbidden:
            send(self.results, {"kind": "forbidden", "module": name})
            raise ImportError(f"importing {name!r} is not allowed in this assignment")
        return None


def _block_imports(forbidden, results):
    sys.meta_path.insert(0, _ForbiddenImport(forbidden, results))


def _write_submission(job):
    """The submission, as the grader checked it, into the job folder (this zygote's own tmpfs, or
    the folder on the machine): the grader writes nothing there, so a zygote started ahead of its
    job (``--watch``) finds it whatever the folder is. By its name in the working folder, the job
    folder: the sandbox user may not walk the folders above it (a temp folder under /root)."""
    name = os.path.basename(job["submission"])
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        write_all(fd, binascii.a2b_base64(job.pop("source")))  # not kept: every fork would hold a copy
    finally:
        os.close(fd)


def _import_submission(job, results):
    path, name = job["submission"], job["module"]
    try:
        _write_submission(job)
        # An explicit source loader: the suffix picks none for carl.PY (grade accepts any case).
        loader = importlib.machinery.SourceFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        assert spec is not None  # a file location with a loader always gives a spec
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        if "code" in job:  # compiled by the grader from these very bytes: run it as exec_module would
            # (tracebacks still show its lines: linecache asks the module's loader, by full path)
            exec(framing.unpack_code(job["code"]), module.__dict__)
        else:
            loader.exec_module(module)
    except BaseException as error:  # SystemExit at import is an import failure too
        record = encoding.raised_record(error, _student_traceback(error, path))
        send(results, {"kind": "import_error", "error": record})
        _flush_std()
        os._exit(0)
    send(results, {"kind": "ready"})
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

    Its result, stdout and stderr go on the ``channel`` the grader chose for this run (so that what
    two scenarios running at once write is never mixed up); the next command may already wait in
    the job pipe, so that pipe is closed before any student code runs."""
    os.close(fds["job"])
    out, err, results = fds["channels"][channel]
    os.dup2(out, 1)
    os.dup2(err, 2)
    for ends in fds["channels"]:
        for fd in ends:
            if fd != results:
                os.close(fd)
    os.close(fds["results"])  # the zygote's own, for its exit reports: a scenario writes on its channel's
    for finder in sys.meta_path:
        if isinstance(finder, _ForbiddenImport):
            finder.results = results
    cpu = max(1, int(item["cpu_seconds"]))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    # When the grader's time for this run is up, it asks where the program is before it kills it: the
    # answer is plain text the grader shows (and a program that takes the signal over just gives none).
    signal.signal(framing.WHERE_SIGNAL, lambda number, frame: _send_where(results, item, submission, frame))
    try:
        observed = item["program"](module, **item["inputs"])
        signal.signal(framing.WHERE_SIGNAL, signal.SIG_IGN)
        message = {"kind": "result", "index": item["index"], "observations": encoding.encode(observed)}
    except BaseException as error:  # SystemExit, KeyboardInterrupt... are the student's errors too
        message = {"kind": "result", "index": item["index"],
                   "error": encoding.raised_record(error, _student_traceback(error, submission, item))}
    _flush_std()
    try:
        send(results, message)
    except BaseException as error:  # an observation JSON cannot hold after all
        send(results, {"kind": "result", "index": item["index"], "error": encoding.raised_record(error)})
    os._exit(0)


def _send_where(results, item, submission, frame):
    """Tell the grader where the program is (its own and the student's frames), once, bounded."""
    try:
        _register_source(item)   # first: a stack's lines are read as it is taken
        frames = _students_frames(traceback.extract_stack(frame), submission)
        text = "".join(traceback.format_list(frames[-20:]))
        if text:
            send(results, {"kind": "where", "index": item["index"],
                           "stack": ("Your code was here when its time ran out (most recent call last):\n"
                                     + text)[:framing.WHERE_CHARS]})
    except BaseException:  # nothing to say, or no way to say it: the timeout is reported all the same
        pass


def _register_source(program):
    """Let tracebacks show a prepared command's program lines (compiled by the grader from source)."""
    filename = program["program"].__code__.co_filename  # the name the grader compiled it under
    linecache.cache[filename] = (len(program["source"]), None, program["source"].splitlines(True), filename)


def _students_frames(frames, submission):
    """Of a traceback's or a stack's frames, the scenario program's and the student's, paths shortened."""
    name = os.path.basename(submission)  # the grader compiles the submission under its name
    kept = [frame for frame in frames
            if frame.filename in (submission, name) or frame.filename.startswith("<scenario ")]
    for frame in kept:
        frame.filename = name if frame.filename == submission else frame.filename
    return kept


def _student_traceback(error, submission, program=None):
    """The traceback cut to the scenario program's and the student's frames, paths shortened;
    ``program`` (a prepared command's scenario) supplies the lines of its own frames."""
    if program is not None:
        _register_source(program)
    frames = _students_frames(traceback.extract_tb(error.__traceback__), submission)
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)] if frames else []
    try:
        lines += traceback.format_exception_only(type(error), error)
    except BaseException:
        lines.append(f"{type(error).__name__}\n")
    return "".join(lines)
