"""Figures, HTML reports and overlay pictures of a reproduction.

* :mod:`~hedgerow.figures.papers`: the reproductions, declared (paper ->
  experiments -> figures -> acceptance checks), one module per paper;
* :mod:`~hedgerow.figures.tidy`: result rows as pandas frames and the reporting
  derivations written once (best attempt, 95% interval, mean over runs);
* :mod:`~hedgerow.figures.render`: a declared figure's table and image;
* :mod:`~hedgerow.figures.plots`: the matplotlib figures;
* :mod:`~hedgerow.figures.html`: the self-contained HTML reports;
* :mod:`~hedgerow.figures.draw`: pictures of one overlay and GraphML export.

Only :mod:`~hedgerow.figures.plots`, :mod:`~hedgerow.figures.html` (through
``render``) and :mod:`~hedgerow.figures.draw` import matplotlib, and only when
they draw; importing this package does not.
"""
