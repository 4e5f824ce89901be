"""A field the format accepts but no page shows is a defect: every run.yaml field, set to a
value of its own, reaches the run's page."""

from __future__ import annotations

import html
from pathlib import Path

from helpers import generate, measured_run, publication, write_tree

RUN = "2026-09-01-every-field"


def test_every_run_yaml_field_reaches_the_run_page(tmp_path: Path) -> None:
    from generator.format.models import Exclusion, Metric, Rate, RunFile, Runner, Source

    fields = {
        "title": "Title-marker",
        "benchmark": "benchmark-marker",
        "setup": {"knob_marker": "knob-value-marker"},
        "metrics": {
            "tokens_per_second": {
                "unit": "unit-marker",
                "better": "higher",
                "description": "metric-description-marker",
            },
            "draft_tokens": {"unit": "tokens"},
            "draft_accepted": {"unit": "tokens"},
        },
        "rates": {
            "acceptance": {
                "numerator": "draft_accepted",
                "denominator": "draft_tokens",
                "description": "rate-description-marker",
            }
        },
        "warmup_trials": 7,
        "source": {
            "kind": "republished",
            "citation": "citation-marker",
            "url": "https://example.org/url-marker",
            "provenance": "provenance-marker",
        },
        "notes": "notes-marker",
        "excluded": [{"trial": 2, "at": {"concurrency": 8}, "reason": "reason-marker"}],
        "trial_unit": "unit-of-trial-marker",
        "incomplete": {"reason": "incomplete-reason-marker", "completed_trials": 10, "planned_trials": 12},
        "runner": {
            "kind": "kind-marker",
            "invocation": ["run", "openai", "--base-url", "argv-marker"],
            "base_url": "http://base-url-marker/v1",
            "model": "model-marker",
            "endpoint": "endpoint-marker",
            "prompts": "prompts-marker",
            "prompts_sha256": "sha256:prompts-hash-marker",
        },
        "extra_marker": "an unknown top-level key, kept",
    }
    files = publication(measured_run(RUN, **fields))
    page = generate(write_tree(tmp_path / "pub", files))[f"runs/{RUN}/index.md"].decode()
    shown = html.unescape(page)  # what a reader sees
    expected = [
        RUN,
        "2026-09-01",
        "Title-marker",
        "benchmark-marker",
        "knob_marker",
        "knob-value-marker",
        "concurrency",
        "unit-marker",
        "metric-description-marker",
        "Higher is better",
        "draft_accepted / draft_tokens",
        "rate-description-marker",
        "7 trials run and discarded",
        "republished from",
        "citation-marker",
        "https://example.org/url-marker",
        "provenance-marker",
        "notes-marker",
        "reason-marker",
        "unit-of-trial-marker",
        "Incomplete run: 10 of 12 trials completed; incomplete-reason-marker",
        "kind-marker",
        "benchledger run openai --base-url argv-marker",
        "http://base-url-marker/v1",
        "model-marker",
        "endpoint-marker",
        "prompts-marker",
        "sha256:prompts-hash-marker",
        "extra_marker",
    ]
    missing = [marker for marker in expected if marker not in shown]
    assert missing == []
    # The markers cover every field the models define (a new field needs a marker here).
    covered = {"schema", "id", "date", "conditions", "imported", *fields}
    assert set(RunFile.model_fields) <= covered | {"schema_"}
    assert set(Metric.model_fields) == {"unit", "better", "description"}
    assert set(Runner.model_fields) == set(fields["runner"])  # type: ignore[arg-type]
    assert set(Rate.model_fields) == {"numerator", "denominator", "better", "description"}
    assert set(Source.model_fields) == {"kind", "citation", "url", "provenance"}
    assert set(Exclusion.model_fields) == {"trial", "at", "reason"}
