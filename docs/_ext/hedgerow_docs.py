"""Sphinx extension: one page per registered protocol, generated from its declarations.

At ``builder-inited`` it writes ``reference/protocols.rst`` (the table of protocols) and
``reference/protocols/NAME.rst`` (the paper, capabilities, tags and every declared parameter
with its type, range, default and meaning) from :data:`hedgerow.protocols.REGISTRY`, so the
pages cannot drift from the code.  The generated files are not committed.
"""

from __future__ import annotations

from pathlib import Path


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        out.append(f"   * - {row[0]}")
        out += [f"     - {c}" for c in row[1:]]
    return [*out, ""]


def _esc(text: str) -> str:
    return str(text).replace("*", r"\*").replace("`", "'").replace("|", r"\|")


def write_protocol_pages(app) -> None:
    # Hedgerow's own protocols; an installed plugin documents itself
    from hedgerow.protocols import BUILTIN, capabilities

    ref = Path(app.srcdir) / "reference"
    pages = ref / "protocols"
    pages.mkdir(parents=True, exist_ok=True)
    names = sorted(BUILTIN)
    index = [
        "Protocols", "=========", "",
        "Every built-in protocol, generated from its class: the paper, its capabilities and its",
        "declared parameters (``hedgerow protocols NAME`` prints the same).", "",
        ".. toctree::", "   :hidden:", "",
        *[f"   protocols/{n}" for n in names], "",
    ]
    index += _table(
        [[f":doc:`{n} <protocols/{n}>`", "/".join(capabilities(BUILTIN[n])),
          _esc(BUILTIN[n].paper)] for n in names],
        ["protocol", "capabilities", "paper"],
    )
    _write(ref / "protocols.rst", "\n".join(index))
    for n in names:
        cls = BUILTIN[n]
        title = f"``{n}``"
        lines = [title, "=" * len(title), "", f"*{_esc(cls.paper)}*", "",
                 f"Class :class:`{cls.__module__}.{cls.__qualname__}`; capabilities: "
                 f"{', '.join(capabilities(cls))}; forwarding: ``{cls.forwarding}``; claims "
                 f"topic connectivity: {str(cls.claims_topic_connected).lower()}.", ""]
        if cls.params:
            lines += ["Parameters", "----------", ""]
            lines += _table(
                [[f"``{k}``", _esc(p.describe()), _esc(p.doc)] for k, p in cls.params.items()],
                ["parameter", "type, range, default", "meaning"],
            )
        else:
            lines += ["This protocol declares no parameters.", ""]
        _write(pages / f"{n}.rst", "\n".join(lines))


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def escape_click_text(app, ctx, lines: list[str]) -> None:
    """Help texts are plain text in a terminal: a lone ``*`` (``local[*]``) is not emphasis."""
    import re

    for i, line in enumerate(lines):
        lines[i] = re.sub(r"(?<![*\\])\*(?!\*)", r"\\*", line)


def setup(app):
    app.connect("builder-inited", write_protocol_pages)
    for event in ("sphinx-click-process-description", "sphinx-click-process-usage",
                  "sphinx-click-process-options", "sphinx-click-process-arguments",
                  "sphinx-click-process-epilog"):
        app.connect(event, escape_click_text)
    return {"version": "1", "parallel_read_safe": True}
