"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
// The tutorial bot of docs/writing-a-bot.md in TypeScript: it leads its lowest card.
//
// Build: tsc (reads tsconfig.json; writes main.js and protocol.js beside the .ts)
// Check: newmarket check -- node main.js
// Upload main.js and protocol.js (a zip or tar.gz) with the runtime "node".
const protocol_1 = require("./protocol");
const myBot = {
    name: "my-ts-bot",
    lead(request, state) {
        // request.legal: the cards you may lead; state.rank(card): 0 for a suit's lowest.
        return request.legal.reduce((low, card) => (state.rank(card) < state.rank(low) ? card : low));
    },
};
(0, protocol_1.run)(myBot);
