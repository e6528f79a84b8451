"""The sandbox child: its entry point and the warden, which serves one zygote's container at a time.

Started by the grader as ``python -I -S -B -u -c BOOT child.py NUMPY_DIR CONTROL`` (BOOT imports
this file and calls :func:`main`; see ``spawn.py``): a clean interpreter, never a fork of the
grader, with a scrubbed environment and stdin on /dev/null, holding one descriptor of the grader's:
CONTROL, a Unix socket pair's end. Roles, one process tree::

    warden    trusted, a child subreaper. Imports numpy, then serves one zygote at a time: on a
              "start" from the grader (the plan: limits, sandbox user, Landlock paths, the cgroup
              to join; with the zygote's own fresh pipes attached, never a byte of the job) it
              forks that zygote's container, reaps until the container is empty, kills what is
              left, and reports. On the grader's death (the socket closes) it kills everything,
              removes the job folder and exits.
    reaper,   the trusted processes of each zygote's container (see ``container.py``): the
    keeper    reaper is process 1 of new PID, network and IPC namespaces (the zygote is process
              2); an ordinary user's keeper makes them inside a user namespace.
    zygote    see ``zygote.py``: imports the student's module and forks one process per scenario.

Without a PID namespace (refused by the kernel, or not planned) there is no reaper: orphans come to
the warden, which kills what its subtree holds, and (as root) every process of the sandbox uid.
The warden never runs student code and never holds job data, so every zygote starts from the same
clean state and no byte of one submission is in the next one's memory. Standard library (and
numpy) only; the sibling modules are imported by path.
"""

import gc
import json
import os
import select
import signal
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cleanup
import container
import ipc
import landlock
import namespaces
import proctree
import zygote

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_DUMPABLE = 4
_FDS_MAX = 32           # descriptors one start message may carry
_START_MAX = 1 << 20    # bytes of one start message


def main(argv):
    """``argv``: numpy's folder, the control socket's descriptor and (as root) the sandbox uid, as
    spawn.py passes them."""
    os.chdir("/")  # spawned in the grader's working folder: hold none of its folders
    numpy_dir, control = argv[0], int(argv[1])
    uid = int(argv[2]) if len(argv) > 2 else None
    # posix_spawn passes on whatever is inheritable in the grader, such as a descriptor its own
    # parent left open (a CI runner's log): none may reach student code.
    zygote.close_all_but({0, 1, 2, control})
    sys.path.append(numpy_dir)  # started with -S: numpy's folder, and nothing else from site
    # numpy's import makes thousands of objects that live as long as this process: the cyclic
    # collector's passes over them while it imports find nothing (and slow the first zygote). Frozen
    # afterwards, they are out of every later pass, in every zygote and scenario process too.
    gc.disable()
    warden = Warden(control, uid)
    gc.freeze()
    gc.enable()
    warden.serve()


