"""culturebias: social-bias evaluation of language models through local cultural lenses.

Layers (each a sub-package, hexagonal architecture):

- ``culturebias.domain``: pure models and metric functions (numpy/scipy only).
- ``culturebias.ports``: the interfaces the application needs (typing Protocols).
- ``culturebias.application``: one service per benchmark protocol, and run orchestration.
- ``culturebias.adapters``: implementations of the ports (HF, ONNX, OpenAI, stores, ...).
- ``culturebias.bootstrap``: typed configuration, the DI container and the CLI.

Importing this package never imports torch or any other heavy backend.
"""

__version__ = "0.1.0"
