"""The culture's script in figures and pages: Noto Sans CJK (SIL OFL 1.1, from PyPI) on any machine.

The font ships in the ``noto-cjk-sans-otc`` wheel (a dependency): one OpenType collection whose
faces cover Traditional and Simplified Chinese, Korean and Latin with macrons (te reo Māori).
Figures register it with matplotlib as a fallback after DejaVu Sans; a page embeds a subset of
it, only the glyphs the page uses, as a data: URI, so it needs no system font and fetches nothing.
"""

from __future__ import annotations

import base64
import io
import re
from functools import lru_cache
from pathlib import Path

# The collection's faces, by the glyph forms a language expects (all faces hold every glyph).
FACES = {"Traditional Chinese": "TC", "Simplified Chinese": "SC", "Korean": "KR"}
DEFAULT_FACE = "TC"
FACE_INDEX = {"JP": 0, "KR": 1, "SC": 2, "TC": 3, "HK": 4}
FAMILY = "culturebias script"  # the embedded subset's CSS family name
LICENCE = "Noto Sans CJK, SIL Open Font License 1.1"


@lru_cache(maxsize=1)
def font_path() -> Path | None:
    """The collection's file; None where the package is missing (figures and pages then fall back)."""
    try:
        from noto_cjk_sans_otc import FONT_PATH
    except ImportError:
        return None
    path = Path(str(FONT_PATH))
    return path if path.is_file() else None


def face_for(language: str | None) -> str:
    return FACES.get(language or "", DEFAULT_FACE)


_registered = False


def use_script_fonts() -> None:
    """Make matplotlib fall back to Noto Sans CJK for every glyph DejaVu Sans lacks (idempotent)."""
    global _registered
    if _registered:
        return
    path = font_path()
    if path is None:
        return
    import matplotlib
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(path))
    # Fallback runs along a list of concrete families (a generic one resolves to a single font);
    # every face of the collection holds every glyph, so one is enough.
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", f"Noto Sans CJK {DEFAULT_FACE}"]
    _registered = True


_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")


def page_characters(html: str) -> set[str]:
    """Every character a page can show, also those written as \\uXXXX in its embedded JSON."""
    chars = set(html)
    chars.update(chr(int(code, 16)) for code in _ESCAPED.findall(html))
    return {c for c in chars if c.isprintable() and not c.isspace()}


@lru_cache(maxsize=16)
def _subset(face: str, characters: frozenset[str]) -> bytes:
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    path = font_path()
    assert path is not None
    font = TTCollection(str(path), lazy=True).fonts[FACE_INDEX[face]]
    cmap = font.getBestCmap()
    wanted = sorted(ord(c) for c in characters if ord(c) in cmap)
    options = subset.Options()
    options.flavor = "woff"  # zlib: needs nothing beyond fontTools
    options.layout_features = ["kern", "liga", "ccmp", "locl", "vert"]
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6]  # keeps the copyright and licence notice fields
    options.name_languages = [0x409]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=wanted)
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff"
    font.save(out)
    return out.getvalue()


def embedded_font_css(html: str, language: str | None = None) -> str:
    """An @font-face rule holding the subset of the page's characters; '' where the font is missing."""
    if font_path() is None:
        return ""
    characters = frozenset(c for c in page_characters(html) if ord(c) > 0x7F)
    if not characters:
        return ""
    data = base64.b64encode(_subset(face_for(language), characters)).decode("ascii")
    # The face comes first in the page's font stack, limited to its own characters: it loads with the
    # first layout (a face met only in fallback can leave text shaped before it loaded as empty boxes).
    return (
        f'@font-face{{font-family:"{FAMILY}";src:url(data:font/woff;base64,{data}) format("woff");'
        f"font-display:block;unicode-range:{unicode_range(characters)}}}"
    )


def unicode_range(characters: frozenset[str]) -> str:
    """The CSS unicode-range of a set of characters, consecutive code points merged."""
    codes = sorted(ord(c) for c in characters)
    spans: list[list[int]] = []
    for code in codes:
        if spans and code == spans[-1][1] + 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return ",".join(f"U+{a:X}" if a == b else f"U+{a:X}-{b:X}" for a, b in spans)
