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
    /* The claims filter: a button shows one verdict's rows. The choice is kept in the address
       (#verdict=within-noise, history.replaceState), so a filtered view can be shared and
       reloaded; the front page links to these fragments. */
    var bar = document.querySelector(".bl-filter");
    if (!bar || bar.getAttribute("data-bl-ready")) { return; }
    bar.setAttribute("data-bl-ready", "yes");
    var table = bar.nextElementSibling;
    while (table && !table.querySelector("table")) { table = table.nextElementSibling; }
    if (!table) { return; }
    function show(button) {
      var wanted = button.getAttribute("data-bl-verdict");
      Array.prototype.forEach.call(bar.querySelectorAll("button"), function (b) {
        b.classList.toggle("md-button--primary", b === button);
      });
      Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (row) {
        var held = row.querySelector("[data-bl-headline]");
        var verdict = held ? held.getAttribute("data-bl-headline").replace(/-/g, " ") : "";
        row.hidden = wanted !== "all" && verdict !== wanted;
      });
      return wanted;
    }
    function asked() {
      var found = /^#verdict=([a-z-]+)$/.exec(window.location.hash);
      var wanted = found ? found[1].replace(/-/g, " ") : "all";
      return bar.querySelector('button[data-bl-verdict="' + wanted + '"]') || bar.querySelector('button[data-bl-verdict="all"]');
    }
    bar.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-bl-verdict]");
      if (!button) { return; }
      var wanted = show(button);
      var url = new URL(window.location.href);
      url.hash = wanted === "all" ? "" : "verdict=" + wanted.replace(/ /g, "-");
      window.history.replaceState(window.history.state, "", url.href);
    });
    bar.blShowAsked = function () { var button = asked(); if (button) { show(button); } };
    bar.blShowAsked();
    if (!window.blFilterWatching) {  /* once per window: instant navigation keeps the window */
      window.blFilterWatching = true;
      window.addEventListener("hashchange", function () {
        var current = document.querySelector(".bl-filter[data-bl-ready]");
        if (current && current.blShowAsked) { current.blShowAsked(); }
      });
    }
  }
  function pagedFilter() {
    /* A paged claims index lists each verdict on pages of its own (.bl-filter-links); an address
       made for the one-page index's buttons (#verdict=within-noise) goes to that verdict's page. */
    if (!window.blPagedWatching) {  /* once per window: a hash changed on the page goes too */
      window.blPagedWatching = true;
      window.addEventListener("hashchange", pagedFilter);
    }
    var bar = document.querySelector(".bl-filter-links");
    var found = /^#verdict=([a-z-]+)$/.exec(window.location.hash);
    if (!bar || !found) { return; }
    var link = bar.querySelector('a[data-bl-verdict="' + found[1].replace(/-/g, " ") + '"]');
    if (link) { window.location.replace(link.href); }
  }
  function ready() { draw(); filters(); pagedFilter(); redrawOnToggle(); }
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(ready);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
