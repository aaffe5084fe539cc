// The leaderboard's rating chart and head-to-head table, kept current without a reload:
// every 15 s the chart's SVG (made by the server with every name escaped, parsed here as
// SVG, which runs no script) and the matrix as JSON (set with textContent) are fetched again.
(function () {
  "use strict";
  var chart = document.getElementById("ratings");
  var matrix = document.getElementById("head-to-head");
  if (!chart || !matrix) return;

  function cell(tag, text) {
    var element = document.createElement(tag);
    element.textContent = text;
    return element;
  }

  function drawMatrix(data) {
    var head = document.createElement("tr");
    head.appendChild(cell("th", "row ahead of column"));
    data.versions.forEach(function (_name, i) { head.appendChild(cell("th", String(i + 1))); });
    matrix.tHead.replaceChildren(head);
    var rows = data.rows.map(function (cells, i) {
      var tr = document.createElement("tr");
      tr.appendChild(cell("td", (i + 1) + ". " + data.versions[i]));
      cells.forEach(function (text) { tr.appendChild(cell("td", text)); });
      return tr;
    });
    matrix.tBodies[0].replaceChildren.apply(matrix.tBodies[0], rows);
  }

  function drawChart(text) {
    var svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    if (svg.nodeName !== "svg") return;
    chart.replaceChildren(document.importNode(svg, true));
  }

  function poll() {
    Promise.all([
      fetch("/leaderboard/ratings.svg").then(function (r) { return r.status === 200 ? r.text() : null; }),
      fetch("/api/leaderboard/head-to-head").then(function (r) { return r.ok ? r.json() : null; })
    ]).then(function (found) {
      if (found[0]) drawChart(found[0]);
      if (found[1]) drawMatrix(found[1]);
    }).catch(function () { /* the server restarts: try again at the next tick */ })
      .finally(function () { setTimeout(poll, 15000); });
  }
  setTimeout(poll, 15000);
})();