class Warden:
    """Serves zygotes one after the other, each in a fresh fork of this clean process."""

    def __init__(self, control_fd, uid=None):
        import _socket
        zygote.prctl(_PR_SET_CHILD_SUBREAPER, 1)
        # Not dumpable: its /proc files become root's, so no process of its uid (a sandbox without
        # Landlock, as an ordinary user) can open /proc/<warden>/mem or ptrace it. Its forks inherit this.
        zygote.prctl(_PR_SET_DUMPABLE, 0)
        if os.geteuid() == 0:  # before the grader moves it into the memory cgroup it shares with its zygotes:
            _set_oom_score(-1000)  # never the out-of-memory killer's choice there
        self.current: dict = {}   # the container being served (empty: none), see _start
        self.cleaned_uids = set()  # sandbox uids whose leftovers (of an earlier grader) are gone
        if uid is not None:  # now, while the grader starts up, and while this image is small
            self._kill_uid(uid)
            ipc.clear(owner=uid)
            self.cleaned_uids.add(uid)
        import numpy  # noqa: F401  preloaded once, shared by every fork below
        self.control = _socket.socket(fileno=control_fd)
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.reachable = False
        self.held_cgroups = set()
        self.home = namespaces.home() if os.geteuid() == 0 else {}  # to come back after making new ones
        self.network = namespaces.empty_network(self.home) if self.home else None
        zygote.seccomp.prepare()

    def serve(self):
        while True:
            readable, _, _ = select.select([self.control.fileno(), self.wake_r], [], [])
            if self.wake_r in readable:
                os.read(self.wake_r, 4096)
                self._reap()
            if self.control.fileno() in readable:
                self._command()

    # ------------------------------------------------------------------ commands

    def _command(self):
        try:
            body, ancillary, _, _ = self.control.recvmsg(_START_MAX, _socket_space())
        except InterruptedError:
            return
        except OSError:  # ECONNRESET: the grader died with our reports unread (killed, or its terminal closed)
            body, ancillary = b"", []
        fds = _received_fds(ancillary)
        if not body:  # the grader is gone (or done)
            self._retire()
        message = json.loads(body)
        if message.get("kind") == "start":
            if self.current:  # the grader moved on without waiting: end the old one first
                self._finish(self._end_current())
            self._start(message["plan"], fds)
        else:
            for fd in fds:
                os.close(fd)

    def _start(self, plan, fds):
        """Fork the container for one zygote; tell the grader the zygote's pid and its reaper's."""
        uid = plan.get("uid")
        if uid is not None and uid not in self.cleaned_uids:
            # This uid is ours now (the grader holds its lock): any process of it is a leftover, and
            # so is any IPC object of it in the machine's namespace (a grader of an earlier version).
            self._kill_uid(uid)
            ipc.clear(owner=uid)
            self.cleaned_uids.add(uid)
        if uid is not None and not self.reachable:
            _keep_imports_reachable()  # once, here: every zygote inherits it
            self.reachable = True
        if plan.get("landlock"):
            plan["landlock_rules"] = _read_rules(plan["landlock"]["read"])  # opened once, here
        self._hold_memory_cgroup(plan)
        names = ("job", "results", "stdout", "stderr")
        given = dict(zip(names, fds))
        given["channels"] = [tuple(fds[at:at + 3]) for at in range(len(names), len(fds) - 2, 3)]  # out, err, result
        kept = {fd for fd, _ in plan.get("landlock_rules", ())} | set(_REACH_FDS)
        reaper = report_r = ipc_namespace = None
        contained: list[str] = []
        if plan.get("namespaces") and os.geteuid() != 0:
            # An ordinary user's namespaces come inside a user namespace, made by a fork of its own.
            report_r, report_w = os.pipe()
            top = os.fork()
            if top == 0:
                os.close(report_r)
                container.keeper(plan, given, kept, report_w)  # never returns
            os.close(report_w)
            told = container.records(report_r, need=("R", "Z"))  # its last record comes as it ends
            reaper, zygote_pid = told.get("R", -1), told.get("Z", -1)
            reaper = reaper if reaper > 0 else None
        else:
            if plan.get("namespaces"):
                # For the next forks only: the warden returns to its own namespaces right after.
                contained = namespaces.enter(as_root=True, network=self.network)
            if namespaces.NAMES[namespaces.CLONE_NEWPID] in contained:
                reaper = os.fork()  # process 1 of the new PID namespace
                if reaper == 0:
                    container.reaper()  # never returns
            top = os.fork()  # the zygote: process 2 there, or an ordinary child of this subreaper
            if top == 0:
                zygote.run(plan, given, kept, contained, join=True)  # never returns
            if plan.get("namespaces"):
                if namespaces.NAMES[namespaces.CLONE_NEWIPC] in contained:  # kept to empty it (see _finish)
                    ipc_namespace = namespaces.current("ipc")
                namespaces.leave(self.home)
            zygote_pid = top
        for fd in fds:
            os.close(fd)
        self.current = {"top": top, "zygote": zygote_pid, "reaper": reaper if os.geteuid() == 0 else None,
                        "uid": uid, "job_dir": plan.get("job_dir"), "status": None,
                        "pid_namespace": reaper is not None, "ipc_namespace": ipc_namespace,
                        "keeper_report": report_r}
        self._tell({"zygote": zygote_pid, "reaper": reaper})

    def _hold_memory_cgroup(self, plan):
        """Join, once, the zygotes' cgroup that only limits memory (a cgroup v1 memory folder, as on
        our CI machines): every zygote forked from here on is born in it, instead of paying a move
        into it each (a grace period of RCU). Nothing ever kills that cgroup as a whole, so holding
        it is safe; its limit counts this process's memory too (the grader allows for it). The
        grader usually moved this process in already, while it imported numpy ("warden_in")."""
        for entry in plan.get("cgroup") or ():
            if entry["gives"] == ["memory-limit"]:
                if entry.get("warden_in"):
                    self.held_cgroups.add(entry["procs"])
                if entry["procs"] not in self.held_cgroups:
                    try:
                        with open(entry["procs"], "w") as handle:
                            handle.write("0")
                        self.held_cgroups.add(entry["procs"])
                    except OSError:
                        continue
                entry["held"] = True
                plan["cgroup_held"] = ["memory-limit"]

    def _reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            current = self.current
            if not current:
                continue
            if pid == current["top"]:
                current["status"] = status
                if current["reaper"] is not None:  # the zygote is gone: so goes its PID namespace
                    _sigkill(current["reaper"])
            elif pid == current["reaper"]:
                current["reaper"] = None  # the namespace is empty: process 1 exits last
            if current["status"] is not None and current["reaper"] is None:
                self._finish(current["status"])

    def _finish(self, status):
        """The container is over (its top process and its namespace's process 1 reaped): make sure
        nothing of it is left, its job folder included, and report. In a PID namespace nothing is;
        otherwise what is left is in this subreaper's subtree, and (as root) has the sandbox uid."""
        current, self.current = self.current, {}
        proctree.kill_children(os.getpid())
        self._reap_quietly()
        empty = proctree.emptied(os.getpid())
        if current["uid"] is not None and not current["pid_namespace"]:
            empty = self._kill_uid(current["uid"]) and empty
        empty = self._clear_ipc(current) and empty
        if current["job_dir"]:  # with its container, before the grader hears of it: a grader killed
            cleanup.remove_tree(current["job_dir"])  # now (SIGKILL) leaves no submission in the temp folder
        how = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"code": os.WEXITSTATUS(status)}
        self._tell({"exited": current["zygote"], **how, "empty": empty})

    def _clear_ipc(self, current):
        """Remove the System V IPC objects the container left, once its processes are gone; True
        when none is left (see ipc.py). Its own IPC namespace (root: entered through the descriptor
        kept; an ordinary user's: emptied by the keeper, which says so as it ends), else the
        sandbox uid's objects in the machine's namespace. An ordinary user without a namespace has
        nothing to tell the sandbox's objects from the user's own: seccomp refuses the calls there."""
        namespace, report = current.pop("ipc_namespace", None), current.pop("keeper_report", None)
        if namespace is not None:
            try:
                return ipc.clear_namespace(namespace, self.home[namespaces.CLONE_NEWIPC])
            finally:
                os.close(namespace)
        if report is not None:
            told = container.records(report, need=("I",))
            os.close(report)
            # A keeper killed with its container (the grader moved on) could not say: its namespace
            # then has no process left and no descriptor of it is held, so nothing can reach it.
            return told.get("I", 1) == 1
        if current["uid"] is not None:
            return ipc.clear(owner=current["uid"])
        return True

    def _end_current(self):
        """SIGKILL the current container and reap it here, the zygote first: process 1 of its
        namespace cannot finish exiting while a process of that namespace waits to be reaped (and
        a sweep would wait for process 1). The zygote's wait status (as _reap kept it, if it had it)."""
        current = self.current
        self._kill_current()
        status = current["status"]
        if status is None:
            status = _wait(current["top"])
        if current["reaper"] is not None:
            _wait(current["reaper"])
        return status

    def _kill_current(self):
        for pid in (self.current["reaper"], self.current["zygote"], self.current["top"]):
            if pid is not None:
                _sigkill(pid)

    def _kill_uid(self, uid):
        """Kill every process of ``uid`` (root only; the grader's lock makes the uid this sandbox's
        alone); True once none is left, not even an unreaped one. Usually there is none, and no
        fork is needed; else a fork that becomes that uid kills with ``kill(-1)``, which reaches
        exactly its processes, atomically with respect to forks, zombie leaders' threads included.
        (kill(-1) succeeds whenever any other process exists, so what is left is counted in /proc.)"""
        if not proctree.processes_of(uid):
            return True
        helper = os.fork()
        if helper == 0:
            try:
                os.setresuid(uid, uid, uid)
                me = frozenset({os.getpid()})
                for _ in range(1000):
                    os.kill(-1, signal.SIGKILL)
                    if not proctree.processes_of(uid, but=me):
                        os._exit(0)
                    select.select([], [], [], 0.002)
            except BaseException:
                pass
            os._exit(1)
        while True:  # reap meanwhile: the killed are often this subreaper's own orphans
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return False
            if pid == helper:
                return os.waitstatus_to_exitcode(status) == 0

    def _reap_quietly(self):
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass

    def _tell(self, report):
        try:
            self.control.send(json.dumps(report).encode())
        except OSError:
            self._retire()

    def _retire(self):
        """The grader is gone (or done): kill everything, remove the job folder, exit."""
        current = self.current
        if current:
            self._end_current()
        proctree.kill_children(os.getpid())
        self._reap_quietly()
        if current:
            if current["uid"] is not None:
                self._kill_uid(current["uid"])
            self._clear_ipc(current)
            if current["job_dir"]:
                cleanup.remove_tree(current["job_dir"])
        os._exit(0)


def _set_oom_score(score):
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(score))
    except OSError:
        pass


def _wait(pid):
    """Reap ``pid``, a child of ours; its wait status (0 when it was reaped already)."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _sigkill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, OverflowError):
        pass


def _socket_space():
    import _socket
    return _socket.CMSG_SPACE(_FDS_MAX * 4)


def _received_fds(ancillary):
    import _socket
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += struct.unpack(f"={len(data) // 4}i", data[: len(data) - len(data) % 4])
    return fds


_READ_RULES: dict[tuple, list] = {}
_REACH_FDS: list[int] = []


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
            fd = os.open(path, os.O_PATH | os.O_DIRECTORY)
            _REACH_FDS.append(fd)
            reach[path] = f"/proc/self/fd/{fd}"
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


if __name__ == "__main__":
    main(sys.argv[1:])
