"""Scripted test doubles of the model ports: deterministic, no model behind them.

They are real adapters (they pass the same contract tests as ``hf``), used by
the Gherkin features to specify metric behaviour with given numbers.
"""
