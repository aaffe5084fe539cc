// The leaderboard, kept current without a reload: every few seconds it asks /api/leaderboard
// and redraws the rows. Everything is set with textContent: names are chosen by participants.
(function () {
  "use strict";
  var body = document.querySelector("#board tbody");
  var status = document.getElementById("status");
  if (!body) return;

  function cell(row, text) {
    var td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function draw(board) {
    var rows = board.rows.map(function (r) {
      var tr = document.createElement("tr");
      tr.dataset.version = String(r.version);
      cell(tr, String(r.rank));
      cell(tr, r.rank_low === null ? "new" : r.rank_low + "–" + r.rank_high);
      var link = document.createElement("a");
      link.href = "/p/" + encodeURIComponent(r.participant);
      link.textContent = r.label;
      cell(tr, "").appendChild(link);
      var link_state = r.connected === null || r.connected === undefined ? "" :
        (r.connected ? " (connected)" : " (not connected)");
      cell(tr, r.runtime + link_state);
      cell(tr, r.score === null ? "" : String(r.score));
      cell(tr, r.low === null ? "new" : "[" + r.low + ", " + r.high + "]");
      cell(tr, String(r.groups));
      cell(tr, String(r.matches));
      cell(tr, r.playing ? "playing" : "retired");
      return tr;
    });
    body.replaceChildren.apply(body, rows);
    status.textContent = board.status + (board.paused ? " (paused)" : "") + " · " +
      board.matches + " matches played";
    document.body.dataset.matches = String(board.matches);
  }

  function poll() {
    fetch("/api/leaderboard", { headers: { "Accept": "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (board) { if (board) draw(board); })
      .catch(function () { /* the server restarts: try again at the next tick */ })
      .finally(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 2000);
})();
