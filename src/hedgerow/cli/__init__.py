"""The ``hedgerow`` command line.

Each area registers its commands from its own module below; user errors
(:class:`~hedgerow.errors.HedgerowError`) print one line and exit with status 2.
"""

from __future__ import annotations

import contextlib
import sys

import click

from hedgerow.cli._common import HedgerowGroup
from hedgerow.cli.build import build_cmd
from hedgerow.cli.churn import churn_cmd
from hedgerow.cli.compare import compare_cmd
from hedgerow.cli.data import data_group
from hedgerow.cli.draw import draw_cmd
from hedgerow.cli.ingest import ingest
from hedgerow.cli.pictures import pictures_cmd
from hedgerow.cli.protocols import protocols_cmd
from hedgerow.cli.replay import replay_cmd
from hedgerow.cli.reproduce import reproduce_cmd
from hedgerow.cli.run import run_cmd
from hedgerow.cli.sweep import report_cmd, sweep_cmd
from hedgerow.progress import compile_notice


@click.group(cls=HedgerowGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hedgerow")
def cli() -> None:
    """Hedgerow: build, simulate and measure topic-based pub/sub overlays."""


cli.add_command(build_cmd)
cli.add_command(churn_cmd)
cli.add_command(compare_cmd)
cli.add_command(data_group)
cli.add_command(ingest)
cli.add_command(protocols_cmd)
cli.add_command(run_cmd)
cli.add_command(sweep_cmd)
cli.add_command(report_cmd)
cli.add_command(reproduce_cmd)
cli.add_command(draw_cmd)
cli.add_command(pictures_cmd)
cli.add_command(replay_cmd)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``hedgerow`` script."""
    args = sys.argv[1:] if argv is None else argv
    # a first run's silent minutes of compilation, announced (not for help: nothing compiles)
    light = not args or bool({"-h", "--help", "--version"} & set(args))
    try:
        with contextlib.nullcontext() if light else compile_notice():
            cli.main(args=argv, prog_name="hedgerow", standalone_mode=True)
    except SystemExit as e:  # click exits through SystemExit
        return int(e.code or 0)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
