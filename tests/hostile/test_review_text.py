"""Untrusted text in a review comment makes no live link on GitHub (a bare www. domain, an
http(s) address, an e-mail address) and shows characters that reorder or hide text as their
code (issue 34: low)."""

from __future__ import annotations

from test_review import _verdicts_changed

from generator.analysis.review import VerdictChange
from generator.render.review_text import review_markdown


def _row(statement: str) -> str:
    text = review_markdown(_verdicts_changed(VerdictChange("c", statement, "supported", "contradicted", "")), "a", "b")
    (row,) = [line for line in text.splitlines() if line.startswith("| `c`")]
    return row.split(" | ")[0].removeprefix("| `c`: ")


def test_a_bare_domain_is_not_linked() -> None:
    assert _row("see www.evil.example now") == "see www&#8288;.evil.example now"
    assert _row("WWW.evil.example") == "WWW&#8288;.evil.example"


def test_an_address_is_not_linked() -> None:
    assert _row("https://evil.example/x") == "https&#8288;&#58;&#47;&#47;evil.example&#47;x"
    assert _row("mail me: a@evil.example") == "mail me&#58; a&#64;&#8288;evil.example"


def test_bidirectional_and_invisible_characters_are_shown_as_their_code() -> None:
    assert _row("price \u202e01$\u202c ok\u200b") == (
        "price &#60;U&#43;202E&#62;01&#36;&#60;U&#43;202C&#62; ok&#60;U&#43;200B&#62;"
    )
    assert _row("\u2066x\u2069\u200f") == "&#60;U&#43;2066&#62;x&#60;U&#43;2069&#62;&#60;U&#43;200F&#62;"


def test_tag_characters_and_other_ignorable_characters_are_shown_as_their_code() -> None:
    """Tag characters (U+E0000 to U+E007F) spell ASCII that GitHub draws as nothing; variation
    selectors, the soft hyphen and Hangul fillers draw nothing too."""
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "hi")
    assert _row(f"ok{hidden}\u00ad\u3164\ufe0f") == (
        "ok&#60;U&#43;E0068&#62;&#60;U&#43;E0069&#62;&#60;U&#43;00AD&#62;&#60;U&#43;3164&#62;&#60;U&#43;FE0F&#62;"
    )
