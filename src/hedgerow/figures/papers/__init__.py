"""The reproductions, declared: paper -> named experiments (specs) -> figures and checks.

One module per paper (:mod:`~hedgerow.figures.papers.spidercast`,
:mod:`~hedgerow.figures.papers.topiary`, :mod:`~hedgerow.figures.papers.head_to_head`,
:mod:`~hedgerow.figures.papers.vitis`, :mod:`~hedgerow.figures.papers.omen`,
:mod:`~hedgerow.figures.papers.goldfish`) holds its :class:`Paper`, its figures and
its checks; ``_declare`` holds what a reproduction is and ``_checks`` the helpers the
checks share.  Adding a paper is one module and one entry in :data:`PAPERS`;
``hedgerow reproduce`` (:mod:`hedgerow.pipeline.reproduce`) runs it and
``hedgerow reproduce --list`` prints it.

Paper values come from :mod:`hedgerow.experiment.reference` (the spec's
``reference:``, which the spec model validates one layer below, so they stay
there); a figure's :class:`Tolerance` says when our mean counts as matching one.
The checks are the acceptance settled in ``docs/spidercast.md``
("Settled acceptance"), ``docs/topiary.md`` (the checks of
``benchmarks/bench_topiary.py`` and "Settled acceptance: the eclipse attack"),
the measured acceptance of ``docs/vitis-baselines.md`` (S0), ``docs/omen.md``
(FB 1K x Google 1K) and ``docs/goldfish.md``, and the paper's exact statements.
A check whose runs are not in the results (e.g. 10,000 nodes in a quick run) is
reported as *not run*, not as passed.

This package imports neither matplotlib nor Spark.
"""

from __future__ import annotations

from hedgerow.errors import HedgerowError
from hedgerow.figures.papers._declare import (
    VERDICTS,
    Check,
    FigureSpec,
    Named,
    Outcome,
    Paper,
    Quick,
    Results,
    ScoreRun,
    Tolerance,
)
from hedgerow.figures.papers.goldfish import GOLDFISH
from hedgerow.figures.papers.head_to_head import HEAD_TO_HEAD
from hedgerow.figures.papers.omen import OMEN
from hedgerow.figures.papers.spidercast import SPIDERCAST
from hedgerow.figures.papers.topiary import TOPIARY
from hedgerow.figures.papers.vitis import VITIS

__all__ = [
    "GOLDFISH",
    "HEAD_TO_HEAD",
    "OMEN",
    "PAPERS",
    "SPIDERCAST",
    "TOPIARY",
    "VERDICTS",
    "VITIS",
    "Check",
    "FigureSpec",
    "Named",
    "Outcome",
    "Paper",
    "Quick",
    "Results",
    "ScoreRun",
    "Tolerance",
    "get_paper",
]

#: every reproduction ``hedgerow reproduce`` knows, by name
PAPERS: dict[str, Paper] = {
    p.name: p for p in (SPIDERCAST, TOPIARY, HEAD_TO_HEAD, VITIS, OMEN, GOLDFISH)
}


def get_paper(name: str) -> Paper:
    """The reproduction called ``name``.

    Examples
    --------
    >>> get_paper("spidercast").figures[0].id
    'fig12'
    >>> get_paper("vitis").experiments[0].experiment
    'vitis-fig6'
    >>> get_paper("nope")  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    hedgerow.errors.HedgerowError: no paper 'nope'; known: goldfish, head-to-head, omen,
    spidercast, topiary, vitis
    """
    try:
        return PAPERS[name]
    except KeyError:
        raise HedgerowError(f"no paper {name!r}; known: {', '.join(sorted(PAPERS))}") from None
