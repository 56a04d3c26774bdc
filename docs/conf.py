"""Sphinx configuration: the Markdown pages (MyST), the API reference from the numpydoc
docstrings, a page per registered protocol with its declared parameters, and the command line
from its click definitions.  Built by CI with warnings as errors:
``python3 -m sphinx -W --keep-going -b html docs docs/_build/html``."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import hedgerow  # noqa: E402

project = "Hedgerow"
author = "the Hedgerow developers"
copyright = "2026, the Hedgerow developers"
version = release = hedgerow.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "sphinx_click",
    "hedgerow_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/_build", "figures/*.csv"]
templates_path = []

# the API reference: every public module, its classes and functions, from the docstrings
autosummary_generate = True
autosummary_imported_members = False
# a package documents what it defines; what it re-exports is documented where it is defined
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_typehints = "none"
autodoc_mock_imports = []
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# the Markdown pages link to source files and to each other as GitHub renders them
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "dollarmath"]
suppress_warnings = ["myst.xref_missing", "misc.highlighting_failure"]

html_theme = "pydata_sphinx_theme"
html_title = f"Hedgerow {release}"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
html_static_path = []
