"""The pure domain: value objects, bias specifications and metric functions.

Nothing here performs I/O or imports a model runtime; everything is testable
with plain numbers.
"""
