package io.flywheel.ingest;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.ros.bag.BagMessage;
import io.flywheel.ros.bag.BagReader;
import io.flywheel.ros.bag.Connection;
import io.flywheel.ros.ros1.Ros1Decoder;

/**
 * Reads a ROS 1 bag (format 2.0) into a {@link Collector} with {@link BagReader} (log-time order through
 * the index; file order when the bag has no index) and {@link Ros1Decoder}. Header stamps come from
 * {@code header.stamp}; camera images get no raw locator (bag chunks are not addressed yet).
 */
final class Ros1BagSource {
    private Ros1BagSource() {}

    static void read(Path path, Collector out) throws IOException {
        Map<Integer, MessageDecoder> decoders = new HashMap<>();
        try (BagReader r = BagReader.open(path)) {
            for (Connection c : r.connections().values()) {
                out.stream(c.topic(), c.id(), c.type());
            }
            BagReader.Order order = r.hasIndex() ? BagReader.Order.LOG_TIME : BagReader.Order.FILE;
            r.read(BagReader.ReadOptions.builder().order(order).build(), (BagMessage m) -> {
                Connection c = m.connection();
                StreamBuilder sb = out.stream(c.topic(), c.id(), c.type());
                MessageDecoder dec = decoders.get(c.id());
                if (dec == null) {
                    try {
                        dec = Ros1Decoder.forDefinition(c.type(), c.messageDefinition());
                    } catch (DecodeException e) {
                        throw new IngestException(path.toString(), -1, "connection " + c.id() + " (" + c.topic() + ", "
                                + c.type() + "): message definition does not parse: " + e.getMessage(), e);
                    }
                    decoders.put(c.id(), dec);
                }
                Object tree;
                try {
                    tree = dec.decode(m.data());
                } catch (DecodeException e) {
                    throw new IngestException(path.toString(), -1, "message on " + c.topic() + " (" + c.type()
                            + ") at log time " + m.logTime() + " does not decode: " + e.getMessage(), e);
                }
                if (Values.hasStamp(tree)) sb.hasHeader(true);
                int i = sb.add(m.logTime(), Values.stamp(tree));
                McapSource.tree(sb, i, tree);
            });
        }
    }
}
