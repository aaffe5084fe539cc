// The replay viewer: draws the steps that `newmarket report` computed from the match log.
// Everything shown comes from the page's JSON and is set with textContent, never as HTML,
// because bot names are chosen by untrusted bots.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("match-data").textContent);
  var frames = expand(data.steps);
  var names = data.names;
  var at = 0;

  // Each step holds what changed since the one before (referee.report.pages.page_replay):
  // "played+" the cards played since, "hands@" the hands of the seats whose hand changed.
  function expand(steps) {
    var out = [];
    steps.forEach(function (step) {
      var before = out.length ? out[out.length - 1] : {};
      var frame = {};
      Object.keys(before).forEach(function (key) { frame[key] = before[key]; });
      Object.keys(step).forEach(function (key) {
        if (key === "played+") {
          frame.played = before.played.concat(step[key]);
        } else if (key === "hands@") {
          frame.hands = before.hands.slice();
          Object.keys(step[key]).forEach(function (seat) {
            frame.hands[Number(seat)] = step[key][seat];
          });
        } else {
          frame[key] = step[key];
        }
      });
      out.push(frame);
    });
    return out;
  }

  function card(text, extra) {
    var span = document.createElement("span");
    var suit = text.charAt(text.length - 1);
    span.className = "card suit-" + suit + (extra ? " " + extra : "");
    span.dataset.card = text;
    span.textContent = data.pretty[text] || text;
    return span;
  }

  function cell(row, text, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    if (text !== undefined) td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function drawTable(frame, previous) {
    var table = document.createElement("table");
    table.className = "seats";
    var head = table.insertRow();
    ["seat", "bot", "chips", "", "cards"].forEach(function (h) {
      var th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    });
    var fresh = {};
    frame.fresh.forEach(function (c) { fresh[c] = true; });
    names.forEach(function (name, seat) {
      var row = table.insertRow();
      row.dataset.seat = seat;
      row.className = "status-" + frame.status[seat];
      cell(row, String(seat));
      var who = cell(row, name, "name");
      if (frame.status[seat] === "out") who.textContent = name + " (out)";
      if (frame.status[seat] === "dq") who.textContent = name + " (disqualified)";
      if (frame.dealer === seat) {
        var mark = document.createElement("span");
        mark.className = "dealer";
        mark.title = "the dealer of this hand";
        mark.textContent = " D";
        who.appendChild(mark);
      }
      cell(row, String(frame.chips[seat]), "chips");
      var change = frame.chips[seat] - previous.chips[seat];
      cell(row, change ? (change > 0 ? "+" : "") + change : "", change > 0 ? "gain" : "loss");
      var hand = cell(row, undefined, "hand");
      frame.hands[seat].forEach(function (c) { hand.appendChild(card(c)); });
    });
    var boodle = table.insertRow();
    boodle.className = "boodle";
    cell(boodle, "");
    cell(boodle, "boodle");
    var stacks = cell(boodle, undefined, "stacks");
    stacks.colSpan = 3;
    data.boodle_cards.forEach(function (c, i) {
      var stack = document.createElement("span");
      stack.className = "stack";
      stack.dataset.card = c;
      stack.appendChild(card(c));
      var chips = document.createElement("b");
      chips.textContent = " " + frame.boodle[i];
      stack.appendChild(chips);
      stacks.appendChild(stack);
    });
    var extra = [];
    if (frame.kitty) extra.push("kitty " + frame.kitty);
    if (frame.pot) extra.push("pot " + frame.pot);
    if (extra.length) {
      var more = document.createElement("span");
      more.className = "kitty";
      more.textContent = "  " + extra.join(" · ");
      stacks.appendChild(more);
    }
    var dead = table.insertRow();
    dead.className = "dead";
    cell(dead, "");
    cell(dead, "dead hand");
    var deadCards = cell(dead, undefined, "hand");
    deadCards.colSpan = 3;
    frame.dead.forEach(function (c) { deadCards.appendChild(card(c, "dead")); });
    return table;
  }

  function drawLayout(frame) {
    var box = document.createElement("div");
    var title = document.createElement("h3");
    title.textContent = "Played this hand";
    box.appendChild(title);
    var fresh = {};
    frame.fresh.forEach(function (c) { fresh[c] = true; });
    "SHDC".split("").forEach(function (suit) {
      var row = document.createElement("div");
      row.className = "suit-row";
      frame.played.forEach(function (pair) {
        var c = pair[1];
        if (c.charAt(c.length - 1) !== suit) return;
        var span = card(c, fresh[c] ? "fresh" : "");
        span.title = names[pair[0]] || ("seat " + pair[0]);
        row.appendChild(span);
      });
      box.appendChild(row);
    });
    return box;
  }

  function show(index) {
    at = Math.max(0, Math.min(frames.length - 1, index));
    var frame = frames[at];
    var previous = frames[Math.max(0, at - 1)];
    document.getElementById("position").textContent =
      (frame.hand > 0 ? "hand " + frame.hand : "before the first hand") +
      " · step " + (at + 1) + " of " + frames.length;
    var what = document.getElementById("what");
    what.replaceChildren();
    var list = document.createElement("ul");
    frame.lines.forEach(function (line) {
      var li = document.createElement("li");
      li.textContent = line;
      if (line.indexOf("fault: ") === 0) li.className = "fault-line";
      list.appendChild(li);
    });
    what.appendChild(list);
    document.getElementById("table").replaceChildren(drawTable(frame, previous));
    document.getElementById("layout").replaceChildren(drawLayout(frame));
    document.getElementById("replay").dataset.step = String(at);
  }

  function handStart(direction) {
    var hand = frames[at].hand;
    var i = at;
    if (direction > 0) {
      while (i < frames.length - 1 && frames[i].hand === hand) i++;
    } else {
      while (i > 0 && frames[i].hand === hand) i--;
      var previousHand = frames[i].hand;
      while (i > 0 && frames[i - 1].hand === previousHand) i--;
    }
    return i;
  }

  var keys = {
    ArrowRight: function () { return at + 1; },
    ArrowLeft: function () { return at - 1; },
    PageDown: function () { return handStart(1); },
    PageUp: function () { return handStart(-1); },
    Home: function () { return 0; },
    End: function () { return frames.length - 1; }
  };
  document.addEventListener("keydown", function (event) {
    var move = keys[event.key];
    if (!move || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    show(move());
  });
  var buttons = {
    first: keys.Home, prev: keys.ArrowLeft, next: keys.ArrowRight, last: keys.End,
    "prev-hand": keys.PageUp, "next-hand": keys.PageDown
  };
  Object.keys(buttons).forEach(function (id) {
    document.getElementById(id).addEventListener("click", function () { show(buttons[id]()); });
  });
  show(0);
})();
