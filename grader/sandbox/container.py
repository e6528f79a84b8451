"""The trusted processes that make one zygote's container: the keeper and the reaper (see child.py).

    keeper    (an ordinary user only) joins the cgroup, makes a user namespace holding new PID and
              network namespaces, forks the reaper as their process 1, and waits for it.
    reaper    process 1 of the new PID namespace (as root, the warden makes the namespaces and forks
              it directly), and a child subreaper, in the zygote's cgroup: forks the zygote, reaps
              every orphan (a scenario's strays are its children, the next scenario's process is the
              zygote's), and once the zygote is gone kills what is left and exits. No process inside
              can signal it; the kernel kills every process of the namespace when it dies.

Both are forks of the warden: they never run student code and never hold job data. They tell the
warden the pids it must know on a pipe of its own: a tag byte and a pid per record. Standard
library only; the sibling modules are imported by path.
"""

import os
import signal
import struct

import namespaces
import proctree
import zygote

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4


def keeper(plan, fds, kept, report_w):
    """An ordinary user's container: the cgroup, then a user namespace holding new PID and network
    namespaces, then the reaper as their process 1."""
    _trusted_child({0, 1, 2, report_w, *_zygote_fds(fds), *kept})
    contained = _join_cgroups(plan)
    zygote.prctl(_PR_SET_DUMPABLE, 1)  # its own /proc/self/uid_map is writable only while it is
    contained += namespaces.enter(as_root=False)
    zygote.prctl(_PR_SET_DUMPABLE, 0)
    pid = os.fork()
    if pid == 0:
        reaper(plan, fds, kept, report_w, contained, joined=True)  # never returns
    for fd in _zygote_fds(fds):
        os.close(fd)
    zygote.write_all(report_w, b"R" + struct.pack("=i", pid))
    os.close(report_w)
    while True:
        try:
            if os.waitpid(-1, 0)[0] == pid:
                os._exit(0)
        except ChildProcessError:
            os._exit(0)


def reaper(plan, fds, kept, report_w, contained, joined):
    """Process 1 of the container (or, without a PID namespace, its subreaper): forks the zygote,
    reaps every orphan, and once the zygote is gone kills what is left and exits."""
    _trusted_child({0, 1, 2, report_w, *_zygote_fds(fds), *kept})
    zygote.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if not joined:
        contained = _join_cgroups(plan) + contained
    pid = os.fork()
    if pid == 0:
        os.close(report_w)
        zygote.run(plan, fds, kept, contained)  # never returns
    for fd in _zygote_fds(fds):
        os.close(fd)
    me = int(os.readlink("/proc/self"))  # this process's pid in the grader's namespace, as /proc counts
    children = proctree.children(me)
    zygote.write_all(report_w, b"Z" + struct.pack("=i", children[0] if children else -1))
    os.close(report_w)
    while True:
        try:
            if os.waitpid(-1, 0)[0] == pid:
                break
        except ChildProcessError:
            break
    proctree.kill_children(me)  # without a PID namespace, the strays; in one, the kernel does it too
    os._exit(0)


def _trusted_child(keep):
    """What every trusted fork does first: die with its parent, hold none of the warden's descriptors."""
    zygote.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    zygote.close_all_but(keep)


def _zygote_fds(fds):
    return [fds["job"], fds["results"], fds["stdout"], fds["stderr"], *(fd for pair in fds["channels"] for fd in pair)]


def _join_cgroups(plan):
    """Move this process into the zygote's cgroups (before anything else: every later fork is in them)."""
    joined = []
    for entry in plan.get("cgroup") or ():
        try:
            with open(entry["procs"], "w") as handle:
                handle.write("0")
            joined += [name for name in entry["gives"] if name not in joined]
        except OSError:
            pass
    return joined


def records(fd, need):
    """The keeper's and reaper's reports: a tag byte ("R": the reaper's pid, "Z": the zygote's) and
    a pid, each written in one piece; until every tag in ``need`` came, or the pipe closed."""
    told = {}
    while not all(tag in told for tag in need):
        record = _read_exactly(fd, 5)
        if record is None:
            break
        told[record[:1].decode()] = struct.unpack("=i", record[1:])[0]
    return told




def _read_exactly(fd, size):
    data = b""
    while len(data) < size:
        try:
            chunk = os.read(fd, size - len(data))
        except InterruptedError:
            continue
        if not chunk:
            return None
        data += chunk
    return data
