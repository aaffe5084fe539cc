// The Newmarket protocol (SPEC.md) with nothing but Go's standard library.
//
// A bot reads one JSON object per line on stdin and writes one per line on stdout
// (stderr is its log).  Go's own encoding/json reads and writes the lines; this file
// holds the request (Request), what the bot knows of its match (State), and the loop
// (Run) that answers "hello", follows "match_start" and asks your Bot for each
// "request".  A bot answers only the decisions it cares about (Lead, say): every
// other one gets the request's "default", which is always legal.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const Protocol = 1

// Message is any message of the referee's: "type" and the fields that type has.
type Message struct {
	Type     string          `json:"type"`
	Protocol int             `json:"protocol"`
	Seat     int             `json:"seat"`
	Rules    json.RawMessage `json:"rules"`
	ID       int64           `json:"id"`
	Decision string          `json:"decision"`
	Legal    []string        `json:"legal"`
	Default  json.RawMessage `json:"default"`
	Hand     []string        `json:"hand"`
	Chips    []int           `json:"chips"`
	Events   json.RawMessage `json:"events"`
	Kind     string          `json:"kind"`
	Detail   string          `json:"detail"`
}

// Request is a "request" (SPEC.md, section 7.4); Message holds every field of it.
type Request struct {
	Message
}

// State is what a bot knows of the match it plays: its seat and the rank order.
type State struct {
	Seat    int
	AcesLow bool // "rank_order": "aces_low" puts the Ace at the bottom of its suit
}

// Rank is a card's place in its suit, 0 (lowest) to 12 (the top card, where runs stop).
func (s *State) Rank(card string) int {
	order := "23456789TJQKA"
	if s.AcesLow {
		order = "A23456789TJQK"
	}
	return strings.IndexByte(order, card[0])
}

// Bot answers requests: Decide returns the choice, or nil for the request's default.
type Bot interface {
	Name() string
	Decide(request *Request, state *State) any
}

// Run plays on stdin and stdout until "shutdown" or the end of input; the exit status.
func Run(bot Bot) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<17) // a line is at most 64 KiB (SPEC.md, section 4)
	out := bufio.NewWriter(os.Stdout)
	send := func(message any) {
		line, _ := json.Marshal(message)
		out.Write(append(line, '\n'))
		out.Flush() // a line the referee waits for: flushed
	}
	state := State{}
	for in.Scan() {
		line := in.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var message Message
		if err := json.Unmarshal(line, &message); err != nil {
			fmt.Fprintf(os.Stderr, "%s: skipped a line that is not JSON: %v\n", bot.Name(), err)
			continue
		}
		switch message.Type {
		case "hello":
			if message.Protocol != Protocol {
				fmt.Fprintf(os.Stderr, "%s: the referee speaks protocol %d, this bot %d\n",
					bot.Name(), message.Protocol, Protocol)
				return 2
			}
			ready := map[string]any{"type": "ready", "name": bot.Name(), "version": "1.0", "protocol": Protocol}
			if token, ok := os.LookupEnv("NEWMARKET_TOKEN"); ok {
				ready["token"] = token
			}
			send(ready)
		case "match_start":
			var rules struct {
				RankOrder string `json:"rank_order"`
			}
			_ = json.Unmarshal(message.Rules, &rules)
			state = State{Seat: message.Seat, AcesLow: rules.RankOrder == "aces_low"}
		case "request":
			var choice any = message.Default
			if decided := bot.Decide(&Request{message}, &state); decided != nil {
				choice = decided
			}
			send(map[string]any{"type": "reply", "id": message.ID, "choice": choice})
		case "fault":
			fmt.Fprintf(os.Stderr, "%s: fault %s: %s\n", bot.Name(), message.Kind, message.Detail)
		case "shutdown":
			return 0
		}
		// "events", "match_end", and message types of a later protocol version: nothing to do.
	}
	return 0 // the referee is gone
}
