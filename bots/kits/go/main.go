// The tutorial bot of docs/writing-a-bot.md in Go: it leads its lowest card.
//
// Build: go build -o bot .     Check: newmarket check -- ./bot
// Upload go.mod and the .go files (a zip or tar.gz) with the runtime "go".
package main

import "os"

type MyBot struct{}

func (MyBot) Name() string { return "my-go-bot" }

func (MyBot) Decide(request *Request, state *State) any {
	if request.Decision != "lead" || len(request.Legal) == 0 {
		return nil // every other decision: the request's default
	}
	// request.Legal: the cards you may lead; state.Rank(card): 0 for a suit's lowest.
	lowest := request.Legal[0]
	for _, card := range request.Legal[1:] {
		if state.Rank(card) < state.Rank(lowest) {
			lowest = card
		}
	}
	return lowest
}

func main() {
	os.Exit(Run(MyBot{}))
}
