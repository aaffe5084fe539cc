// The tutorial bot of docs/writing-a-bot.md in TypeScript: it leads its lowest card.
//
// Build: tsc (reads tsconfig.json; writes main.js and protocol.js beside the .ts)
// Check: newmarket check -- node main.js
// Upload main.js and protocol.js (a zip or tar.gz) with the runtime "node".
import { Bot, Request, State, run } from "./protocol";

const myBot: Bot = {
  name: "my-ts-bot",
  lead(request: Request, state: State): string {
    // request.legal: the cards you may lead; state.rank(card): 0 for a suit's lowest.
    return request.legal.reduce((low, card) => (state.rank(card) < state.rank(low) ? card : low));
  },
};

run(myBot);
