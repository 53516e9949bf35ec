
(function () {
  "use strict";
  function number(value) {
    return value === null ? "n/a" : Number(value).toPrecision(6).replace(/\.?0+$/, "");
  }
  function samplesSpec(table, row) {
    var points = [], means = [];
    row.sides.forEach(function (side, p) {
      var profile = table.profiles[p];
      if (!side.s) return;
      side.s.forEach(function (session) {
        session[1].forEach(function (value, repeat) {
          points.push({ profile: profile, session: session[0], repeat: repeat + 1, value: value });
        });
      });
      if (side.m && side.m[0] !== null) {
        means.push({ profile: profile, mean: side.m[0], low: side.m[1] === null ? side.m[0] : side.m[1],
                     high: side.m[2] === null ? side.m[0] : side.m[2] });
      }
    });
    var sessions = 1;
    row.sides.forEach(function (side) { if (side.s) sessions = Math.max(sessions, side.s.length); });
    var x = { field: "profile", type: "nominal", sort: table.profiles, title: "swprofile, one column per session",
              axis: { labelAngle: 0 } };
    var y = { type: "quantitative", scale: { zero: false }, title: row.class };
    return {
      description: samplesText(table, row),
      // A fixed width, not a step: the points' x scale is split by session,
      // the means' is not, and two steps would conflict.
      width: Math.max(240, table.profiles.length * Math.max(80, 18 * sessions)),
      height: 260,
      layer: [
        { data: { name: "points", values: points },
          mark: { type: "point", filled: true, size: 36, opacity: 0.75 },
          encoding: { x: x, xOffset: { field: "session", type: "nominal" },
                      y: Object.assign({ field: "value" }, y),
                      color: { field: "session", type: "nominal", legend: null },
                      shape: { field: "session", type: "nominal", legend: null },
                      tooltip: [{ field: "profile" }, { field: "session" }, { field: "repeat" },
                                { field: "value", format: ".6~g" }] } },
        { data: { name: "means", values: means },
          mark: { type: "rule", strokeWidth: 2, color: "#1b1b1b" },
          encoding: { x: x, y: Object.assign({ field: "low" }, y), y2: { field: "high" } } },
        { data: { name: "means", values: means },
          mark: { type: "tick", thickness: 3, color: "#1b1b1b" },
          encoding: { x: x, y: Object.assign({ field: "mean" }, y),
                      tooltip: [{ field: "profile" }, { field: "mean", format: ".6~g", title: "mean" },
                                { field: "low", format: ".6~g", title: "CI low" },
                                { field: "high", format: ".6~g", title: "CI high" }] } }
      ]
    };
  }
  function samplesText(table, row) {
    var parts = [];
    row.sides.forEach(function (side, p) {
      if (!side.s) return;
      var sessions = side.s.map(function (session) {
        var sum = session[1].reduce(function (a, b) { return a + b; }, 0);
        return session[0] + ": " + session[1].length + " values, mean " + number(sum / session[1].length);
      });
      parts.push(table.profiles[p] + " (mean " + number(side.m[0]) + ", 95% CI " + number(side.m[1]) + " to " +
                 number(side.m[2]) + "): " + sessions.join("; "));
    });
    return "Samples of " + row.name + " " + row.class + " by session. " + parts.join(". ") + ".";
  }
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!details.matches || !details.matches("details[data-row]")) return;
    var t = details.dataset.table, r = details.dataset.row, id = "samples-" + t + "-" + r;
    var holder = document.getElementById("holder-" + id);
    if (!details.open) {
      if (holder) holder.hidden = true;
      return;
    }
    if (holder) {
      holder.hidden = false;
      return;
    }
    var table = window.kbenchData.tables[Number(t)], row = table.rows[Number(r)];
    holder = document.createElement("tr");
    holder.id = "holder-" + id;
    holder.className = "samples";
    var cell = document.createElement("td");
    cell.colSpan = table.columns;
    var plot = document.createElement("div");
    plot.id = id;
    plot.className = "plot";
    var alt = samplesText(table, row);
    plot.setAttribute("role", "img");
    plot.setAttribute("aria-label", alt);
    var text = document.createElement("p");
    text.className = "note";
    text.textContent = alt;
    cell.appendChild(plot);
    cell.appendChild(text);
    holder.appendChild(cell);
    details.closest("tr").after(holder);
    window.kbenchEmbed(id, samplesSpec(table, row)).catch(function () {});
  }, true);
})();
