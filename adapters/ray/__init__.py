"""``run.executor=ray``: model replicas as Ray actors, requests sharded across them, sweeps as Ray tasks.

Imports ``ray``; nothing outside this folder imports it, and ``import culturebias`` never does.
"""
