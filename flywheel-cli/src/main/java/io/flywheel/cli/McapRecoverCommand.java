package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.mcap.McapRecover;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.McapWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code flywheel mcap recover IN OUT}: every readable message into a valid indexed file. */
@Command(name = "recover", mixinStandardHelpOptions = true,
        description = "Write every readable message, schema, channel, attachment and metadata record of a"
                + " damaged file into a new valid, indexed MCAP file.")
final class McapRecoverCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "IN", description = "damaged MCAP file")
    Path in;

    @Parameters(index = "1", paramLabel = "OUT", description = "file to write")
    Path out;

    @Option(names = "--compression", paramLabel = "NAME", description = "zstd (default), lz4 or none")
    String compression = "zstd";

    @Option(names = "--no-crc", description = "keep chunks whose CRC does not match (their bytes may be damaged)")
    boolean noCrc;

    @picocli.CommandLine.Mixin
    JsonOutput json;

    @Override
    public Integer call() throws Exception {
        McapWriter.Compression c = switch (compression) {
            case "zstd" -> McapWriter.Compression.ZSTD;
            case "lz4" -> McapWriter.Compression.LZ4;
            case "none", "" -> McapWriter.Compression.NONE;
            default -> throw Usage.error(spec, "unknown compression '" + compression + "': use zstd, lz4 or none");
        };
        McapRecover.Result r = McapRecover.recover(in, out, McapWriter.builder().compression(c), !noCrc);
        boolean nothingRecovered = r.messages() == 0 && !r.problems().isEmpty();
        PrintStream o = System.out;
        if (json.enabled()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("input", in.toString());
            m.put("output", out.toString());
            m.put("result", r);
            Json.print(o, m);
        } else {
            for (McapStreamReader.Problem p : r.problems()) {
                o.println("input problem at byte " + p.offset() + ": " + p.message());
            }
            if (!nothingRecovered) { // else nothing was written: said on stderr below
                o.printf("recovered %d message(s), %d channel(s), %d schema(s), %d attachment(s), %d metadata"
                                + " record(s) from %s (read whole up to byte %d of %d) into %s%n",
                        r.messages(), r.channels(), r.schemas(), r.attachments(), r.metadata(), in, r.readUpTo(),
                        r.inputBytes(), out);
            }
            if (!noCrc && r.problems().stream().anyMatch(p -> p.message().contains("CRC"))) {
                o.println("some chunks failed their CRC and were left out; --no-crc keeps them (their bytes may be damaged)");
            }
        }
        if (nothingRecovered) {
            java.nio.file.Files.deleteIfExists(out); // an empty file would look like a recovery
            System.err.println("flywheel mcap recover: no message could be recovered from " + in + "; " + out
                    + " was not written");
            return 1;
        }
        return 0;
    }
}
