"""The sandbox: where student code runs and how the grader drives it.

Child side (a clean interpreter; these use only the standard library and import each other by
path, so the child never needs the ``grader`` package): ``child`` (the warden), ``container`` (each
zygote's keeper and reaper), ``zygote`` (the zygote and its scenario processes), ``namespaces``,
``ipc``, ``seccomp``, ``landlock``, ``proctree``, ``cleanup``, ``framing``, ``encoding``.
Grader side: ``launcher`` (the Sandbox: its life, one state machine of ``states``), ``scheduler``
(its runs), ``link`` (one zygote's pipes), ``intake`` (what the grader accepts), ``spawn``,
``isolation``, ``cgroups``, ``sandbox_cgroup``, ``uids``, ``job_folders``, ``decoding``, ``safe_text``.
"""
