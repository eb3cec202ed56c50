"""``python -m quality COMMAND ...``: the statistics of every study design from CSV files,
no database needed. Each command lives in its own module of ``quality.commands``.

Exit codes: 0 done, 2 unusable input or arguments (message on stderr), 1 output failure.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from quality.commands import analyze, compare, labels, rank, sequence, verify
from quality.commands.io import EXIT_BAD_INPUT, bad_input, input_problem, out_problem

COMMANDS = (analyze, compare, rank, labels, verify, sequence)
DESCRIPTION = "The statistics of every study design from CSV files, no database needed."
EPILOG = (
    "Each command writes its files into --out DIR all at once (a failed run leaves DIR as "
    "it was); 'python -m quality COMMAND --help' lists its options. Exit status: 0 done, "
    "2 unusable input or arguments (the message on stderr names the line), 1 output "
    "failure. docs/researchers.md describes the inputs and outputs."
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m quality", description=DESCRIPTION, epilog=EPILOG
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(
            commands.add_parser(command.NAME, help=command.HELP, description=command.HELP)
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # every command writes DIR: checked before any work
    if problem := out_problem(args.out) or input_problem(args):
        return bad_input(problem)
    for command in COMMANDS:
        if args.command == command.NAME:
            return command.run(args)
    return EXIT_BAD_INPUT  # pragma: no cover (argparse requires a command)
