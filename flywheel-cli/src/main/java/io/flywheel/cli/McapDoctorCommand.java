package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import io.flywheel.mcap.McapDoctor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code flywheel mcap doctor FILE}: checks a file and says what is wrong and where. Exit 1 on errors. */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = "Check CRCs, indexes, statistics, message order, duplicate ids and a truncated tail."
                + " Exits 1 when an error is found.")
final class McapDoctorCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "MCAP file, or a rosbag2 sqlite3 bag (its folder or a .db3)")
    Path file;

    @picocli.CommandLine.Mixin
    JsonOutput json;

    @Override
    public Integer call() throws Exception {
        if (Rosbag2Inspect.applies(file)) return Rosbag2Inspect.doctor(file, json.enabled());
        McapDoctor.Report r = McapDoctor.check(file);
        PrintStream out = System.out;
        if (json.enabled()) {
            Json.print(out, r);
        } else {
            for (McapDoctor.Finding f : r.findings()) {
                out.println((f.severity() == McapDoctor.Severity.ERROR ? "error" : "warning")
                        + (f.offset() >= 0 ? " at byte " + f.offset() : "") + ": " + f.message());
            }
            if (r.suppressed() > 0) {
                out.println("... and " + r.suppressed() + " more finding(s)");
            }
            out.printf("%s: %s: %d message(s), %d chunk(s), %s; %d error(s), %d warning(s)%n",
                    r.ok() ? "ok" : "FAILED", r.file(), r.messages(), r.chunks(),
                    r.hasSummary() ? "summary present" : "no summary", r.errors(), r.warnings());
        }
        return r.ok() ? 0 : 1;
    }
}
