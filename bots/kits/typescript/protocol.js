"use strict";
// The Newmarket protocol (SPEC.md) for node, with no package: JSON.parse and
// JSON.stringify read and write the lines.
//
// A bot reads one JSON object per line on stdin and writes one per line on stdout
// (stderr is its log).  This file holds the message types, what the bot knows of its
// match (State), and the loop (run) that answers "hello", follows "match_start" and
// asks your Bot for each "request".  A bot answers only the decisions it cares about:
// every other one gets the request's "default", which is always legal.
Object.defineProperty(exports, "__esModule", { value: true });
exports.run = exports.State = exports.PROTOCOL = void 0;
exports.PROTOCOL = 1;
/** What a bot knows of the match it plays: its seat and the rank order. */
class State {
    constructor() {
        this.seat = 0;
        this.acesLow = false; // "rank_order": "aces_low" puts the Ace at the bottom of its suit
    }
    /** A card's place in its suit, 0 (lowest) to 12 (the top card, where runs stop). */
    rank(card) {
        return (this.acesLow ? "A23456789TJQK" : "23456789TJQKA").indexOf(card[0]);
    }
}
exports.State = State;
function decide(bot, request, state) {
    switch (request.decision) {
        case "lead":
            return bot.lead ? bot.lead(request, state) : request.default;
        case "stake":
            return bot.stake ? bot.stake(request, state) : request.default;
        case "dead_hand":
            return bot.deadHand ? bot.deadHand(request, state) : request.default;
        case "bid":
            return bot.bid ? bot.bid(request, state) : request.default;
        default: // a decision of a later protocol version
            return request.default;
    }
}
/** Play on stdin and stdout until "shutdown" (exit status 0) or the end of input. */
function run(bot) {
    const readline = require("readline");
    const log = (text) => {
        process.stderr.write(`${bot.name}: ${text}\n`);
    };
    const send = (message) => {
        process.stdout.write(JSON.stringify(message) + "\n");
    };
    const state = new State();
    const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    lines.on("line", (line) => {
        if (!line.trim())
            return;
        let message;
        try {
            message = JSON.parse(line);
        }
        catch (error) {
            log(`skipped a line that is not JSON: ${error}`);
            return;
        }
        switch (message.type) {
            case "hello": {
                if (message.protocol !== exports.PROTOCOL) {
                    log(`the referee speaks protocol ${message.protocol}, this bot ${exports.PROTOCOL}`);
                    process.exit(2);
                }
                const ready = {
                    type: "ready",
                    name: bot.name,
                    version: bot.version ?? "1.0",
                    protocol: exports.PROTOCOL,
                };
                if (process.env.NEWMARKET_TOKEN)
                    ready.token = process.env.NEWMARKET_TOKEN;
                send(ready);
                break;
            }
            case "match_start": {
                const rules = (message.rules ?? {});
                state.seat = message.seat;
                state.acesLow = rules.rank_order === "aces_low";
                if (bot.onMatchStart)
                    bot.onMatchStart(message, state);
                break;
            }
            case "events":
                if (bot.onEvents)
                    bot.onEvents(message, state);
                break;
            case "request": {
                const request = message;
                let choice;
                try {
                    choice = decide(bot, request, state);
                }
                catch (error) {
                    log(`could not decide (${error}); sending the default`);
                    choice = request.default;
                }
                send({ type: "reply", id: request.id, choice: choice });
                break;
            }
            case "fault":
                log(`fault ${message.kind}: ${message.detail}`);
                break;
            case "shutdown":
                process.exit(0);
            // falls through to nothing: exit does not return
            default: // "match_end", and message types of a later protocol version
                break;
        }
    });
    lines.on("close", () => process.exit(0)); // the referee is gone
}
exports.run = run;
