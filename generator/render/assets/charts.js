/* benchledger: draw every chart on the page with the locally bundled vega-embed.
   Runs on Material's document$ so instant navigation redraws; no network beyond
   this site's own chart JSON. */
(function () {
  "use strict";
  function dark() {
    return document.body.getAttribute("data-md-color-scheme") === "slate";
  }
  function ink() {
    /* The page's own text colour (Material's --md-default-fg-color), for the text marks a
       theme leaves black, such as a forest plot's row labels. */
    var fg = getComputedStyle(document.body).getPropertyValue("--md-default-fg-color").trim();
    return fg || "#e2e4e9";
  }
  function embed(node, spec) {
    var options = { actions: false, renderer: "svg" };
    if (dark()) { options.theme = "dark"; options.config = { background: null, text: { color: ink() } }; }
    node.setAttribute("data-bl-scheme", dark() ? "dark" : "light");
    return window.vegaEmbed(node, spec, options);
  }
  function draw() {
    var nodes = document.querySelectorAll("div.bl-chart[data-bl-spec]");
    Array.prototype.forEach.call(nodes, function (node) {
      if (node.getAttribute("data-bl-drawn")) { return; }
      node.setAttribute("data-bl-drawn", "pending");
      var url = new URL(node.getAttribute("data-bl-spec"), window.location.href);
      if (url.origin !== window.location.origin) { return; }
      fetch(url.href)
        .then(function (response) {
          if (!response.ok) { throw new Error(response.status + " " + url.pathname); }
          return response.json();
        })
        .then(function (spec) {
          node.blSpec = spec;
          return embed(node, spec);
        })
        .then(function () { node.setAttribute("data-bl-drawn", "yes"); })
        .catch(function (error) {
          node.setAttribute("data-bl-drawn", "failed");
          node.textContent = "Chart could not be drawn (" + error.message + "); its numbers are in the table below.";
        });
    });
  }
  function redrawOnToggle() {
    /* Material's palette toggle sets data-md-color-scheme on <body>: charts follow it. */
    if (document.body.getAttribute("data-bl-watching")) { return; }
    document.body.setAttribute("data-bl-watching", "yes");
    new MutationObserver(function () {
      var nodes = document.querySelectorAll("div.bl-chart[data-bl-drawn='yes']");
      Array.prototype.forEach.call(nodes, function (node) {
        if (!node.blSpec || node.getAttribute("data-bl-scheme") === (dark() ? "dark" : "light")) { return; }
        embed(node, node.blSpec);
      });
    }).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
  }
  function filters() {
    var bar = document.querySelector(".bl-filter");
    if (!bar || bar.getAttribute("data-bl-ready")) { return; }
    bar.setAttribute("data-bl-ready", "yes");
    var table = bar.nextElementSibling;
    while (table && !table.querySelector("table")) { table = table.nextElementSibling; }
    if (!table) { return; }
    bar.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-bl-verdict]");
      if (!button) { return; }
      var wanted = button.getAttribute("data-bl-verdict");
      Array.prototype.forEach.call(bar.querySelectorAll("button"), function (b) {
        b.classList.toggle("md-button--primary", b === button);
      });
      Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (row) {
        var held = row.querySelector("[data-bl-headline]");
        var verdict = held ? held.getAttribute("data-bl-headline").replace(/-/g, " ") : "";
        row.hidden = wanted !== "all" && verdict !== wanted;
      });
    });
    var asked = /^#verdict=([a-z-]+)$/.exec(window.location.hash);
    if (asked) {
      var chosen = bar.querySelector('button[data-bl-verdict="' + asked[1].replace(/-/g, " ") + '"]');
      if (chosen) { chosen.click(); }
    }
  }
  function ready() { draw(); filters(); redrawOnToggle(); }
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(ready);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
