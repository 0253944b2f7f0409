"""Test support shipped with culturebias: tiny models, a fake OpenAI-compatible server, fakes for every port.

Nothing here is used by a real run; it exists so that this project's tests,
its feature files and a plugin author's tests build run contexts the same way.
"""
