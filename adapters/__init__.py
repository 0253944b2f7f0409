"""Adapters: implementations of the ports, in folders of one kind each.

A folder per port family (model backends ``hf``, ``onnx``, ``openai``, ``replay``, ``ray``; ``stores``,
``datasets``, ``reports``, ``files``, ``progress``, ``similarity``, ``lexicon``, ``judging``, ``policy``,
``governance``; ``install`` for optional libraries and model wheels; ``plugins`` for the descriptors the
registry holds), and a folder per benchmark (``twbias``, ``kobbq``, ``cbbq``, ``mcbe``, ``libra``, each with
its ``benchmark.py`` descriptor; ``libra_build`` for the LIBRA builder; ``bundled`` for shipped data).
No module sits loose at this level.

Heavy runtimes (torch, transformers, onnxruntime) are imported inside the
adapter modules that need them, never at package import time.
"""
