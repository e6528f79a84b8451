"""Grading a class on a Dask cluster (the optional ``[dask]`` extra): ``grader grade --scheduler``.

* :mod:`grader.cluster.executor`: the client's side, an :class:`~grader.executor.Executor` whose
  submissions are graded on the cluster's workers (the only module here that imports dask on import);
* :mod:`grader.cluster.worker`: what runs on a worker: the assignment, loaded once and checked
  against its digest, the worker's warm sandboxes, one task per submission;
* :mod:`grader.cluster.envelope`: the one message a task sends back, strict JSON text, and how the
  client checks it;
* :mod:`grader.cluster.slots`: the sandbox slots each worker process of a machine claims.

docs/cluster.md says how to run it and what runs where.
"""
