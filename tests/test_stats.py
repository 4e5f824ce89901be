"""Statistics against hand-computed values, and properties that must always hold."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.analysis import rates, ratios, stats

finite = st.floats(min_value=0.01, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_summary_of_one_two_three_four() -> None:
    s = stats.summarize([1, 2, 3, 4])
    assert (s.n, s.mean, s.median, s.min, s.max) == (4, 2.5, 2.5, 1, 4)
    assert s.sd == pytest.approx(math.sqrt(5 / 3))
    assert s.cv == pytest.approx(0.5163978)
    # All positive: the multiplicative interval 2.5 x exp(+-t(0.975, 3) s_log / 2), with
    # s_log = 0.601168 the SD of log 1..4, t = 3.182446: half-width 0.956592 on the log scale.
    assert s.interval == "multiplicative"
    assert s.ci_low == pytest.approx(2.5 * math.exp(-0.956592), abs=1e-5)
    assert s.ci_high == pytest.approx(2.5 * math.exp(0.956592), abs=1e-5)


def test_interval_of_a_positive_metric_never_leaves_its_range() -> None:
    # The run page once showed ttft_p99_s at [-0.016, 0.163] s: a t interval of skewed trials.
    ttft = [0.012, 0.014, 0.013, 0.150, 0.015]
    assert stats.t_interval(ttft)[0] < 0
    s = stats.summarize(ttft)
    assert s.ci_low is not None and 0 < s.ci_low < min(ttft) and s.interval == "multiplicative"
    errors = stats.summarize([0, 0, 0, 0, 3])
    assert (errors.ci_low, errors.interval) == (0.0, "t, truncated at 0")
    signed = stats.summarize([-1.0, 1.0, 0.5])
    assert signed.interval == "t" and signed.ci_low is not None and signed.ci_low < -1


def test_one_trial_has_no_spread() -> None:
    s = stats.summarize([31.2])
    assert (s.n, s.mean, s.sd, s.cv, s.ci_low) == (1, 31.2, None, None, None)


def test_empty_input_raises() -> None:
    for fn in (stats.summarize, stats.modified_zscores, stats.t_interval):
        with pytest.raises(ValueError, match="at least one trial"):
            fn([])


def test_modified_zscores_by_hand() -> None:
    z = stats.modified_zscores([1, 2, 3, 4, 100])
    assert z == pytest.approx([-1.349, -0.6745, 0, 0.6745, 65.4265])


def test_modified_zscores_when_mad_is_zero() -> None:
    z = stats.modified_zscores([5, 5, 5, 5, 9])
    assert z[:4] == [0, 0, 0, 0]
    assert z[4] == pytest.approx(4 / (1.253314 * 0.8))
    assert stats.modified_zscores([5, 5, 5]) == [0, 0, 0]


def test_a_rate_is_summarized_over_its_trials_not_its_pooled_tokens() -> None:
    """Two trials of 2,048 and 2,040 drafted tokens: n is 2 (trials), the mean is that of the two
    trial rates, and the interval is Student's t over them with one degree of freedom (scipy's
    t.interval as the oracle), far wider than a Wilson interval over 4,088 tokens would be."""
    from scipy import stats as sps

    r = rates.summarize_rate([1490, 1502], [2048, 2040])
    trial_rates = (1490 / 2048, 1502 / 2040)
    assert r.per_trial == trial_rates and r.n == 2 and r.attempts_per_trial == (2048, 2040)
    assert r.mean == pytest.approx(sum(trial_rates) / 2)
    low, high = sps.t.interval(0.95, 1, loc=sum(trial_rates) / 2, scale=sps.sem(trial_rates))
    assert (r.ci_low, r.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert round(r.ci_low, 4) == 0.6764 and round(r.ci_high, 4) == 0.7874 and r.interval == "t"
    assert (r.successes, r.attempts, r.same_attempts) == (2992, 4088, None)


def test_a_rate_interval_is_truncated_to_0_and_1() -> None:
    """Trials at 98%, 100% and 99%: the t interval's upper end, 101.5%, is truncated to 100%
    (a true rate lies in [0, 1], so the truncated interval holds it exactly when the t does)."""
    r = rates.summarize_rate([98, 100, 99], [100, 100, 100])
    assert r.ci_high == 1.0 and r.ci_low is not None and round(r.ci_low, 4) == 0.9652
    assert r.interval == "t, truncated to [0, 1]"
    low = rates.summarize_rate([0, 2, 1], [100, 100, 100])
    assert low.ci_low == 0.0 and low.interval == "t, truncated to [0, 1]"


def test_identical_trials_give_a_rate_with_no_interval() -> None:
    """Five temperature-0 trials that each drafted 1,367 tokens and accepted 385: the rate is
    exact for those prompts (SD 0) and has no interval, never one of no width."""
    r = rates.summarize_rate([385] * 5, [1367] * 5)
    assert r.mean == 385 / 1367 and r.sd == 0.0 and r.constant
    assert (r.ci_low, r.ci_high, r.interval) == (None, None, None)
    assert (r.n, r.same_attempts, r.attempts) == (5, 1367, 6835)


def test_rate_with_nothing_drafted_has_no_interval() -> None:
    r = rates.summarize_rate([0, 0], [0, 0])
    assert r.mean is None and r.per_trial == () and r.n == 0 and r.ci_low is None
    one = rates.summarize_rate([3, 0], [10, 0])  # one trial attempted anything: a mean, no interval
    assert (one.n, one.mean, one.sd, one.ci_low) == (1, 0.3, None, None)


def test_warnings_name_the_remedy() -> None:
    assert stats.warnings([10, 10.1, 9.9, 10], "higher") == []
    noisy = stats.warnings([10, 14, 7, 12], "higher")
    assert any("CV is" in w and "Run more trials" in w for w in noisy)
    outlier = stats.warnings([10, 10.1, 9.9, 10, 10.05, 30], None)
    assert any(w.startswith("Trial 6 lies +199.3% from the median, an outlier") for w in outlier)


def test_warnings_stay_quiet_at_small_n_and_small_deviations() -> None:
    # Three clean trials once gave a "modified z-score of -165.9" for a 1.7% deviation.
    assert stats.warnings([100.0, 100.0, 98.3], None) == []
    assert stats.warnings([100.0, 100.0, 100.0, 100.0, 98.3], None) == []  # z is huge, 1.7% is not
    assert stats.warnings([100.0, 100.0, 100.0, 100.0, 93.0], None) == [
        "Trial 5 lies -7.0% from the median, an outlier: look for interference during that trial (other "
        "load, thermal throttling) and re-run, or exclude it with a reason (excluded: in run.yaml) rather "
        "than delete it."
    ]
    assert stats.warnings([8.8, 10, 10.1, 9.9], "higher") == []  # a 12% slower first trial needs n >= 5
    slow_first = stats.warnings([7, 10, 10.1, 9.9, 10], "higher")
    assert any("Trial 1 is 30% worse" in w and "warmup" in w for w in slow_first)
    # For a lower-is-better metric, a *lower* first trial is not a warmup problem.
    assert not any("worse" in w for w in stats.warnings([7, 10, 10.1, 9.9, 10], "lower"))


@given(st.lists(finite, min_size=2, max_size=30))
def test_interval_contains_mean(values: list[float]) -> None:
    s = stats.summarize(values)
    assert s.ci_low <= s.mean * (1 + 1e-12) and s.mean <= s.ci_high * (1 + 1e-12)
    assert s.min <= s.median <= s.max


@given(st.lists(finite, min_size=2, max_size=30), st.floats(min_value=0.1, max_value=100))
def test_cv_is_scale_free(values: list[float], factor: float) -> None:
    a, b = stats.summarize(values), stats.summarize([v * factor for v in values])
    assert b.cv == pytest.approx(a.cv, rel=1e-6, abs=1e-9)


@given(st.lists(finite, min_size=3, max_size=30), st.floats(min_value=-1000, max_value=1000))
def test_zscores_ignore_a_shift(values: list[float], shift: float) -> None:
    a = stats.modified_zscores(values)
    b = stats.modified_zscores([v + shift for v in values])
    for x, y in zip(a, b, strict=True):
        assert x == pytest.approx(y, rel=1e-6, abs=1e-6) or (math.isinf(x) and math.isinf(y))


def test_a_deviation_at_rounding_level_is_not_spread() -> None:
    """Found by hypothesis: 0.01 and 0.010000000000000002 made a MAD of 1.7e-18 and a z of 4e17."""
    assert stats.modified_zscores([1.0, 0.010000000000000002, 0.01]) == pytest.approx(
        stats.modified_zscores([2.0, 1.01, 1.01])
    )
    assert stats.modified_zscores([1.0, 0.010000000000000002, 0.01])[0] == pytest.approx(2.39365, rel=1e-5)


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=2, max_size=40))
def test_summaries_agree_with_numpy(values: list[float]) -> None:
    """Summaries are computed in plain Python (numpy's per-call cost dominated rendering); they
    agree with numpy's mean, sample SD and median to rounding."""
    import numpy as np

    found = stats.summarize(values)
    scale = max(1.0, max(abs(v) for v in values))
    assert found.mean == pytest.approx(float(np.mean(values)), rel=1e-12, abs=1e-12 * scale)
    assert found.sd == pytest.approx(float(np.std(values, ddof=1)), rel=1e-9, abs=1e-9 * scale)
    assert found.median == float(np.median(values))


def test_trials_near_the_largest_float_summarize_without_overflow() -> None:
    """The exact sum of three trials of 1e308 leaves the floats; the mean does not."""
    found = stats.summarize([1e308, 1e308, 1.5e308])
    assert found.mean == pytest.approx(1.1666666666666667e308)
    assert found.median == 1e308 and found.sd == pytest.approx(0.28867513459481287e308)
    assert found.ci_low is not None and found.ci_high is not None
    assert found.ci_low < found.mean < found.ci_high  # at a bound of 708, the interval lay below every trial
    assert stats.warnings([1e308, -1e308, 1e308, -1e308, 1e308], "higher")[0].startswith("CV is")


def test_a_remembered_summary_is_one_of_the_same_trials() -> None:
    """Summaries are remembered by their trials' exact values: 0.0 and -0.0 are equal as floats,
    so a trial set holding a zero is never answered with another's summary."""
    first = stats.summarize([0.0, 2.0, 4.0])
    negative = stats.summarize([-0.0, 2.0, 4.0])
    assert math.copysign(1, first.min) == 1 and math.copysign(1, negative.min) == -1
    again = stats.summarize((3.0, 5.0, 7.5))
    assert stats.summarize([3.0, 5.0, 7.5]) is again  # a list and a tuple of the same trials
    assert stats.summarize([3.0, 5.0, 7.5], 0.9) != again  # another level, another interval


# -- identical trials are exact --------------------------------------------------------------

any_positive = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


def test_five_identical_counts_have_no_interval_width() -> None:
    """draft_tokens at temperature 0 (every trial 2180): the interval was [2179.999999999998,
    2180.0000000000023], so the chart drew a rule the height of its panel in float noise."""
    s = stats.summarize([2180.0] * 5)
    assert (s.mean, s.sd, s.cv, s.ci_low, s.ci_high) == (2180.0, 0.0, 0.0, 2180.0, 2180.0)
    assert s.constant
    three = stats.summarize([0.1] * 3)  # fmean: 0.10000000000000002
    assert (three.mean, three.sd, three.ci_low, three.ci_high) == (0.1, 0.0, 0.1, 0.1)
    assert stats.t_interval([0.7] * 6) == (0.7, 0.7)
    assert stats.summarize([0.0] * 4).ci_low == stats.summarize([0.0] * 4).ci_high == 0.0


def test_a_ratio_of_two_constant_sides_is_their_quotient_with_no_interval() -> None:
    """np.var of five equal logs was 1e-30: an interval 1e-16 wide printed as "+19.6% [+19.6%, +19.6%]"."""
    r = ratios.ratio_interval([1367.0] * 5, [2180.0] * 5)
    assert r.se == 0.0 and r.exact == 2180.0 / 1367.0
    assert r.ratio == 2180.0 / 1367.0 and r.bounds(0.95) == (r.ratio, r.ratio) == (r.low, r.high)
    published = ratios.ratio_from_summaries((100.0, 0.0, 5), (120.0, 0.0, 5))
    assert published.ratio == 1.2 and published.bounds(0.9) == (1.2, 1.2)
    one_side = ratios.ratio_interval([1367.0] * 5, [2170.0, 2180.0, 2190.0])
    low, high = one_side.bounds(0.95)
    assert one_side.exact is None and low < one_side.ratio < high  # the other side's spread still counts


@given(any_positive, st.integers(min_value=2, max_value=60), st.floats(min_value=0.5, max_value=0.999))
def test_identical_trials_give_their_value_and_no_spread_however_many(value: float, n: int, level: float) -> None:
    s = stats.summarize([value] * n, level)
    assert (s.mean, s.median, s.sd, s.ci_low, s.ci_high) == (value, value, 0.0, value, value)
    negative = stats.summarize([-value] * n, level)
    assert (negative.mean, negative.sd, negative.ci_low, negative.ci_high) == (-value, 0.0, -value, -value)


@given(any_positive, any_positive, st.integers(min_value=2, max_value=30), st.integers(min_value=2, max_value=30))
def test_two_constant_sides_have_an_exact_ratio(b: float, c: float, n_b: int, n_c: int) -> None:
    r = ratios.ratio_interval([b] * n_b, [c] * n_c)
    if math.isfinite(c / b) and c / b > 0:
        assert r.ratio == c / b and r.bounds(0.95) == (c / b, c / b)


def test_the_methods_page_says_what_identical_trials_and_sweeps_show(monkeypatch: pytest.MonkeyPatch) -> None:
    """The words every page uses for an interval of no width come from the code's constants."""
    import html

    from generator.analysis.comparison import Settings
    from generator.render.methods_page import methods_page

    def page() -> str:
        return " ".join(html.unescape(methods_page(Settings())).split())

    assert (
        'its mean is that value and its SD 0, exactly, and no interval is shown or drawn: the page says "exact: '
        'every trial identical" (for a ratio of two such sides, "exact: every trial identical on both sides",'
    ) in page()
    assert "one axis tick per measured value" in page() and "no line or band joins two values" in page()
    monkeypatch.setattr(stats, "IDENTICAL", "no spread")
    assert 'the page says "no spread"' in page()
