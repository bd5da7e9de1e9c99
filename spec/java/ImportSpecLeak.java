// spec/import_test.c's JVM: keeps known numbers of its own objects alive
// (a "leak" held by a static field, an array of buffers held by another),
// prints "ready", and exits when its stdin closes.  The argument, if any,
// is the number of sessions (default 1234; bench/import_bench.sh makes a
// large heap with it).
import java.util.ArrayList;
import java.util.List;

public class ImportSpecLeak {
    static class Session {
        long id;
        String name;

        Session(long i) {
            id = i;
            name = "session-" + i;
        }
    }

    static class Buffer {
        byte[] data = new byte[100];
        int used;
    }

    static final List<Session> LEAK = new ArrayList<>();
    static Buffer[] buffers = new Buffer[30];

    public static void main(String[] args) throws Exception {
        int sessions = args.length > 0 ? Integer.parseInt(args[0]) : 1234;
        for (int i = 0; i < sessions; i++)
            LEAK.add(new Session(i));
        for (int i = 0; i < buffers.length; i++)
            buffers[i] = new Buffer();
        System.out.println("ready");
        System.out.flush();
        while (System.in.read() >= 0)
            ;
    }
}
