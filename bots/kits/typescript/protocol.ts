// The Newmarket protocol (SPEC.md) for node, with no package: JSON.parse and
// JSON.stringify read and write the lines.
//
// A bot reads one JSON object per line on stdin and writes one per line on stdout
// (stderr is its log).  This file holds the message types, what the bot knows of its
// match (State), and the loop (run) that answers "hello", follows "match_start" and
// asks your Bot for each "request".  A bot answers only the decisions it cares about:
// every other one gets the request's "default", which is always legal.

export const PROTOCOL = 1;

export type Choice = string | number | number[];

/** A "request" (SPEC.md, section 7.4). */
export interface Request {
  type: "request";
  id: number;
  decision: "lead" | "stake" | "dead_hand" | "bid" | string;
  legal: string[];
  default: Choice;
  hand: string[];
  hand_sizes: number[];
  chips: number[];
  boodle: number[];
  kitty: number;
  time_left_ms: number;
  time_bank_ms: number;
  stake_total?: number;
  boodle_cards?: string[];
  min_bid?: number;
  max_bid?: number;
}

/** Any message of the referee's: its "type" and the fields that type has. */
export interface Message {
  type: string;
  [field: string]: unknown;
}

/** What a bot knows of the match it plays: its seat and the rank order. */
export class State {
  seat = 0;
  acesLow = false; // "rank_order": "aces_low" puts the Ace at the bottom of its suit

  /** A card's place in its suit, 0 (lowest) to 12 (the top card, where runs stop). */
  rank(card: string): number {
    return (this.acesLow ? "A23456789TJQK" : "23456789TJQKA").indexOf(card[0]);
  }
}

/** A bot: each decision's answer; a method left out answers with the request's default. */
export interface Bot {
  name: string;
  version?: string;
  lead?(request: Request, state: State): Choice;
  stake?(request: Request, state: State): Choice;
  deadHand?(request: Request, state: State): Choice;
  bid?(request: Request, state: State): Choice;
  onMatchStart?(message: Message, state: State): void;
  onEvents?(message: Message, state: State): void;
}

function decide(bot: Bot, request: Request, state: State): Choice {
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
export function run(bot: Bot): void {
  const readline = require("readline");
  const log = (text: string): void => {
    process.stderr.write(`${bot.name}: ${text}\n`);
  };
  const send = (message: object): void => {
    process.stdout.write(JSON.stringify(message) + "\n");
  };
  const state = new State();
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line: string) => {
    if (!line.trim()) return;
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch (error) {
      log(`skipped a line that is not JSON: ${error}`);
      return;
    }
    switch (message.type) {
      case "hello": {
        if (message.protocol !== PROTOCOL) {
          log(`the referee speaks protocol ${message.protocol}, this bot ${PROTOCOL}`);
          process.exit(2);
        }
        const ready: Record<string, unknown> = {
          type: "ready",
          name: bot.name,
          version: bot.version ?? "1.0",
          protocol: PROTOCOL,
        };
        if (process.env.NEWMARKET_TOKEN) ready.token = process.env.NEWMARKET_TOKEN;
        send(ready);
        break;
      }
      case "match_start": {
        const rules = (message.rules ?? {}) as { rank_order?: string };
        state.seat = message.seat as number;
        state.acesLow = rules.rank_order === "aces_low";
        if (bot.onMatchStart) bot.onMatchStart(message, state);
        break;
      }
      case "events":
        if (bot.onEvents) bot.onEvents(message, state);
        break;
      case "request": {
        const request = message as unknown as Request;
        let choice: Choice;
        try {
          choice = decide(bot, request, state);
        } catch (error) {
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
