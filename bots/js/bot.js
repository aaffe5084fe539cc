#!/usr/bin/env node
// A Newmarket bot in plain JavaScript (node, no packages): leads from its longest suit.
//
// The protocol (SPEC.md) is one JSON object per line.  The referee says
// "hello"; we answer "ready"; then come matches ("match_start", "events",
// "request", "fault", "match_end"), any number of them, and finally
// "shutdown", when we exit with status 0.  Every request carries the legal
// choices ("legal") and a legal "default", so this bot never computes the
// rules: it only picks.
//
// Transport: stdin/stdout, or TCP when NEWMARKET_CONNECT=host:port is set
// (then NEWMARKET_TOKEN, if set, goes into "ready").  stderr is our log.
//
// Run it with: node bots/js/bot.js

"use strict";

const net = require("net");
const readline = require("readline");

const PROTOCOL = 1;
const NAME = "js-longest";
const VERSION = "1.0";

let acesLow = false; // from the match's rules: "rank_order": "aces_low" puts the Ace at the bottom

function log(text) {
  process.stderr.write(`${NAME}: ${text}\n`);
}

// A card is its rank then its suit: "TH" is the ten of hearts.
function rankOf(card) {
  return (acesLow ? "A23456789TJQK" : "23456789TJQKA").indexOf(card[0]);
}

// Lead from the suit where we hold the most cards; between equal suits, the lower card.
function chooseLead(request) {
  const count = {};
  for (const card of request.hand || []) count[card[1]] = (count[card[1]] || 0) + 1;
  let best = request.legal[0];
  for (const card of request.legal) {
    const longer = (count[card[1]] || 0) - (count[best[1]] || 0);
    if (longer > 0 || (longer === 0 && rankOf(card) < rankOf(best))) best = card;
  }
  return best;
}

// Stakes: stake_total chips spread evenly over the boodle cards, the extra chips on the first.
function spreadStakes(request) {
  const cards = (request.boodle_cards || []).length;
  const total = request.stake_total || 0;
  const amounts = [];
  for (let i = 0; i < cards; i++) amounts.push(Math.floor(total / cards) + (i < total % cards ? 1 : 0));
  return amounts;
}

function decide(request) {
  switch (request.decision) {
    case "lead":
      return chooseLead(request);
    case "stake":
      return spreadStakes(request);
    case "dead_hand": // keep our hand: the default for the dealer's choice
    case "bid": // no bid: the default for an auction
    default: // a decision kind from a later protocol version: the default is always legal
      return request.default;
  }
}

function handle(message, send) {
  switch (message.type) {
    case "hello": {
      if (message.protocol !== PROTOCOL) {
        log(`the referee speaks protocol ${message.protocol}, we speak ${PROTOCOL}`);
        process.exit(2); // SPEC.md, "Handshake": a message on stderr and a non-zero status
      }
      const ready = { type: "ready", name: NAME, version: VERSION, protocol: PROTOCOL };
      if (process.env.NEWMARKET_TOKEN) ready.token = process.env.NEWMARKET_TOKEN;
      send(ready);
      break;
    }
    case "match_start":
      acesLow = Boolean(message.rules && message.rules.rank_order === "aces_low");
      break;
    case "request": {
      let choice;
      try {
        choice = decide(message);
      } catch (error) {
        log(`could not decide (${error}); sending the default`);
        choice = message.default;
      }
      send({ type: "reply", id: message.id, choice: choice });
      break;
    }
    case "fault":
      log(`fault ${message.kind}: ${message.detail}`);
      break;
    case "shutdown":
      process.exit(0);
      break;
    default: // "events", "match_end", and message types from a later version: nothing to do
      break;
  }
}

function serve(input, output) {
  const send = (message) => output.write(JSON.stringify(message) + "\n");
  const lines = readline.createInterface({ input: input, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (!line.trim()) return;
    let message;
    try {
      message = JSON.parse(line);
    } catch (error) {
      log(`skipped a line that is not JSON: ${error.message}`);
      return;
    }
    if (message && typeof message === "object") handle(message, send);
  });
  lines.on("close", () => process.exit(0)); // the referee is gone
}

const address = process.env.NEWMARKET_CONNECT;
if (address) {
  const colon = address.lastIndexOf(":");
  const host = address.slice(0, colon).replace(/^\[|\]$/g, "");
  const socket = net.createConnection({ host: host, port: Number(address.slice(colon + 1)) });
  socket.setNoDelay(true);
  socket.on("connect", () => serve(socket, socket));
  socket.on("error", (error) => {
    log(`connection error: ${error.message}`);
    process.exit(1);
  });
} else {
  serve(process.stdin, process.stdout);
}
