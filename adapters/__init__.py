"""Adapters: implementations of the ports, one module per technology.

Heavy runtimes (torch, transformers, onnxruntime) are imported inside the
adapter modules that need them, never at package import time.
"""
