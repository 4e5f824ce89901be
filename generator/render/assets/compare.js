/* benchledger: the compare page. A reader picks two runs; the page fetches each run's
   compare.json from this site and shows what differs in their environment and B / A with
   its interval for every figure both have, as `benchledger diff A B` does: Welch's t on the
   log scale, t quantiles from the build's table (scipy), linear in 1/df. Every text from a
   run goes into the page as text, never as markup. */
(function () {
  "use strict";
  var RUN_ID = /^[a-z0-9][a-z0-9._-]*$/;
  var LOG_MAX = Math.log(Number.MAX_VALUE);  /* stats.LOG_MAX */

  function element(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    return node;
  }
  function table(head, rows, kind) {
    /* On a phone each row stacks as "label value" lines (benchledger.css, .bl-stack). */
    var wrap = element("div", null, { "class": "bl-scroll bl-stack" });
    var t = element("table", null, { "data-bl-table": kind });
    var tr = element("tr");
    head.forEach(function (h) { tr.appendChild(element("th", h)); });
    t.appendChild(element("thead")).appendChild(tr);
    var body = t.appendChild(element("tbody"));
    rows.forEach(function (cells) {
      var row = element("tr");
      cells.forEach(function (c, i) {
        var cell = element("td", typeof c === "object" ? c.text : c, { "data-label": head[i] });
        if (typeof c === "object") { cell.className = c.className; }
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
    wrap.appendChild(t);
    return wrap;
  }
  function pct(ratio) {
    /* A ratio past 1e300 or nearer 0 than 1e-300 is out of range (format/signed.py's in_range):
       only an interval over trials hundreds of orders of magnitude apart gets there. */
    if (!(isFinite(ratio) && (ratio === 0 || (Math.abs(ratio) > 1e-300 && Math.abs(ratio) < 1e300)))) {
      return "out of range";
    }
    var v = (ratio - 1) * 100, shown = Math.abs(v).toFixed(1);
    if (v === 0) { return "0.0%"; }
    if (Math.abs(v) >= 1e15) { shown = Math.abs(v).toExponential(1); }  /* as signed(): '+1.0e+201%' */
    if (shown === "0.0") { shown = String(Number(Math.abs(v).toPrecision(1))); }  /* never "-0.0%" */
    return (v < 0 ? "-" : "+") + shown + "%";  /* generator/format/signed.py's change() */
  }
  function fetchJson(url) {
    var target = new URL(url, window.location.href);
    if (target.origin !== window.location.origin) { return Promise.reject(new Error("not this site")); }
    return fetch(target.href).then(function (response) {
      if (!response.ok) { throw new Error(response.status + " " + target.pathname); }
      return response.json();
    });
  }
  function tQuantile(listing, df) {
    var steps = listing.t_steps, u = isFinite(df) ? 1 / df : 0;
    var x = Math.min(u, 1) * steps, k = Math.floor(x), f = x - k;
    var low = listing.t[k], high = listing.t[Math.min(k + 1, steps)];
    return low + (high - low) * f;
  }
  function identical(values) {
    return values.every(function (v) { return v === values[0]; });
  }
  function logStats(values) {
    /* Identical trials: their log and a variance of 0 exactly (a sum rounds), as ratios._log_moments. */
    if (identical(values)) { return { n: values.length, mean: Math.log(values[0]), variance: 0 }; }
    var logs = values.map(Math.log), n = logs.length;
    var mean = logs.reduce(function (a, b) { return a + b; }, 0) / n;
    var ss = logs.reduce(function (a, b) { return a + (b - mean) * (b - mean); }, 0);
    return { n: n, mean: mean, variance: ss / (n - 1) };
  }
  function exp(x) {
    /* stats.exp: saturated inside the floats (never 0 or Infinity), so a bound past them reads
       "out of range" here as in benchledger diff. */
    return Math.exp(Math.max(-LOG_MAX, Math.min(LOG_MAX, x)));
  }
  function ratio(listing, a, b) {
    /* Welch on the log scale, as stats.ratio_interval and Ratio.bounds. */
    if (a.length < 2 || b.length < 2) { return null; }
    if (a.concat(b).some(function (v) { return !(v > 0); })) { return null; }
    var sa = logStats(a), sb = logStats(b);
    var va = sa.variance / sa.n, vb = sb.variance / sb.n, diff = sb.mean - sa.mean;
    var se = Math.sqrt(va + vb);
    if (se === 0) {  /* both sides constant: B / A as divided, with no interval (stats.Ratio.exact) */
      var exact = b[0] / a[0] > 0 && isFinite(b[0] / a[0]) ? b[0] / a[0] : Math.exp(diff);
      return { ratio: exact, low: exact, high: exact, exact: true };
    }
    var df = (va + vb) * (va + vb) / (va * va / (sa.n - 1) + vb * vb / (sb.n - 1));
    var half = tQuantile(listing, df) * se;
    return { ratio: exp(diff), low: exp(diff - half), high: exp(diff + half) };
  }
  function differences(a, b) {
    var keys = Object.keys(a.environment).concat(Object.keys(b.environment));
    keys = keys.filter(function (k, i) { return keys.indexOf(k) === i; }).sort();
    /* equal_as: Python's equality, so 8 and 8.0 match as they do for benchledger diff */
    return keys.filter(function (k) {
      return !(k in a.equal_as && k in b.equal_as && a.equal_as[k] === b.equal_as[k]);
    }).map(function (k) {
      return [k, k in a.environment ? a.environment[k] : a.absent, k in b.environment ? b.environment[k] : b.absent];
    });
  }
  function figures(listing, a, b) {
    var rows = [];
    if (JSON.stringify(a.conditions) !== JSON.stringify(b.conditions)) { return rows; }
    var theirs = Object.create(null);
    b.figures.forEach(function (f) { theirs[f.name + "\u0000" + JSON.stringify(f.at)] = f; });
    a.figures.forEach(function (f) {
      var other = theirs[f.name + "\u0000" + JSON.stringify(f.at)];
      if (!other) { return; }
      var r = a.reported || b.reported ? null : ratio(listing, f.values, other.values);
      rows.push([
        f.name, f.label, a.reported && b.reported ? "trials not reported" : count(a, f) + " / " + count(b, other),
        r ? pct(r.ratio) : a.reported || b.reported ? pointRatio(f, other) : "\u2013", r ? interval(listing, r) : noInterval(a, b),
        cue(f.better === other.better ? f.better : null, r)
      ]);
    });
    return rows;
  }
  function count(run, f) {
    /* A reported run's figure is one number a source gave, not trials (as pairs.n_shown and text.n_pair). */
    return run.reported ? "not reported" : String(f.values.length);
  }
  function pointRatio(f, other) {
    /* Two single figures still have a ratio; it carries no spread, and says so (as pairs.ratio_shown). */
    if (f.values.length !== 1 || other.values.length !== 1 || !(f.values[0] > 0) || !(other.values[0] >= 0)) {
      return "\u2013";
    }
    return pct(other.values[0] / f.values[0]) + " (as reported)";
  }
  function interval(listing, r) {
    /* An interval of no width is never printed: the words say why (stats.IDENTICAL_SIDES). */
    return r.exact ? listing.identical : "[" + pct(r.low) + ", " + pct(r.high) + "]";
  }
  function noInterval(a, b) {
    /* as pairs.no_interval */
    if (!a.reported && !b.reported) { return "no interval"; }
    return "no interval: " + (a.reported && b.reported ? "A and B are" : a.reported ? "A is" : "B is") + " reported, not trials";
  }
  function cue(better, r) {
    /* Better or worse for the reader, by the metric's `better`; said only when the interval
       excludes no change. The words carry it; the colour only repeats them. */
    if (!r) { return { text: "\u2013", className: "bl-cue" }; }
    if (!better) { return { text: "no direction declared", className: "bl-cue" }; }
    if (r.exact && r.ratio === 1) { return { text: "no change", className: "bl-cue" }; }
    if (r.low <= 1 && r.high >= 1) { return { text: "unclear: the interval includes no change", className: "bl-cue" }; }
    var good = (better === "higher") === (r.ratio > 1);
    return { text: (good ? "better" : "worse") + " (" + better + " is better)", className: "bl-cue bl-cue--" + (good ? "better" : "worse") };
  }
  function show(out, listing, a, b) {
    out.textContent = "";
    var diffs = differences(a, b);
    out.appendChild(element("h2", "Environment"));
    if (diffs.length) {
      out.appendChild(element("p", "What differs between " + a.id + " (A) and " + b.id + " (B):"));
      out.appendChild(table(["key", "A", "B"], diffs, "environment"));
    } else {
      out.appendChild(element("p", "The recorded manifests and setups of " + a.id + " and " + b.id + " match."));
    }
    out.appendChild(element("h2", "B / A"));
    var rows = figures(listing, a, b);
    if (!rows.length) {
      out.appendChild(element("p", "No figure in common: the runs share no metric at a shared condition."));
      return;
    }
    out.appendChild(element("p", "For every figure both runs have (" + listing.level +
      " intervals, one condition at a time):"));
    out.appendChild(table(["metric", "condition", "n (A / B)", "B / A", "interval", "change"], rows, "figures"));
  }
  function setup(root) {
    /* The form, its two pickers (every run, rendered by the build) and the status line are in
       the page; this fills them from the address (?a=RUN&b=RUN), keeps the address on the pair
       picked (history.replaceState) and shows the comparison once both are picked. */
    if (root.getAttribute("data-bl-ready")) { return; }
    root.setAttribute("data-bl-ready", "pending");
    var form = root.querySelector("form.bl-compare-form");
    var status = root.querySelector(".bl-compare-status");
    var out = root.querySelector(".bl-compare-result");
    if (!form || !status || !out) { return; }
    fetchJson(root.getAttribute("data-bl-runs")).then(function (listing) {
      var known = Object.create(null);  /* a run id may be "constructor" */
      listing.runs.forEach(function (r) { known[r[0]] = true; });
      if (root.getAttribute("data-bl-fill") === "yes") { fill(form, listing.runs); }
      function picked(name) { return form.elements[name].value.trim(); }
      function unknown(ids) {
        return ids.filter(function (id) { return id && (!RUN_ID.test(id) || !known[id]); });
      }
      function address() {
        var url = new URL(window.location.href), query = new URLSearchParams();
        ["a", "b"].forEach(function (name) { if (picked(name)) { query.set(name, picked(name)); } });
        url.search = query.toString() ? "?" + query.toString() : "";
        window.history.replaceState(window.history.state, "", url.href);
      }
      function go() {
        var a = picked("a"), b = picked("b");
        out.textContent = "";
        if (!a || !b) { status.textContent = a || b ? "Pick a run for " + (a ? "B." : "A.") : "Pick two runs."; return; }
        status.textContent = "Loading\u2026";
        Promise.all([a, b].map(function (id) { return fetchJson("../runs/" + id + "/compare.json"); }))
          .then(function (runs) {
            status.textContent = "";
            Array.prototype.forEach.call(document.querySelectorAll(".bl-compare-hint code"), function (code) {
              code.textContent = "benchledger diff " + a + " " + b;  /* the pair shown, for a terminal */
            });
            show(out, listing, runs[0], runs[1]);
            root.setAttribute("data-bl-ready", "yes");
          })
          .catch(function (error) { status.textContent = "Could not load the runs (" + error.message + ")."; });
      }
      form.addEventListener("submit", function (event) { event.preventDefault(); address(); go(); });
      form.addEventListener("change", function () { address(); go(); });
      var params = new URLSearchParams(window.location.search);
      var asked = [params.get("a") || "", params.get("b") || ""].map(function (id) { return id.trim(); });
      var bad = unknown(asked);
      if (bad.length) {
        /* The address is only ever text here: the id is shown with textContent, never as markup. */
        status.textContent = "No run " + bad[0] + " in this publication.";
        root.setAttribute("data-bl-ready", "yes");
        return;
      }
      form.elements.a.value = asked[0];
      form.elements.b.value = asked[1];
      if (asked[0] || asked[1]) { go(); }
      if (!(asked[0] && asked[1])) { root.setAttribute("data-bl-ready", "yes"); }
    }).catch(function (error) {
      root.setAttribute("data-bl-ready", "failed");
      status.textContent = "The run list could not be loaded (" + error.message + "); use benchledger diff A B.";
    });
  }
  function shown(title) {
    /* A title as the page writes one (render.text.text): tabs and line breaks as spaces, other
       control characters dropped. */
    return String(title).replace(/[\t\r\n]/g, " ").replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "");
  }
  function fill(form, runs) {
    /* Past 500 runs the page holds no options (it would weigh megabytes): each picker gets one
       per run from runs.json, newest first, as the page would have them: "title (id)", the id
       as the value. Text only, never markup: a title is the publisher's text. */
    ["a", "b"].forEach(function (name) {
      var select = form.elements[name], options = document.createDocumentFragment();
      runs.forEach(function (r) {
        var option = document.createElement("option");
        option.value = r[0];
        option.textContent = shown(r[1]) + " (" + r[0] + ")";
        options.appendChild(option);
      });
      select.appendChild(options);
    });
  }
  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("div.bl-compare[data-bl-runs]"), setup);
  }
  if (window.document$ && window.document$.subscribe) { window.document$.subscribe(start); }
  else if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); }
  else { start(); }
})();
