"""The site's own assets: the chart bundle, the chart script, the stylesheet and the
JSON Schemas, as {path under docs_dir: bytes}."""

from __future__ import annotations

from importlib import resources

ASSETS = "assets/benchledger"
VEGA_JS = f"{ASSETS}/vega.js"
CHARTS_JS = f"{ASSETS}/charts.js"
COMPARE_JS = f"{ASSETS}/compare.js"
CSS = f"{ASSETS}/benchledger.css"
JAVASCRIPT = (VEGA_JS, CHARTS_JS, COMPARE_JS)
STYLESHEETS = (CSS,)


def asset_outputs(vega_bundle: bytes) -> dict[str, bytes]:
    """The assets every page loads, with the vega-embed bundle the caller supplies."""
    own = resources.files("generator.render") / "assets"
    schemas = {
        f"{ASSETS}/schemas/{entry.name}": entry.read_bytes()
        for entry in (resources.files("generator.format") / "schemas").iterdir()
        if entry.name.endswith(".json")
    }
    return schemas | {
        VEGA_JS: vega_bundle,
        CHARTS_JS: (own / "charts.js").read_bytes(),
        COMPARE_JS: (own / "compare.js").read_bytes(),
        CSS: (own / "benchledger.css").read_bytes(),
    }
