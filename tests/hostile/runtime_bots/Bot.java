// A newmarket bot in Java (the JDK alone): answers every request with the referee's own
// legal "default", copied as it came.  It exists to show that a real runtime, the JVM,
// starts and plays inside the sandbox from its own directory (tests/hostile/test_runtimes.py).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

public final class Bot {
    /** The top-level members of a JSON object, each value as its raw text. */
    static Map<String, String> members(String line) {
        Map<String, String> out = new HashMap<>();
        int depth = 0;
        int start = -1;
        String key = null;
        boolean inString = false;
        int stringStart = -1;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                    if (depth == 1 && key == null && start < 0) {
                        key = line.substring(stringStart + 1, i);
                    }
                }
                continue;
            }
            if (c == '"') {
                inString = true;
                stringStart = i;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (depth == 1 && key != null && start >= 0) {
                    out.put(key, line.substring(start, i).trim());
                }
                depth--;
            } else if (c == ':' && depth == 1 && key != null && start < 0) {
                start = i + 1;
            } else if (c == ',' && depth == 1 && key != null && start >= 0) {
                out.put(key, line.substring(start, i).trim());
                key = null;
                start = -1;
            }
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, String> message = members(line);
            String type = message.getOrDefault("type", "");
            if (type.equals("\"hello\"")) {
                System.out.println("{\"type\":\"ready\",\"name\":\"java\",\"protocol\":1,\"version\":\""
                        + System.getProperty("java.version") + "\"}");
            } else if (type.equals("\"request\"")) {
                System.out.println("{\"type\":\"reply\",\"id\":" + message.get("id")
                        + ",\"choice\":" + message.get("default") + "}");
            } else if (type.equals("\"shutdown\"")) {
                return;
            }
            System.out.flush();
        }
    }
}
