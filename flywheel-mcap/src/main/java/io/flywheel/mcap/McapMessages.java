package io.flywheel.mcap;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Messages of one MCAP file by the best path the file allows: through its summary with
 * {@link McapIndexedReader} (log-time order, only the chunks a selection needs) when the file has
 * one, else front to back with {@link McapStreamReader} (file order; a truncated file yields every
 * complete message before the break, then throws {@link McapFormatException} naming the offset).
 *
 * <p>Not thread-safe.
 */
public final class McapMessages implements Closeable {
    private final McapIndexedReader indexed;
    private final McapIndexedReader.MessageIterator indexedIt;
    private final McapStreamReader stream;
    private final McapIndexedReader.ReadOptions options;
    private final String name;
    private final Map<Integer, Record.Schema> schemas = new HashMap<>();
    private final Map<Integer, Record.Channel> channels = new HashMap<>();

    private McapMessages(String name, McapIndexedReader indexed, McapStreamReader stream,
                         McapIndexedReader.ReadOptions options) {
        this.name = name;
        this.indexed = indexed;
        this.stream = stream;
        this.options = options;
        this.indexedIt = indexed == null ? null : indexed.messages(options);
    }

    /**
     * @param file the MCAP file
     * @param options topics, log-time range and order (the order applies to indexed files only)
     * @return an open reader; close it
     * @throws McapFormatException when the file is not MCAP (bad magic)
     * @throws IOException when it cannot be read
     */
    public static McapMessages open(Path file, McapIndexedReader.ReadOptions options) throws IOException {
        McapIndexedReader indexed;
        try {
            indexed = McapIndexedReader.open(file);
        } catch (McapFormatException e) {
            // No usable summary (truncated, or written without one): read it front to back. A file
            // that is not MCAP at all fails there with the same kind of error.
            return new McapMessages(file.toString(), null, McapStreamReader.open(file), options);
        }
        return new McapMessages(file.toString(), indexed, null, options);
    }

    /** @return the topics of the channels seen so far (all of them for an indexed file, or after a full read) */
    public java.util.Set<String> topics() {
        java.util.Set<String> t = new java.util.HashSet<>();
        (indexed != null ? indexed.channels() : channels).values().forEach(c -> t.add(c.topic()));
        return t;
    }

    /** @return true when messages come through the summary, in the requested order */
    public boolean indexed() {
        return indexed != null;
    }

    /**
     * @return the next selected message, or null at the end
     * @throws McapFormatException when the file is corrupt or ends early (after every complete
     *     message before the break)
     */
    public MessageView next() throws IOException {
        if (indexedIt != null) {
            return indexedIt.hasNext() ? indexedIt.next() : null;
        }
        Record r;
        while ((r = stream.next()) != null) {
            if (r instanceof Record.Schema s) {
                schemas.put(s.id(), s);
            } else if (r instanceof Record.Channel c) {
                channels.put(c.id(), c);
            } else if (r instanceof Record.Message m) {
                Record.Channel c = channels.get(m.channelId());
                if (c == null) {
                    throw new McapFormatException(name, stream.position(),
                            "message on channel id " + m.channelId() + ", which no earlier Channel record defines");
                }
                if ((options.topics().isEmpty() || options.topics().contains(c.topic()))
                        && options.inRange(m.logTime())) {
                    return new MessageView(schemas.get(c.schemaId()), c, m);
                }
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        if (indexed != null) {
            indexed.close();
        }
        if (stream != null) {
            stream.close();
        }
    }
}
