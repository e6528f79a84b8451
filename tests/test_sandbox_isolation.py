"""The isolation pieces one by one, in real processes: seccomp, namespaces, the private job folder,
System V IPC objects, sandbox uids, cgroups, and finding processes that look dead (grader/sandbox/*.py)."""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from grader.sandbox import cgroups, ipc, namespaces, proctree, seccomp, uids

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def _in_child(body) -> int:
    """Run ``body()`` in a fork; its return value (a small int) is the exit code."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(body())
        except BaseException:
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.skipif(not seccomp.supported(), reason="no filter for this architecture")
def test_seccomp_refuses_sockets_and_the_calls_a_sandbox_never_needs_and_nothing_else():
    def body():
        seccomp.install()
        refused = 0
        for family, kind in ((socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET6, socket.SOCK_STREAM),
                             (socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW)):
            try:
                socket.socket(family, kind)
            except PermissionError:
                refused += 1
        try:
            socket.socketpair()
        except PermissionError:
            refused += 1
        libc = ctypes.CDLL(None, use_errno=True)
        refused += libc.unshare(namespaces.CLONE_NEWNET) == -1 and ctypes.get_errno() == errno.EPERM
        refused += libc.prctl(1, 0, 0, 0, 0) == -1   # clearing the parent-death signal
        for action in (lambda: os.kill(-1, 0), lambda: os.memfd_create("held"),
                       lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (3, 3)),
                       lambda: resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE),   # only 0 names the caller
                       lambda: os.setpriority(os.PRIO_USER, 0, 19),
                       lambda: os.setpriority(os.PRIO_PROCESS, os.getppid(), 19),
                       lambda: os.sched_setaffinity(os.getppid(), {0})):
            try:
                action()
            except PermissionError:
                refused += 1
        # prlimit64 with a pid whose low half is 0: the whole 64-bit argument is compared.
        rlimit = ctypes.create_string_buffer(16)
        refused += libc.syscall(_PRLIMIT64, ctypes.c_long(1 << 32), resource.RLIMIT_NOFILE, None, rlimit) == -1
        refused += libc.shmget(0, 4096, 0o1600) == -1 and ctypes.get_errno() == errno.EPERM   # no IPC here
        refused += libc.syscall(_SECCOMP, 0, 0, None) == -1 and ctypes.get_errno() == errno.EPERM
        # What programs do need still works: threads (clone3 falls back to clone), fork, numpy.
        done = []
        thread = threading.Thread(target=lambda: done.append(1))
        thread.start()
        thread.join()
        child = os.fork()
        if child == 0:
            os._exit(7)
        import numpy
        works = done == [1] and os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 7 and numpy.ones(3).sum() == 3
        # And the calling process's own limits and scheduling, as glibc names it (0).
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.getrlimit(resource.RLIMIT_NOFILE)
        os.nice(1)
        os.sched_setaffinity(0, os.sched_getaffinity(0))
        return refused if works else 100
    assert _in_child(body) == 17


_PRLIMIT64 = {"x86_64": 302, "aarch64": 261}.get(os.uname().machine, -1)
_SECCOMP = {"x86_64": 317, "aarch64": 277}.get(os.uname().machine, -1)


@pytest.mark.skipif(not seccomp.supported() or os.geteuid() != 0, reason="needs root for an IPC namespace")
def test_seccomp_lets_system_v_ipc_through_where_the_container_confines_it():
    def body():
        if ctypes.CDLL(None).unshare(namespaces.CLONE_NEWIPC) != 0:
            return 50
        seccomp.install(ipc=True)
        libc = ctypes.CDLL(None, use_errno=True)
        segment = libc.shmget(0, 4096, 0o1600)
        return 0 if segment >= 0 and libc.shmctl(segment, 0, None) == 0 else 1
    assert _in_child(body) in (0, 50)


def test_the_filter_fits_bpf_and_checks_the_architecture_first():
    for machine in ("x86_64", "aarch64"):
        for ipc_let_through in (False, True):
            code = seccomp.program(machine, ipc=ipc_let_through)
            assert code[0] == (0x20, 0, 0, 4) and code[1][0] == 0x15   # load the arch, compare
            assert len(code) < 256


def test_fresh_namespaces_as_root_and_back_home():
    if os.geteuid() != 0:
        pytest.skip("the warden makes them itself only as root")

    def body():
        home = namespaces.home()
        entered = namespaces.enter(as_root=True)
        if not entered:
            return 50   # refused here (a container's own seccomp profile, say): nothing to check
        reader, writer = os.pipe()
        child = os.fork()
        if child == 0:
            os.write(writer, b"%d" % os.getpid())
            os._exit(0)
        pid_inside = int(os.read(reader, 16))
        os.waitpid(child, 0)
        namespaces.leave(home)
        again = os.fork()   # back home: the next child is an ordinary process of ours again
        if again == 0:
            os._exit(0 if os.getpid() != 1 else 1)
        back = os.waitstatus_to_exitcode(os.waitpid(again, 0)[1])
        return 0 if pid_inside == 1 and back == 0 and {"net-namespace", "ipc-namespace"} <= set(entered) else 2
    assert _in_child(body) in (0, 50)


@ROOT_ONLY
def test_an_ipc_namespace_holds_its_objects_and_is_emptied_from_outside():
    # Made in a container's IPC namespace, a segment is invisible outside it; the warden enters the
    # namespace through a descriptor it kept, and removes what is there once the processes are gone.
    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x5A000000 + os.getpid()   # this test's own: no object outside has it
    home = namespaces.current("ipc")
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        made = libc.unshare(namespaces.CLONE_NEWIPC) == 0 and libc.shmget(key, 1 << 20, 0o1600) >= 0 \
            and libc.msgget(key, 0o1600) >= 0 and libc.semget(key, 4, 0o1600) >= 0
        os.write(writer, b"1" if made else b"0")
        time.sleep(60)
    try:
        assert os.read(reader, 1) == b"1"
        namespace = os.open(f"/proc/{child}/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
        assert libc.shmget(key, 0, 0) == libc.msgget(key, 0) == libc.semget(key, 0, 0) == -1   # not out here
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    try:
        assert libc.setns(namespace, namespaces.CLONE_NEWIPC) == 0
        inside = ipc.objects()
        assert libc.setns(home, namespaces.CLONE_NEWIPC) == 0
        assert sorted(kind for kind, _ in inside) == ["msg", "sem", "shm"], inside
        assert ipc.clear_namespace(namespace, home)
        assert libc.setns(namespace, namespaces.CLONE_NEWIPC) == 0
        assert ipc.objects() == []
    finally:
        libc.setns(home, namespaces.CLONE_NEWIPC)
        os.close(namespace)
        os.close(home)


@ROOT_ONLY
def test_without_a_namespace_the_objects_of_a_sandbox_uid_are_removed():
    uid = int(os.environ.get("GRADER_SANDBOX_UID_BASE", "61000")) + 710

    def make():
        os.setresuid(uid, uid, uid)
        libc = ctypes.CDLL(None, use_errno=True)
        return 0 if libc.shmget(0, 4096, 0o1600) >= 0 and libc.msgget(0, 0o1600) >= 0 else 1
    assert _in_child(make) == 0
    try:
        assert len(ipc.objects(owner=uid)) == 2
    finally:
        assert ipc.clear(owner=uid)
    assert ipc.objects(owner=uid) == []


@ROOT_ONLY
def test_a_private_folder_is_a_bounded_tmpfs_that_the_machine_never_sees(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    reader, writer = os.pipe()

    def body():
        if not namespaces.private_folder(str(folder), 1 << 20, 16, owner=62999):
            return 50
        bounded = []
        for size in (512 << 10, 1 << 20):   # half of it fits, the whole of it no longer does
            try:
                (folder / f"{size}.bin").write_bytes(b"x" * size)
                bounded.append(True)
            except OSError as error:
                bounded.append(error.errno == errno.ENOSPC)
        made = 0
        try:
            for number in range(32):
                (folder / f"{number}").mkdir()
                made += 1
        except OSError as error:
            bounded.append(error.errno == errno.ENOSPC)
        owner = os.stat(folder).st_uid
        os.write(writer, f"{bounded} {made} {owner}".encode())
        return 0
    assert _in_child(body) in (0, 50)
    os.close(writer)
    told = os.read(reader, 256).decode()
    if told:
        # 16 inodes: the root, the two files (the second one made before it filled) and 13 folders.
        assert told == "[True, True, True] 13 62999", told
    assert os.listdir(folder) == []   # nothing of it on the machine's disk...
    assert str(folder) not in Path("/proc/self/mountinfo").read_text()   # ...nor mounted here


@ROOT_ONLY
def test_a_sandbox_uid_is_held_machine_wide():
    base = int(os.environ.get("GRADER_SANDBOX_UID_BASE", "61000")) + 700
    first = uids.claim(base)
    try:
        second = uids.claim(base)   # a second claim in another process would see the same lock
        assert (first.uid, second.uid) == (base, base + 1)
        reader, writer = os.pipe()

        def other_process():
            claim = uids.claim(base)
            os.write(writer, b"%d" % claim.uid)
            return 0
        assert _in_child(other_process) == 0
        assert int(os.read(reader, 16)) == base + 2
        second.release()
        assert uids.claim(base + 1).uid == base + 1   # released: free again
        with pytest.raises(uids.UidsExhausted):
            uids.claim_exactly(base, wait_seconds=0.2)
    finally:
        first.release()


def test_a_process_whose_leader_thread_exited_is_not_taken_for_dead():
    # The raw exit system call ends the leader thread only: the process shows "Z" while its other
    # threads run. It is still running, and a SIGKILL to it ends them all.
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        threading.Thread(target=lambda: (os.write(writer, b"!"), time.sleep(60))).start()
        ctypes.CDLL(None).syscall({"x86_64": 60, "aarch64": 93}[os.uname().machine], 0)
    os.read(reader, 1)
    deadline = time.monotonic() + 5
    while not open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert proctree.running(pid)
        assert pid in proctree.children(os.getpid())
        others = frozenset(child for child in proctree.children(os.getpid()) if child != pid)
        assert proctree.kill_children(os.getpid(), keep=others)
        assert not proctree.running(pid)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


@ROOT_ONLY
def test_a_cgroup_container_is_killed_as_a_whole_and_removed():
    where = cgroups.hierarchy()
    if where is None or where.unified is None:
        pytest.skip("no writable cgroup v2 here")
    container = cgroups.Container(where, f"test-{os.getpid()}")
    container.limit(pids=20, memory_bytes=256 << 20)
    assert any("cgroup" in join["gives"] for join in container.joins)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        for join in container.joins:
            with open(join["procs"], "w") as handle:
                handle.write("0")
        for _ in range(5):   # a few processes that leave the tree: the cgroup still holds them
            if os.fork() == 0:
                os.setsid()
                time.sleep(60)
        os.write(writer, b"!")
        time.sleep(60)
    os.read(reader, 1)
    assert not container.empty()
    if "pids" in where.limits:
        assert any("pids-limit" in join["gives"] for join in container.joins)
    container.kill()
    os.waitpid(pid, 0)
    assert container.wait_empty(5.0)
    container.remove()
    assert container.folders == []
