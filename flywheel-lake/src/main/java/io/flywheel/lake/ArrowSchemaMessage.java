package io.flywheel.lake;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The Arrow IPC schema message of a list of columns (Arrow columnar format, "Encapsulated message format": a
 * continuation marker, the length, then the flatbuffer {@code Message} holding the {@code Schema}), as files that
 * carry an Arrow schema store it: Parquet writers put it base64-encoded under the footer key {@code ARROW:schema}, so
 * that Arrow readers get the exact types back (a {@code fixed_size_list} instead of Parquet's plain list).
 */
public final class ArrowSchemaMessage {
    private ArrowSchemaMessage() {}

    /**
     * @param columns the columns, in order ({@link ValueKind#OTHER} is not allowed)
     * @return the serialised message
     * @throws IllegalArgumentException when a column is of kind {@link ValueKind#OTHER}
     */
    public static byte[] serialize(List<ColumnSpec> columns) {
        List<Field> fields = new ArrayList<>();
        for (ColumnSpec c : columns) {
            fields.add(ArrowTypes.field(c));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            MessageSerializer.serialize(new WriteChannel(Channels.newChannel(out)), new Schema(fields));
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialise an Arrow schema in memory", e);
        }
        return out.toByteArray();
    }
}
