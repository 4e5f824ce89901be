"""What a reader sees on a run page, a claim card and the methods page says what the data holds:
whole trial numbers on a short run's sequence chart, no chart caption promising an interval that
one trial cannot have, a command run's reproduce words without a server, an empty setup read as
"none", the reason more trials will not settle a verdict said once, the noise floor as a figure."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import vl_convert as vlc
import yaml

from helpers import generate, measured_run, publication, write_tree

RUN = "2026-09-01-measured"


def page(pages: dict[str, bytes], path: str) -> str:
    return html.unescape(pages[path].decode())


def tree(files: dict[str, str]) -> dict[str, str | bytes]:
    return {**files}


def one_run(tmp_path: Path, results: str, **fields: object) -> dict[str, bytes]:
    files = measured_run(RUN, **fields)
    files[f"runs/{RUN}/results.csv"] = results
    del files[f"runs/{RUN}/requests.csv"]
    return generate(write_tree(tmp_path, tree(publication(files))))


def trials(count: int) -> str:
    rows = "".join(f"{t},8,{100 + t},16384,11790\n" for t in range(1, count + 1))
    return "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n" + rows


@pytest.mark.parametrize(("count", "ticks"), [(2, ["1", "2"]), (3, ["1", "2", "3"]), (5, ["1", "2", "3", "4", "5"])])
def test_the_sequence_chart_of_a_short_run_labels_each_trial_once(tmp_path: Path, count: int, ticks: list[str]) -> None:
    """Vega's tickMinStep still drew 1 2 2 and 1 2 2 3 3 (ticks at every half trial, labelled whole)."""
    spec = json.loads(one_run(tmp_path, trials(count))[f"runs/{RUN}/charts/tokens_per_second-sequence.json"])
    for width in (300, 700):
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", vlc.vegalite_to_svg({**spec, "width": width}))
        assert texts[: texts.index("trial")] == ticks


def test_a_chart_of_one_trial_per_condition_says_it_has_no_interval(tmp_path: Path) -> None:
    text = page(one_run(tmp_path, trials(1)), f"runs/{RUN}/index.md")
    assert (
        "<figcaption>Each condition's one trial a grey dot (n = 1): one trial has no interval, so no mean or CI "
        "is drawn.</figcaption>"
    ) in text
    assert "blue: the mean and its" not in text


def test_a_chart_of_some_conditions_of_one_trial_says_which_have_no_interval(tmp_path: Path) -> None:
    text = page(one_run(tmp_path, trials(3) + "1,1,31.2,2048,1490\n"), f"runs/{RUN}/index.md")
    assert (
        "<figcaption>Every trial a grey dot; blue: the mean and its 95% CI. A condition of one trial has no "
        "interval.</figcaption>"
    ) in text


def test_a_run_of_no_conditions_and_no_setup_says_so(tmp_path: Path) -> None:
    results = "trial,tokens_per_second,draft_tokens,draft_accepted\n1,100,10,5\n2,101,10,5\n3,102,10,6\n"
    text = page(one_run(tmp_path, results, conditions=[], setup={}), f"runs/{RUN}/index.md")
    assert '<p class="bl-headline-note">Over every trial: the run has no conditions.</p>' in text
    assert '<td data-label="Field">Setup</td><td data-label="Value">none</td>' in text
    assert "{}" not in text.split("<table", 2)[1]  # the run's table: never a raw empty mapping
    assert "At all," not in text


def test_a_run_of_one_condition_calls_it_its_only_condition(tmp_path: Path) -> None:
    text = page(one_run(tmp_path, trials(3)), f"runs/{RUN}/index.md")
    assert '<p class="bl-headline-note">At concurrency=8, the run\'s only condition.</p>' in text


def test_a_command_run_is_reproduced_without_a_server(tmp_path: Path) -> None:
    invocation = ["run", "command", "--trials", "3", "--id", RUN, "--", "sh", "-c", "echo v=1"]
    runner = {"kind": "command", "command": ["sh", "-c", "echo v=1"], "timeout_s": None, "invocation": invocation}
    text = page(one_run(tmp_path, trials(3), runner=runner), f"runs/{RUN}/index.md")
    assert (
        "benchledger's runner made this run (command: it ran the program after `--` and timed each execution). "
        "To measure it again, on a machine like the one in the manifest below, run the same command with a new "
        "run id in place of `NEW-RUN-ID` (and, if the original used one, your own `EXTRA.yaml` of kernel paths "
        "the program cannot report), so the original stays:"
    ) in text
    assert "server" not in text.split("## Reproduce this run", 1)[1].split("<pre", 1)[0]
    assert "prompts: built-in" not in text


def test_an_openai_run_is_still_reproduced_against_its_server(tmp_path: Path) -> None:
    runner = {
        "kind": "openai",
        "invocation": ["run", "openai", "--base-url", "http://127.0.0.1:8080/v1", "--id", RUN],
        "base_url": "http://127.0.0.1:8080/v1",
    }
    text = page(one_run(tmp_path, trials(3), runner=runner), f"runs/{RUN}/index.md")
    assert (
        "benchledger's runner made this run (openai, against http://127.0.0.1:8080/v1; prompts: built-in). To "
        "measure it again, start the same server"
    ) in text
    assert "of kernel paths the server cannot report), so the original stays:" in text


def test_the_reason_more_trials_will_not_settle_a_verdict_is_said_once(tmp_path: Path) -> None:
    """The card wrote 'more trials will not settle this: More trials will not settle this: ...'."""
    base = measured_run("2026-09-01-base")
    base["runs/2026-09-01-base/results.csv"] = (
        "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n"
        + "".join(f"{t},1,{v},10,5\n" for t, v in enumerate([36.0, 36.4, 35.7, 36.2, 35.9], start=1))
    )
    cand = measured_run("2026-09-01-cand")
    cand["runs/2026-09-01-cand/results.csv"] = (
        "trial,concurrency,tokens_per_second,draft_tokens,draft_accepted\n1,1,36.1,10,5\n2,1,36.3,10,5\n"
    )
    claim = {
        "id": "same",
        "statement": "The candidate is as fast.",
        "metric": "tokens_per_second",
        "baseline": "2026-09-01-base",
        "candidate": "2026-09-01-cand",
        "at": {"concurrency": 1},
    }
    front = yaml.safe_dump({"title": "R", "date": "2026-09-02", "claims": [claim]}, sort_keys=False)
    report = {"site_src/reports/r.md": f"---\n{front}---\n\n<!-- claims -->\n"}
    text = page(generate(write_tree(tmp_path, tree(publication(base, cand, extra=report)))), "claims/same/index.md")
    (shown,) = re.findall(r"<dt>Trials needed per side</dt><dd>(.*?)</dd>", text)
    assert shown == (  # why, in its own words: +0.4% sits 0.6 points from +1.0%, not on it
        "More trials will not settle this: the estimate, +0.4%, lies between no change and the smallest change "
        "worth calling (±1.0%), so more trials would narrow the interval to exclude no change (never within noise) "
        "while it stays inside ±1.0% (never a change worth calling)."
    )
    assert shown.lower().count("will not settle") == 1


def test_the_methods_page_names_the_noise_floor_as_a_figure(tmp_path: Path) -> None:
    from generator.analysis import segmentation

    pages = generate(write_tree(tmp_path, tree(publication(measured_run()))))
    methods = pages["methods.md"].decode()
    assert f"It is never taken below {segmentation.FLOOR_SD:.1%} (on the log scale)" in methods
    assert "FLOOR_SD" not in methods
