"""Reporters: each renders result data (``grader.results``) and never runs or judges anything."""
