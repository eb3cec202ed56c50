"""The subcommands of ``python -m quality`` (quality.cli), one module each.

A command module has ``NAME``, ``HELP``, ``register(parser)`` (adds its arguments to
its own sub-parser) and ``run(args) -> int`` (the exit code). Shared input and output
handling lives in ``quality.commands.io``.
"""
