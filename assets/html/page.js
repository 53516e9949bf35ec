
(function () {
  "use strict";
  var views = window.kbenchViews = {};
  window.kbenchEmbed = function (id, spec) {
    var element = document.getElementById(id);
    if (!element) {
      var missing = new Error("no element #" + id + " for its plot");
      console.error("kbench: " + missing.message);
      return Promise.reject(missing);
    }
    return vegaEmbed(element, spec, { renderer: "svg", actions: false }).then(function (result) {
      views[id] = result.view;
      return result;
    }, function (error) {
      console.error("kbench: plot #" + id + " could not be drawn: " + (error && error.message ? error.message : error));
      throw error;
    });
  };
  Promise.allSettled(window.kbenchPlots.map(function (plot) {
    return window.kbenchEmbed(plot.id, plot.spec);
  })).then(function (outcomes) {
    var failed = outcomes.some(function (outcome) { return outcome.status !== "fulfilled"; });
    document.body.dataset.kbenchReady = failed ? "failed" : "1";
  });
  // A printed page shows what is folded away (lazy plots embed on opening).
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (details) { details.open = true; });
  });
})();
