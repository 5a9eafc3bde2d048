package io.flywheel.decode;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.util.Locale;

import io.flywheel.decode.json.JsonMessageDecoder;
import io.flywheel.decode.protobuf.ProtobufDecoder;
import io.flywheel.ros.cdr.CdrDecoder;
import io.flywheel.ros.msgdef.Dialect;
import io.flywheel.ros.msgdef.IdlParser;
import io.flywheel.ros.msgdef.MsgDefParser;
import io.flywheel.ros.ros1.Ros1Decoder;

/**
 * The decoder registry: picks a {@link MessageDecoder} from an MCAP channel's message encoding
 * and its schema's name, encoding and data (MCAP well-known encodings,
 * https://mcap.dev/spec/registry).
 *
 * <p>Supported:
 * <ul>
 *   <li>message encoding {@code cdr} with schema encoding {@code ros2msg} or {@code ros2idl}:
 *       {@link CdrDecoder};</li>
 *   <li>{@code json} with {@code jsonschema} or no schema: {@link JsonMessageDecoder};</li>
 *   <li>{@code protobuf} with {@code protobuf} (a FileDescriptorSet): {@link ProtobufDecoder};</li>
 *   <li>{@code ros1} with {@code ros1msg}: {@link Ros1Decoder}.</li>
 * </ul>
 * Callers cache the decoder per schema/channel: building one parses the schema.
 */
public final class Decoders {
    private Decoders() {}

    /**
     * Builds the decoder for one channel.
     *
     * @param messageEncoding the channel's message encoding, e.g. {@code "cdr"}
     * @param schemaName the schema's name, e.g. {@code "sensor_msgs/msg/Image"}
     * @param schemaEncoding the schema's encoding, e.g. {@code "ros2msg"}
     * @param schemaData the schema's bytes (UTF-8 text for ros2msg/ros2idl)
     * @return a decoder, immutable and thread-safe
     * @throws DecodeException when the combination of encodings is not supported (the message
     *     names both) or the schema cannot be parsed
     */
    public static MessageDecoder forSchema(String messageEncoding, String schemaName, String schemaEncoding,
                                           byte[] schemaData) throws DecodeException {
        String me = messageEncoding == null ? "" : messageEncoding.toLowerCase(Locale.ROOT);
        String se = schemaEncoding == null ? "" : schemaEncoding.toLowerCase(Locale.ROOT);
        switch (me) {
            case "cdr":
                switch (se) {
                    case "ros2msg":
                        return CdrDecoder.create(MsgDefParser.parse(schemaName, text(schemaName, schemaData), Dialect.ROS2));
                    case "ros2idl":
                        return CdrDecoder.create(IdlParser.parse(schemaName, text(schemaName, schemaData)));
                    default:
                        break;
                }
                break;
            case "json":
                if (se.isEmpty() || se.equals("jsonschema")) {
                    return JsonMessageDecoder.forSchema(schemaName, se.isEmpty() ? null : schemaData);
                }
                break;
            case "protobuf":
                if (se.equals("protobuf")) {
                    return ProtobufDecoder.forSchema(schemaName, schemaData);
                }
                break;
            case "ros1":
                if (se.equals("ros1msg")) {
                    return Ros1Decoder.forSchema(schemaName, schemaData);
                }
                break;
            default:
                break;
        }
        throw new DecodeException("no decoder for message encoding '" + messageEncoding + "' with schema encoding '"
                + schemaEncoding + "' (schema " + schemaName + "); supported: cdr with ros2msg or ros2idl, json with jsonschema or none,"
                + " protobuf with protobuf, ros1 with ros1msg");
    }

    /**
     * Decodes schema bytes as UTF-8 text.
     *
     * @throws DecodeException when the bytes are not valid UTF-8
     */
    static String text(String schemaName, byte[] data) throws DecodeException {
        if (data == null) {
            return "";
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(data)).toString();
        } catch (CharacterCodingException e) {
            throw new DecodeException("schema " + schemaName + ": schema data is not valid UTF-8", e);
        }
    }
}
