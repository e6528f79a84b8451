"""The trusted processes of one zygote's container: the keeper and the reaper (see child.py).

    reaper    process 1 of the container's new PID namespace: it only reaps. Every orphan of the
              zygote's processes comes to it (so a scenario's strays are its children, and the
              next scenario's process is the zygote's); no process inside can signal it; when it
              is killed (once the zygote is gone, or by the grader on a timeout) the kernel kills
              every process of the namespace, in whatever state, and it is reaped only once the
              namespace is empty. As root the warden makes the namespaces and forks the reaper,
              then the zygote (process 2), itself.
    keeper    an ordinary user's: joins the cgroup, makes a user namespace holding new PID,
              network and IPC namespaces, forks the reaper and the zygote into them, tells the
              warden their pids, waits for the zygote, then ends the PID namespace, removes the
              System V IPC objects left in its IPC namespace (it lives in it; see ipc.py), tells
              the warden whether any is left, and exits.

Both are forks of the warden: they never run student code and never hold job data. Standard
library only; the sibling modules are imported by path.
"""

import os
import signal
import struct

import ipc
import namespaces
import zygote

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4


def keeper(plan, fds, kept, report_w):
    """An ordinary user's container: the cgroup, a user namespace holding new PID, network and IPC
    namespaces, the reaper and the zygote in them. Exits once the zygote and the PID namespace are
    gone and the IPC namespace is emptied; never returns (a fork of the warden must never fall
    back into the warden's code)."""
    try:
        _keep(plan, fds, kept, report_w)
    finally:
        os._exit(0)


def _keep(plan, fds, kept, report_w):
    _trusted_child({0, 1, 2, report_w, *_zygote_fds(fds), *kept})
    contained = zygote.join_cgroups(plan)
    zygote.prctl(_PR_SET_DUMPABLE, 1)  # its own /proc/self/uid_map is writable only while it is
    contained += namespaces.enter(as_root=False)
    zygote.prctl(_PR_SET_DUMPABLE, 0)
    reaper_pid = -1
    if namespaces.NAMES[namespaces.CLONE_NEWPID] in contained:
        reaper_pid = os.fork()
        if reaper_pid == 0:
            reaper()  # never returns
    pid = os.fork()
    if pid == 0:
        os.close(report_w)
        zygote.run(plan, fds, kept, contained, join=False)  # never returns
    for fd in _zygote_fds(fds):
        os.close(fd)
    zygote.write_all(report_w, b"R" + struct.pack("=i", reaper_pid) + b"Z" + struct.pack("=i", pid))
    reaped = _reap_until(pid, set())
    if reaper_pid > 0:
        if reaper_pid not in reaped:  # not reaped yet, so the pid is still the reaper's
            os.kill(reaper_pid, signal.SIGKILL)
        _reap_until(reaper_pid, reaped)
    emptied = ipc.clear() if namespaces.NAMES[namespaces.CLONE_NEWIPC] in contained else True
    zygote.write_all(report_w, b"I" + struct.pack("=i", int(emptied)))


def reaper():
    """Process 1 of the container: reap every child that comes to it, until it is killed."""
    _trusted_child({0, 1, 2})
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        signal.sigwait({signal.SIGCHLD})  # blocked, so one that came meanwhile is still pending


def _reap_until(pid, reaped):
    """Reap children until ``pid`` is among ``reaped`` (every pid reaped is added), or none is left."""
    while pid not in reaped:
        try:
            reaped.add(os.waitpid(-1, 0)[0])
        except ChildProcessError:
            break
    return reaped


def _trusted_child(keep):
    """What every trusted fork does first: die with its parent, hold none of the warden's descriptors."""
    zygote.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    zygote.close_all_but(keep)


def _zygote_fds(fds):
    return [fds["job"], fds["results"], fds["stdout"], fds["stderr"], *(fd for ends in fds["channels"] for fd in ends)]


def records(fd, need):
    """The keeper's report: a tag byte ("R": the reaper's pid, -1 for none; "Z": the zygote's) and a
    pid per record; until every tag in ``need`` came, or the pipe closed."""
    told = {}
    while not all(tag in told for tag in need):
        record = zygote.read_exactly(fd, 5)
        if record is None:
            break
        told[record[:1].decode()] = struct.unpack("=i", record[1:])[0]
    return told
