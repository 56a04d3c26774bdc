"""Entry file for ``spark-submit``: runs ``hedgerow sweep`` inside the submitted application.

``spark-submit`` needs a Python *file*, not a module; pass this one::

    spark-submit --master spark://HOST:7077 \\
        "$(python -c 'import hedgerow.cli.spark_submit as m; print(m.__file__)')" \\
        experiments/spidercast-fig12.yaml --out /shared/results/fig12 --parallelism 64

The arguments are those of ``hedgerow sweep``; the Spark session is the one
``spark-submit`` configured (:func:`hedgerow.pipeline.session.get_spark` with no
master keeps it).  ``python -m hedgerow.cli.spark_submit SPEC --out DIR`` does
the same without ``spark-submit``.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``hedgerow sweep`` with ``argv`` (default ``sys.argv[1:]``)."""
    from hedgerow.cli import main as cli_main

    return cli_main(["sweep", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    # run as a file, this directory is sys.path[0]: drop it so that its modules
    # (build, run, sweep, ...) cannot shadow top-level modules of the same name
    import os

    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)
    sys.exit(main())
