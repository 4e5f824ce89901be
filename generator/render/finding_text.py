"""How a correction's finding reads wherever it is shown (the corrected claim's card and page,
the correction's card, the front page): "Corrected (misattributed): the credit belongs to the
kernel path kernels.draft_head_gemm, not to setup.draft_vocab", and whether the correction's
runs bear it out."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from ..analysis.findings import Correction
from . import text as t

# What a key's manifest section records (FORMAT.md's recommended sections), so a dotted key
# reads as what it is: "the kernel path (kernels.draft_head_gemm)".
SECTIONS = {
    "kernels": "the kernel path",
    "engine": "the engine settings",
    "software": "the software version",
    "host": "the host",
    "accelerators": "the accelerator",
    "model": "the model",
    "setup": "the setup",
}


def named(key: str) -> str:
    """A dotted key with what its section records: "the kernel path (kernels.draft_head_gemm)"."""
    section = SECTIONS.get(key.split(".", 1)[0])
    return f"{section} ({key})" if section else key


def cause_text(c: Correction) -> str:
    """What got the credit instead: the words, then the keys ("a badly chosen kernel
    (kernels.draft_head_gemm)"), or the keys as they read alone."""
    keys = _joined([named(k) for k in c.cause_keys]) if not c.cause_words else ", ".join(c.cause_keys)
    if c.cause_words:
        words = _joined(list(c.cause_words))
        return f"{words} ({keys})" if keys else words
    return keys


def _joined(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def finding_text(c: Correction, claimed: str | None) -> str:
    """What the correction found, in words, after "Corrected (finding): "."""
    credited = _joined(list(c.credited)) or "the change the claim names"
    cause = cause_text(c)
    if c.finding == "misattributed":
        return (
            f"the credit belongs to {cause}, not to {credited}"
            if cause
            else f"the credit does not belong to {credited}"
        )
    instead = f"; the correction credits {cause}" if cause else ""
    if c.finding == "overstated":
        return f"the effect is smaller than claimed{f' ({claimed})' if claimed else ''}{instead}"
    if c.finding == "contradicted":
        return f"the data show the opposite of the claim{instead}"
    if c.finding == "within noise":
        return f"the difference lies inside run-to-run noise{instead}"
    return f"the claim is withdrawn{instead}"


def check_text(c: Correction) -> str:
    """Whether the correction's runs bear its finding out, in words."""
    if c.finding is None:
        return ""
    if c.finding == "withdrawn":
        return "A withdrawal is its author's word; nothing is checked."
    if c.disagreement is not None:
        return f"Not borne out by its runs: {c.disagreement}."
    if c.checked and not c.settled:
        return f"Its runs do not settle this: the claim, judged again on them, is {c.rejudged}."
    if c.checked:
        return f"Its runs bear this out: the claim, judged again on them, is {c.rejudged}."
    return "The correction publishes no runs, so this finding is its author's word, not checked here."


def corrected_line(c: Correction, claimed: str | None, up: str) -> Markup:
    """The corrected claim's finding line: "Corrected (misattributed): ... (by CORRECTION). CHECK"
    (`up` climbs from the page to the claims folder)."""
    what = f"Corrected ({c.finding})" if c.finding else "Corrected"
    said = finding_text(c, claimed) if c.finding else "see the correction"
    by = t.link(f"the correction {c.correction}", f"{up}{t.path_url(c.correction)}/")
    check = check_text(c)
    return (
        Markup("<strong>")
        + t.text(what)
        + Markup("</strong>: ")
        + t.text(said)
        + Markup(" (")
        + by
        + Markup(").")
        + (Markup(" ") + t.text(check) if check else Markup(""))
    )


def unrecorded_lines(corrections: Sequence[Correction], unrecorded: Sequence[str]) -> list[str]:
    """What an original's unmatched-conditions check could not see: the recommended sections
    neither side records, what a correction's runs held equal that these runs do not record,
    and a correction's cause keys that these runs do not record."""
    out = [f"{key}: not recorded on either side" for key in unrecorded]
    listed: set[str] = set()
    for c in corrections:
        for key, value in c.held_equal:
            if key not in listed:
                held = f"{key}: not recorded here; its correction held {key} equal on both sides"
                out.append(f"{held} ({value}, in {c.correction})")
                listed.add(key)
        for key in c.cause_unrecorded:
            if key not in listed:
                out.append(f"{key}: not recorded on either side; its correction names it as the cause ({c.correction})")
                listed.add(key)
    return out
