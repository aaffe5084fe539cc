// The tutorial bot of docs/writing-a-bot.md in Java: it leads its lowest card.
//
// Build: javac -d classes *.java     Check: newmarket check -- java -cp classes Main
// Upload Main.java and Protocol.java (a zip or tar.gz) with the runtime "java".

import java.io.IOException;
import java.util.Comparator;

public final class Main extends Protocol.Bot {
    @Override
    public String name() {
        return "my-java-bot";
    }

    @Override
    public Object lead(Protocol.Request request, Protocol.State state) {
        // request.legal: the cards you may lead; state.rank(card): 0 for a suit's lowest.
        return request.legal.stream().min(Comparator.comparingInt(state::rank)).orElseThrow();
    }

    public static void main(String[] args) throws IOException {
        System.exit(Protocol.run(new Main()));
    }
}
