"""The sub-commands that live in their own bootstrap modules: their parsers and their handlers.

`bootstrap/cli.py` keeps the core commands (run, plan, list, ...); a command with its own module is
added here once, by its parser function and its handler.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


def add_parsers(sub: argparse._SubParsersAction, config_options: Callable[[argparse.ArgumentParser], None]) -> None:
    from culturebias.bootstrap.build_cli import add_build_parsers
    from culturebias.bootstrap.cbbq_cli import add_parser as add_cbbq_parser
    from culturebias.bootstrap.check_cli import add_parser as add_check_parser
    from culturebias.bootstrap.consistency_cli import add_parser as add_consistency_parser
    from culturebias.bootstrap.samples_cli import add_parsers as add_sample_parsers
    from culturebias.bootstrap.split_check_cli import add_parser as add_split_check_parser

    add_sample_parsers(sub)  # samples, export
    add_build_parsers(sub)  # build <benchmark>, one per benchmark whose descriptor has a builder
    add_check_parser(sub)  # check
    add_cbbq_parser(sub, config_options)  # cbbq counts | review-export | review-import
    add_split_check_parser(sub)  # split-check (KoBBQ footnote 14)
    add_consistency_parser(sub)  # judge-consistency (McBE Table 13)


def handlers() -> dict[str, Callable[[argparse.Namespace], int]]:
    from culturebias.bootstrap.build_cli import build
    from culturebias.bootstrap.cbbq_cli import cbbq_command
    from culturebias.bootstrap.check_cli import check_command
    from culturebias.bootstrap.consistency_cli import consistency_command
    from culturebias.bootstrap.samples_cli import export_command, samples_command
    from culturebias.bootstrap.split_check_cli import split_check_command

    return {
        "samples": samples_command, "export": export_command, "build": build, "check": check_command,
        "cbbq": cbbq_command, "split-check": split_check_command, "judge-consistency": consistency_command,
    }
