"""The methods page: the rules the verdicts were computed by, written from the code's own
parameters (so the page cannot drift from the code), and what each rule cannot know."""

from __future__ import annotations

import math

from markupsafe import Markup

from ..analysis import findings, grid_verdict, power, reproduction, stats, verdicts
from ..analysis.comparison import RECOMMENDED, Settings
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
    )
