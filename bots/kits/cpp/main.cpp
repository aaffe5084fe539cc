// The tutorial bot of docs/writing-a-bot.md in C++: it leads its lowest card.
//
// Build: c++ -O2 -std=gnu++17 -o bot main.cpp     Check: newmarket check -- ./bot
// Upload main.cpp and protocol.hpp (a zip or tar.gz) with the runtime "cpp".
#include <algorithm>

#include "protocol.hpp"

class MyBot : public newmarket::Bot {
  public:
    std::string name() const override { return "my-cpp-bot"; }

    newmarket::Json lead(const newmarket::Request& request, const newmarket::State& state) override {
        // request.legal: the cards you may lead; state.rank(card): 0 for a suit's lowest.
        auto lowest = std::min_element(
            request.legal.begin(), request.legal.end(),
            [&](const std::string& a, const std::string& b) { return state.rank(a) < state.rank(b); });
        return newmarket::string_value(*lowest);
    }
};

int main() {
    MyBot bot;
    return newmarket::run(bot);
}
