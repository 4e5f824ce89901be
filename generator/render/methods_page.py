"""The methods page: the rules the verdicts were computed by, written from the code's own
parameters (so the page cannot drift from the code), and what each rule cannot know."""

from __future__ import annotations

import math

from markupsafe import Markup

from ..analysis import changes, findings, grid_verdict, history, power, reproduction, segmentation, stats, verdicts
from ..analysis.comparison import RECOMMENDED, Settings
from ..analysis.series import ALONG, COMMIT_ENDINGS
from ..format import signed
from ..format.front_matter import MAX_FACTORS
from ..format.models import CLIENT_FIGURES
from ..format.signed import times
from . import text as t
from .templating import generated_mark, render


def methods_page(settings: Settings) -> str:
    alpha = 1 - settings.confidence
    noise = "the larger per-trial CV of the two sides" if settings.noise is None else f"±{settings.noise:.1%}"
    rule = (
        "± the larger per-trial coefficient of variation (SD / mean) of the two runs at that condition"
        if settings.noise is None
        else f"fixed by the publication at ±{settings.noise:.1%}"
    )
    return render(
        "methods.md.j2",
        mark=Markup(generated_mark("the plugin configuration")),
        confidence=t.level(settings.confidence),
        alpha=f"{alpha:.3g}",
        tost=t.level(verdicts.tost_level(settings.confidence)),
        min_effect=f"{settings.min_effect:.1%}",
        rate_low=times(1 - settings.min_effect),
        rate_high=times(1 + settings.min_effect),
        noise=noise,
        noise_rule=rule,
        cv_warn=f"{stats.CV_WARN:.0%}",
        identical=stats.IDENTICAL,
        identical_sides=stats.IDENTICAL_SIDES,
        outlier_z=f"{stats.OUTLIER_Z:g}",
        outlier_min=f"{stats.OUTLIER_MIN:.0%}",
        first_worse=f"{stats.FIRST_TRIAL_WORSE:.0%}",
        warn_from=stats.WARN_FROM_N,
        order=Markup(", ".join(f"**{v}**" for v in verdicts.VERDICTS)),
        incomplete_rule=t.text(verdicts.INCOMPLETE_RULE),
        max_factors=MAX_FACTORS,
        grid_noise=(
            "the largest per-trial CV among the grid's cells" if settings.noise is None else f"±{settings.noise:.1%}"
        ),
        grid_order=Markup(", ".join(f"**{v}**" for v, _ in grid_verdict.GRID_RULE)),
        grid_rule=[(Markup(f"**{v}**"), t.text(when)) for v, when in grid_verdict.GRID_RULE],
        clearly_larger=t.text(grid_verdict.CLEARLY_LARGER),
        power=f"{power.POWER:.0%}",
        draws=f"{power.DRAWS:,}",
        most=f"{power.MOST:,}",
        client_figures=Markup(", ".join(f"`{name}`" for name in sorted(CLIENT_FIGURES))),
        recommended=Markup(", ".join(f"`{s}`" for s in RECOMMENDED if s != "warmup_trials")),
        findings=Markup(", ".join(f"`{f}`" for f in findings.FINDINGS)),
        finding_rule=[(Markup(f"**{f}**"), t.text(when)) for f, when in findings.RULE.items()],
        range_high=f"1e{round(math.log10(signed.RANGE_HIGH))}",
        range_low=f"1e{round(math.log10(signed.RANGE_LOW))}",
        out_of_range=signed.OUT_OF_RANGE,
        rerun_tost=t.level(verdicts.tost_level(stats.CONFIDENCE)),
        rerun_margin=f"{reproduction.MARGIN:.0%}",
        rerun_alpha=f"{1 - stats.CONFIDENCE:.3g}",
        rerun_alpha_percent=t.level(1 - stats.CONFIDENCE),
        rerun_states=[(Markup(f"**{state}**"), t.text(when)) for state, when in reproduction.STATES.items()],
        rerun_example=reproduction.Outcome("rerun unsettled", agree=0, differ=0, figures=10).words,
        **history_words(settings),
    )


def _paragraph(doc: str | None, start: str, end: str | None = None) -> Markup:
    """The words of one of our own module docstrings (trusted Markdown) from `start` (up to
    `end`, or to its end), on one line, its bullets run together as sentences."""
    text = " ".join((doc or "").replace("\n- ", "\n").split())
    found = text.split(start, 1)[1] if start and start in text else text if not start else ""
    return Markup((found.split(end, 1)[0] if end else found).strip())


def history_words(settings: Settings) -> dict[str, object]:
    """The History section's words, from the constants and docstrings of `segmentation` and
    `changes`: the page states the rule the code runs."""
    tost = t.level(verdicts.tost_level(settings.confidence))
    rule = {
        "worse": Markup(
            f"or **better** (by the metric's direction) when the interval excludes 1 and the ratio is at "
            f"least {settings.min_effect:.1%} away from 1"
        ),
        "within noise": Markup(
            f"when the interval holds 1 and the {tost} (TOST) interval lies inside 1 ± {settings.min_effect:.1%}"
        ),
        "unsettled": "otherwise",
    }
    order = [v for v in changes.CHANGE_VERDICTS if v in rule]
    commit = ", ".join(f"`{e}`" for e in COMMIT_ENDINGS)
    return {
        "along": Markup(
            ", ".join(f"`{k}`" for k in ALONG) + f", every key whose last name is {commit} or ends "
            "in `_commit`, and those the plugin setting `history_along` adds"
        ),
        "min_points": history.MIN_POINTS,
        "segmentation": _paragraph(segmentation.__doc__, "", "What it cannot know:").replace(
            "FLOOR_SD", f"{segmentation.FLOOR_SD:.1%}"
        ),
        "penalty": f"{segmentation.PENALTY_PER_LOG_POINT:g}",
        "floor": Markup(f"{segmentation.FLOOR_SD:.1%}"),
        "change_rule": [(v, rule[v]) for v in order],
        "cannot_segment": Markup(_paragraph(segmentation.__doc__, "What it cannot know:").capitalize()),
        "cannot_judge": Markup(_paragraph(changes.__doc__, "What it cannot know:").capitalize()),
    }
