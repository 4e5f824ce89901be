/* benchledger: draw every chart on the page with the locally bundled vega-embed.
   Runs on Material's document$ so instant navigation redraws; no network beyond
   this site's own chart JSON. */
(function () {
  "use strict";
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
          return window.vegaEmbed(node, spec, { actions: false, renderer: "svg" });
        })
        .then(function () { node.setAttribute("data-bl-drawn", "yes"); })
        .catch(function (error) {
          node.setAttribute("data-bl-drawn", "failed");
          node.textContent = "Chart could not be drawn (" + error.message + "); its numbers are in the table below.";
        });
    });
  }
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(draw);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
