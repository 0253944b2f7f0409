"""The interfaces (typing Protocols) the application talks to. Adapters implement them."""

from culturebias.ports.datasets import DatasetSource
from culturebias.ports.generation import Generator
from culturebias.ports.judging import Judge
from culturebias.ports.progress import ProgressReporter, ProgressTask
from culturebias.ports.reporting import ReportWriter
from culturebias.ports.results import ResultStore
from culturebias.ports.scoring import LoglikelihoodScorer, PseudoLoglikelihoodScorer
from culturebias.ports.templating import ChatTemplater

__all__ = [
    "ChatTemplater",
    "DatasetSource",
    "Generator",
    "Judge",
    "LoglikelihoodScorer",
    "ProgressReporter",
    "ProgressTask",
    "PseudoLoglikelihoodScorer",
    "ReportWriter",
    "ResultStore",
]
